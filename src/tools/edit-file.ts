import { promises as fs } from "node:fs";
import { tool, type ToolRunnableConfig } from "@langchain/core/tools";
import { createTwoFilesPatch } from "diff";
import { z } from "zod";
import { binaryKindFromExtension, detectBinary, formatSize } from "../workspace/files.js";
import { resolvePath } from "../workspace/paths.js";
import { openVerified, writeInWorkspace } from "../workspace/verified-open.js";
import { applyEdit, findPlaceholder, STRATEGY_TEXT, type EditFailure, type EditSuccess } from "../workspace/text-edit.js";
import type { ToolContext } from "./context.js";
import { toolErrorMessage } from "./errors.js";
import { fingerprintOf, threadOf } from "./read-tracker.js";

/** Files larger than this are not edited in memory; write_file or a command can still change them. */
export const MAX_EDIT_BYTES = 10 * 1024 * 1024;
/** Lines of context around the change in the snippet the model gets back. */
const SNIPPET_CONTEXT_LINES = 3;
/** Most lines of a snippet; a bigger change shows its start and end. */
const MAX_SNIPPET_LINES = 30;
/** Longest line shown in a snippet. */
const MAX_SNIPPET_LINE_CHARS = 500;
/** Lines of context in the unified diff. */
const DIFF_CONTEXT_LINES = 3;
/** Width of the right-aligned line number, as read_file prints it. */
const LINE_NUMBER_WIDTH = 6;

const DESCRIPTION = `Change part of a text file by replacing oldString with newString. Paths are relative to the workspace root.
- Read the file with read_file in this conversation first; if it changed since (a command, a formatter or the user), read it again.
- oldString must match exactly one place in the file: include enough surrounding lines to make it unique. With replaceAll: true every match is replaced (e.g. renaming a variable).
- Copy oldString from the file as it is, without the line numbers and tab read_file puts in front of each line. Line endings (\\n or \\r\\n), trailing spaces and indentation that differ are tolerated, and the result says how the text was matched.
- newString is written literally: never use placeholders such as "// ... existing code ..." or "rest of the file unchanged"; include the real text.
- The file keeps its line endings (an edit written with \\n in a \\r\\n file gets \\r\\n), its BOM and its final newline. The write is atomic.
- To create a file or rewrite most of one, use write_file. To delete text, pass an empty newString.
Returns the changed lines with their numbers.`;

export const editFileSchema = z.object({
  filePath: z.string().describe("Path of the file to change, relative to the workspace root."),
  oldString: z
    .string()
    .describe("The exact text to replace, copied from the file (without read_file's line numbers). Must not be empty."),
  newString: z.string().describe("The text to put in its place (empty to delete it). Must differ from oldString."),
  replaceAll: z
    .boolean()
    .optional()
    .describe("Replace every match instead of requiring exactly one (default false)."),
});

export type EditFileInput = z.infer<typeof editFileSchema>;

/** What the tool attaches to its result for the trace (never sent to the model). */
export interface EditArtifact {
  diff: string;
}

interface PlannedEdit {
  ok: true;
  absolute: string;
  display: string;
  before: string;
  edit: EditSuccess;
}

type Plan = PlannedEdit | { ok: false; message: string };

const refuse = (message: string): Plan => ({ ok: false, message });

function failureMessage(display: string, failure: EditFailure): string {
  switch (failure.reason) {
    case "empty_old":
      return "Error: oldString is empty. Pass the exact text to replace (to add text, include a neighbouring line in oldString and repeat it in newString). To create a file, use write_file.";
    case "no_change":
      return `Error: newString is the same as oldString, so ${display} would not change.`;
    case "ambiguous": {
      const lines = failure.lines ?? [];
      const where = lines.length > 10 ? `${lines.slice(0, 10).join(", ")}, …` : lines.join(", ");
      return `Error: oldString matches ${failure.count} places in ${display} (lines ${where}). Include more surrounding lines to make it unique, or set replaceAll: true to replace every one.`;
    }
    case "not_found":
      return `Error: oldString was not found in ${display} (tried an exact match, then ignoring line endings, trailing whitespace and indentation). ${failure.hint ?? "Read the file again and copy the text exactly."}`;
  }
}

/** Validates the call and works out the new content without writing anything. */
async function planEdit(ctx: ToolContext, input: EditFileInput, threadId: string | undefined): Promise<Plan> {
  if (input.oldString.trim() === "") return refuse(failureMessage(input.filePath, { ok: false, reason: "empty_old" }));
  if (input.oldString === input.newString) return refuse(failureMessage(input.filePath, { ok: false, reason: "no_change" }));
  const placeholder = findPlaceholder(input.newString, input.oldString);
  if (placeholder) {
    return refuse(
      `Error: newString contains placeholder text ("${placeholder}") that is not in oldString. edit_file writes newString literally, so the code it stands for would be deleted. Put the real text in newString, or make oldString smaller so newString needs no placeholder.`,
    );
  }
  const ws = await ctx.workspace();
  const target = await resolvePath(ws, input.filePath, { refuseHardLinks: true });
  const display = target.display;
  if (!target.exists) return refuse(`Error: ${display} does not exist. To create a file, use write_file.`);
  if (target.isDirectory) return refuse(`Error: ${display} is a directory; edit_file changes files.`);
  // Open first, then verify what was opened: a swapped folder cannot lead the read outside.
  const opened = await openVerified(ws, target.absolute, input.filePath, { refuseHardLinks: true });
  let bytes: Buffer;
  const { stat } = opened;
  try {
    if (!stat.isFile()) return refuse(`Error: ${display} is not a regular file (a device, socket or pipe); it cannot be edited.`);
    if (stat.size > MAX_EDIT_BYTES) {
      return refuse(`Error: ${display} is ${formatSize(stat.size)}, larger than edit_file handles (${formatSize(MAX_EDIT_BYTES)}). Use a command (e.g. sed) instead.`);
    }
    const binary = binaryKindFromExtension(target.absolute) ?? (await detectBinary(opened.path));
    if (binary) return refuse(`Error: ${display} is a binary file (${binary}); edit_file changes text only.`);
    bytes = await opened.handle.readFile();
  } finally {
    await opened.handle.close();
  }
  switch (ctx.reads.check(threadId, target.absolute, fingerprintOf(bytes, stat))) {
    case "unread":
      return refuse(`Error: ${display} has not been read in this conversation. Read it with read_file first, then edit it.`);
    case "changed":
      return refuse(`Error: ${display} has changed since you last read it (a command, a formatter or the user changed it). Read it again with read_file, then edit it.`);
  }
  const before = bytes.toString("utf8");
  if (!Buffer.from(before, "utf8").equals(bytes)) {
    return refuse(`Error: ${display} is not valid UTF-8 text; edit_file would corrupt it.`);
  }
  const edit = applyEdit(before, input.oldString, input.newString, input.replaceAll ?? false);
  if (!edit.ok) return refuse(failureMessage(display, edit));
  return { ok: true, absolute: target.absolute, display, before, edit };
}

