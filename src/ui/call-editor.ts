import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { ApprovalRequest } from "../contracts/events.js";
import { isArgumentsObject } from "../contracts/tools.js";
import { sameArguments } from "../guard/results.js";
import { readRegularTextSync } from "../regular-file.js";
import { escapeUnsafeJson } from "./output.js";

/**
 * [e]dit at the approval question: the call as text the person changes (a command as its text,
 * any other call as its arguments' JSON), in their editor or on the prompt line, read back into
 * arguments. Whether the edited call fits its tool and may run is the review's to decide
 * (policy/review.ts), for Studio's edits too; here only what a person typed is read.
 */

export type EditText = { kind: "command" | "json"; text: string };

/** What the person starts from: the last edit that was not used, or the call as shown. */
export function editableText(request: Pick<ApprovalRequest, "tool" | "args" | "editDraft">, inline: boolean): EditText {
  const args = request.editDraft ?? request.args;
  if (request.tool === "execute_command" && typeof args.command === "string")
    return { kind: "command", text: args.command };
  // On the prompt line the JSON must be one plain line: a string's line breaks and every control
  // or format character stay escaped in it (JSON.stringify leaves DEL, C1 and format characters raw).
  return { kind: "json", text: inline ? escapeUnsafeJson(JSON.stringify(args)) : `${JSON.stringify(args, null, 2)}\n` };
}

/**
 * The edit read back: the call's arguments, or why there is nothing to run yet. An empty or
 * unchanged edit is no answer (the question is asked again), so closing the editor without a
 * change never approves anything.
 */
export function readEdit(
  request: Pick<ApprovalRequest, "tool" | "args" | "editDraft">,
  kind: EditText["kind"],
  text: string,
): { args: Record<string, unknown> } | { again: string } {
  const base = request.editDraft ?? request.args;
  if (text.trim() === "") return { again: "The edit was empty: nothing changed." };
  if (kind === "command") {
    const command = text.replace(/\n+$/, "").trim();
    if (command === String(base.command ?? "").trim()) return { again: "No change made." };
    return { args: { ...base, command } };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    return { again: `The edit is not valid JSON (${(err as Error).message}); nothing ran.` };
  }
  if (!isArgumentsObject(parsed))
    return { again: `The edit must be a JSON object of ${request.tool}'s arguments; nothing ran.` };
  if (sameArguments(parsed, base)) return { again: "No change made." };
  return { args: parsed };
}

/**
 * Opens `text` in the person's editor (a command line as git runs $EDITOR: through sh, with the
 * file as its argument) on the terminal, and returns what they saved; the file is private and
 * removed after. The terminal must be free (no readline reading it) while the editor runs.
 */
export async function editInEditor(editor: string, edit: EditText): Promise<{ text: string } | { again: string }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "mini-cursor-edit-"));
  const file = path.join(dir, edit.kind === "command" ? "command.sh" : "arguments.json");
  try {
    writeFileSync(file, edit.kind === "command" ? `${edit.text}\n` : edit.text, { mode: 0o600 });
    const status = await new Promise<number | string>((resolve) => {
      const child = spawn("/bin/sh", ["-c", `${editor} "$1"`, "sh", file], { stdio: "inherit" });
      child.on("error", (err) => resolve(err.message));
      child.on("exit", (code, signal) => resolve(code ?? signal ?? 1));
    });
    if (status !== 0)
      return {
        again: `The editor (${editor}) ended with ${typeof status === "number" ? `status ${status}` : status}; the edit was not used.`,
      };
    // The editor may have put something else there: only a regular file is read, never waited on.
    return { text: readRegularTextSync(file) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
