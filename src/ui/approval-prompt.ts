import { createInterface } from "node:readline/promises";
import type { ApprovalRequest, ApprovalResponse, Approver } from "../agent/events.js";
import { UNATTENDED_RESPONSE } from "../policy/approval.js";
import { LOCAL_RULES_FILE } from "../security/rules.js";
import { editableText, editInEditor, readEdit } from "./call-editor.js";
import { diffLines, formatArgs } from "./render.js";
import { trackQuestion } from "./questions.js";
import { sanitizeForTerminal } from "./sanitize.js";

/** Width the command in a question is wrapped to (it is shown whole, never cut). */
export const QUESTION_WIDTH = 100;

/**
 * Maps what a person typed to a decision; anything that is not one of the offered letters is
 * feedback (a denial with a reason). "always" answers are only accepted where they are offered
 * (undefined: ask again). "edit": the person wants to change the call first (the approver then
 * opens it for editing).
 */
export function parseApprovalAnswer(
  answer: string,
  request?: Pick<ApprovalRequest, "asksEveryTime" | "alwaysRules">,
): ApprovalResponse | "edit" | undefined {
  const text = answer.trim();
  if (text === "") return undefined;
  const lower = text.toLowerCase();
  if (["y", "yes", "是", "好"].includes(lower)) return { decision: "approve" };
  if (["n", "no", "否", "不"].includes(lower)) return { decision: "deny" };
  if (["e", "edit"].includes(lower)) return "edit";
  if (["a", "always"].includes(lower)) return request?.asksEveryTime ? undefined : { decision: "always" };
  if (["p", "project"].includes(lower))
    return request?.asksEveryTime || !request?.alwaysRules?.length ? undefined : { decision: "always-project" };
  return { decision: "deny", feedback: text };
}

/** Splits text into lines of at most `width` characters, keeping its own line breaks. */
export function wrapText(text: string, width = QUESTION_WIDTH): string[] {
  const out: string[] = [];
  for (const line of text.split("\n")) {
    if (line.length === 0) out.push("");
    for (let i = 0; i < line.length; i += width) out.push(line.slice(i, i + width));
  }
  return out;
}

/** The question as printed: the whole command (wrapped, control characters made visible), why, and the choices. */
export function formatQuestion(request: ApprovalRequest): { text: string; prompt: string } {
  const lines: string[] = [];
  if (request.askedBy) lines.push(`  ⎿ [${sanitizeForTerminal(request.askedBy)}] asks:`);
  const command =
    request.tool === "execute_command" && typeof request.args.command === "string" ? request.args.command : undefined;
  if (command !== undefined) {
    lines.push(
      `? Allow execute_command${typeof request.args.workingDirectory === "string" ? ` in ${sanitizeForTerminal(request.args.workingDirectory)}` : ""}${request.edited ? ", as you edited it" : ""}:`,
    );
    for (const l of wrapText(sanitizeForTerminal(command))) lines.push(`  │ ${l}`);
  } else {
    lines.push(
      `? Allow ${sanitizeForTerminal(request.tool)}${request.edited ? " (as you edited it)" : ""} ${formatArgs(request.args)}`,
    );
  }
  lines.push(`  (${sanitizeForTerminal(request.reason)})`);
  if (request.editError) lines.push(`  Your edit was not used: ${sanitizeForTerminal(request.editError)}`);
  const choices = ["[y]es", "[n]o", "[e]dit"];
  if (request.asksEveryTime) {
    lines.push("  This call asks every time; it cannot be allowed for later.");
  } else if (request.alwaysRules?.length) {
    const rules = request.alwaysRules.map((r) => `\`${sanitizeForTerminal(r)}\``).join(", ");
    choices.push(`[a]lways this session (${rules})`, `[p]roject: save the same allow rules in ${LOCAL_RULES_FILE}`);
  } else {
    choices.push(`[a]lways this session (${sanitizeForTerminal(request.tool)})`);
  }
  return { text: `\n${lines.join("\n")}\n`, prompt: `  ${choices.join(" / ")} / or type feedback: ` };
}

/** How a question's answer is read from the terminal; null when Ctrl-C or the end of input cancelled it. */
function readAnswer(prompt: string, prefill?: string): Promise<string | null> {
  const rl = trackQuestion(createInterface({ input: process.stdin, output: process.stdout, terminal: true }));
  return new Promise<string | null>((resolve) => {
    rl.once("SIGINT", () => resolve(null));
    rl.once("close", () => resolve(null));
    rl.question(prompt).then(resolve, () => resolve(null));
    // The text to edit, on the line as if typed: the cursor at its end, every key working.
    if (prefill) rl.write(prefill);
  }).finally(() => rl.close());
}

/**
 * [e]dit: the call as text in the person's editor, or on the prompt line without one; the
 * arguments it gives, or why the question is asked again (said on the terminal), or null when
 * Ctrl-C cancelled it.
 */
async function editCall(
  request: ApprovalRequest,
  editor: string | undefined,
): Promise<ApprovalResponse | string | null> {
  const edit = editableText(request, !editor);
  let text: string;
  if (editor) {
    const edited = await editInEditor(editor, edit);
    if ("again" in edited) return edited.again;
    text = edited.text;
  } else {
    if (edit.text.includes("\n"))
      return "This command has several lines: set $VISUAL or $EDITOR to edit it in your editor.";
    const answer = await readAnswer(
      edit.kind === "command" ? "  edit command› " : "  edit arguments (JSON)› ",
      edit.text,
    );
    if (answer === null) return null;
    text = answer;
  }
  const read = readEdit(request, edit.kind, text);
  return "again" in read ? read.again : { decision: "edit", args: read.args };
}

export interface TerminalApproverOptions {
  /** The person's editor for [e]dit (settings.editor); without one the call is edited on the prompt line. */
  editor?: string;
}

/** Asks on the terminal; `before` lets the renderer stop its spinner first. */
export function createTerminalApprover(
  before: () => void,
  onCancel?: () => void,
  options: TerminalApproverOptions = {},
): Approver {
  return async (request: ApprovalRequest) => {
    before();
    const question = formatQuestion(request);
    process.stdout.write(question.text);
    // What an edit would change, as a unified diff, so the answer is an informed one.
    if (request.preview)
      process.stdout.write(
        `${diffLines(request.preview)
          .map((l) => `    ${sanitizeForTerminal(l)}`)
          .join("\n")}\n`,
      );
    const cancelled = (): ApprovalResponse => {
      // The question's line stays as it was typed; what follows starts on a new line.
      process.stdout.write("\n");
      // Ctrl-C at the question cancels the whole turn, as it does anywhere else.
      onCancel?.();
      return { decision: "deny", feedback: "the user cancelled the question" };
    };
    for (;;) {
      const answer = await readAnswer(question.prompt);
      if (answer === null) return cancelled();
      const response = parseApprovalAnswer(answer, request);
      if (response !== "edit") {
        if (response) return response;
        continue;
      }
      const edited = await editCall(request, options.editor);
      if (edited === null) return cancelled();
      if (typeof edited !== "string") return edited;
      process.stdout.write(`  ${sanitizeForTerminal(edited)}\n`);
    }
  };
}

/** Without a terminal nobody can be asked: the call is not run (the engine says what would allow it). */
export const nonInteractiveApprover: Approver = async () => ({ ...UNATTENDED_RESPONSE });