/** A unified diff of the change, with "\r\n" and the BOM left out so it reads cleanly. */
export function unifiedDiff(display: string, before: string, after: string): string {
  const clean = (s: string) => s.replace(/^\uFEFF/, "").replace(/\r\n/g, "\n");
  const patch = createTwoFilesPatch(`a/${display}`, `b/${display}`, clean(before), clean(after), undefined, undefined, {
    context: DIFF_CONTEXT_LINES,
  });
  // Drop the "=====" separator line the library puts first; keep ---/+++ and the hunks.
  return patch.replace(/^=+\n/, "").replace(/\n$/, "");
}

function numbered(lines: string[], first: number): string[] {
  return lines.map((text, i) => {
    const cut = text.length > MAX_SNIPPET_LINE_CHARS ? `${text.slice(0, MAX_SNIPPET_LINE_CHARS)}… [line truncated]` : text;
    return `${String(first + i).padStart(LINE_NUMBER_WIDTH)}\t${cut}`;
  });
}

/** The first changed place with a few lines around it, numbered like read_file. */
function snippet(edit: EditSuccess): string {
  const body = edit.text.replace(/^\uFEFF/, "");
  const span = edit.spans[0]!;
  const lines = body.split(/\r?\n/);
  const lineAt = (index: number) => body.slice(0, index).split("\n").length - 1; // 0-based
  const firstChanged = lineAt(span.newStart);
  const lastChanged = Math.max(firstChanged, lineAt(Math.max(span.newStart, span.newEnd - 1)));
  const from = Math.max(0, firstChanged - SNIPPET_CONTEXT_LINES);
  const to = Math.min(lines.length - (body.endsWith("\n") ? 1 : 0), lastChanged + SNIPPET_CONTEXT_LINES + 1);
  if (to - from <= MAX_SNIPPET_LINES) return numbered(lines.slice(from, to), from + 1).join("\n");
  const half = Math.floor(MAX_SNIPPET_LINES / 2);
  return [
    ...numbered(lines.slice(from, from + half), from + 1),
    `   ... (${to - from - 2 * half} lines not shown)`,
    ...numbered(lines.slice(to - half, to), to - half + 1),
  ].join("\n");
}

async function editFile(ctx: ToolContext, input: EditFileInput, threadId: string | undefined): Promise<[string, EditArtifact | undefined]> {
  const plan = await planEdit(ctx, input, threadId);
  if (!plan.ok) return [plan.message, undefined];
  const { edit, display } = plan;
  const data = Buffer.from(edit.text, "utf8");
  await writeInWorkspace(await ctx.workspace(), plan.absolute, input.filePath, data);
  ctx.reads.record(threadId, plan.absolute, fingerprintOf(data, await fs.stat(plan.absolute)));
  const what = edit.count === 1 ? "1 occurrence" : `${edit.count} occurrences`;
  const shown = edit.count > 1 ? `The first change:\n` : "";
  const text = `Edited ${display}: replaced ${what} (${STRATEGY_TEXT[edit.strategy]}).\n${shown}${snippet(edit)}`;
  return [text, { diff: unifiedDiff(display, plan.before, edit.text) }];
}

/** For the approval prompt: the diff the edit would make, or why it would be refused. */
export async function previewEdit(ctx: ToolContext, input: EditFileInput, threadId?: string): Promise<string> {
  try {
    const plan = await planEdit(ctx, input, threadId);
    if (!plan.ok) return `(this edit would be refused: ${plan.message.replace(/^Error: /, "")})`;
    return unifiedDiff(plan.display, plan.before, plan.edit.text);
  } catch (err) {
    return `(this edit would fail: ${toolErrorMessage(err)})`;
  }
}

export function createEditFileTool(ctx: ToolContext) {
  const editTool = tool(
    async (input: EditFileInput, config?: ToolRunnableConfig): Promise<[string, EditArtifact | undefined]> => {
      try {
        return await editFile(ctx, input, threadOf(config));
      } catch (err) {
        return [toolErrorMessage(err), undefined];
      }
    },
    { name: "edit_file", description: DESCRIPTION, schema: editFileSchema, responseFormat: "content_and_artifact" },
  );
  return Object.assign(editTool, {
    /** The approval prompt shows this before the call runs. */
    preview: (args: Record<string, unknown>, threadId?: string) => {
      const parsed = editFileSchema.safeParse(args);
      return parsed.success ? previewEdit(ctx, parsed.data, threadId) : Promise.resolve(undefined);
    },
  });
}
