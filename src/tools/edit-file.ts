import { conversationOf } from "./read-tracker.js";
import { promises as fsp } from "node:fs";
import { createTwoFilesPatch } from "diff";
import { z } from "zod";
import { countTextLines } from "../workspace/files.js";
import {
  applyEdit,
  findPlaceholder,
  REBASED_TEXT,
  STRATEGY_TEXT,
  type EditFailure,
  type EditRequest,
  type EditSuccess,
} from "../workspace/text-edit.js";
import { EDIT_FILE_PEERS, withPeerArguments } from "./aliases.js";
import type { ToolContext } from "./context.js";
import { tool } from "@langchain/core/tools";
import { declared } from "../contracts/tools.js";
import { withPathLocks } from "./path-lock.js";
import { commitText, loadEditTarget, MAX_EDIT_BYTES } from "./edit-target.js";
import { MAX_STREAM_EDIT_BYTES, streamEditIfBig } from "./edit-big.js";
import { formatSize, LINE_NUMBER_WIDTH } from "../workspace/files.js";
import { resolvePath } from "../workspace/paths.js";
import { toolErrorMessage, ToolFailure } from "../guard/failure.js";

/** Most entries of one `edits` list. */
export const MAX_EDITS = 50;
/** Lines of context around the change in the snippet the model gets back. */
const SNIPPET_CONTEXT_LINES = 3;
/** Most lines of a snippet; a bigger change shows its start and end. */
const MAX_SNIPPET_LINES = 30;
/** Longest line shown in a snippet. */
const MAX_SNIPPET_LINE_CHARS = 500;
/** Lines of context in the unified diff. */
const DIFF_CONTEXT_LINES = 3;

const DESCRIPTION = `Change part of a text file by replacing oldString with newString. Paths are relative to the workspace root.
- Read the file with read_file in this conversation first; if it changed since (a command, a formatter or the user), read it again.
- oldString must match exactly one place in the file: include enough surrounding lines to make it unique. With replaceAll: true every match is replaced (e.g. renaming a variable).
- Copy oldString from the file as it is, without the line numbers and tab read_file puts in front of each line. Line endings, trailing spaces, indentation, spacing inside lines, extra escaping (\\n for a newline) and Unicode punctuation typed as ASCII are tolerated when that still finds exactly one place; the result says how the text was matched.
- newString is written literally: never use placeholders such as "// ... existing code ...", "(rest of methods ...)" or "rest of the file unchanged"; write the code out.
- Several changes to one file: pass edits: [{ oldString, newString, replaceAll? }, ...] instead of oldString/newString (at most ${MAX_EDITS}). They apply in order, each to the result of the previous one, and all or none are written.
- An empty oldString creates a file that does not exist (or fills an empty one) with newString; on a file with content it is refused.
- The file keeps its line endings (an edit written with \\n in a \\r\\n file gets \\r\\n), its BOM and its final newline. The write is atomic.
- To rewrite most of a file, use write_file. To delete text, pass an empty newString.
- Files over ${MAX_EDIT_BYTES / 1024 / 1024} MB, up to ${MAX_STREAM_EDIT_BYTES / 1024 / 1024 / 1024} GB, are edited streaming with memory bounded: there oldString must match exactly (byte for byte, no tolerance but line endings: a \\n also matches the file's \\r\\n, and newString takes the file's line ending) and one oldString/newString per call (no edits list).
Returns the changed lines with their numbers.`;

const editSchema = z.strictObject({
  oldString: z.string().describe("The exact text to replace, copied from the file (without read_file's line numbers)."),
  newString: z.string().describe("The text to put in its place (empty to delete it)."),
  replaceAll: z.boolean().optional().describe("Replace every match instead of requiring exactly one (default false)."),
});

const editFileObject = z.strictObject({
  filePath: z.string().describe("Path of the file to change, relative to the workspace root."),
  oldString: z
    .string()
    .optional()
    .describe(
      "The exact text to replace, copied from the file (without read_file's line numbers). Empty only to create a missing or empty file.",
    ),
  newString: z
    .string()
    .optional()
    .describe("The text to put in its place (empty to delete it). Must differ from oldString."),
  replaceAll: z.boolean().optional().describe("Replace every match instead of requiring exactly one (default false)."),
  edits: z
    .array(editSchema)
    .optional()
    .describe(
      `Instead of oldString/newString: several replacements in this file, applied in order, all or none (at most ${MAX_EDITS}).`,
    ),
});

/** edit_file's arguments; Claude-style snake_case names (file_path, old_string, ...) are accepted too. */
export const editFileSchema = withPeerArguments(editFileObject, EDIT_FILE_PEERS);

export type EditFileInput = z.infer<typeof editFileObject>;

/** What the tool attaches to its result for the trace (never sent to the model). */
export interface EditArtifact {
  diff: string;
}

interface PlannedEdit {
  ok: true;
  absolute: string;
  display: string;
  before: string;
  after: string;
  /** The file was missing or empty and the first edit filled it (an empty oldString). */
  filled: boolean;
  existed: boolean;
  /** How each edit matched (one entry per edit). */
  results: EditSuccess[];
}

type Plan = PlannedEdit | { ok: false; message: string };

const refuse = (message: string): Plan => ({ ok: false, message });

function failureMessage(display: string, failure: EditFailure): string {
  switch (failure.reason) {
    case "empty_old":
      return `Error: oldString is empty, but ${display} has content. Pass the exact text to replace (to add text, include a neighbouring line in oldString and repeat it in newString). An empty oldString only creates a missing or empty file.`;
    case "no_change":
      return `Error: newString is the same as oldString, so ${display} would not change.`;
    case "ambiguous": {
      const lines = failure.lines ?? [];
      const where = lines.length > 10 ? `${lines.slice(0, 10).join(", ")}, …` : lines.join(", ");
      const how =
        failure.strategy && failure.strategy !== "exact"
          ? ` when ${STRATEGY_TEXT[failure.strategy].replace(/^matched /, "")}`
          : "";
      const fix =
        failure.strategy && RECOVERY_STRATEGIES.has(failure.strategy)
          ? "Copy oldString exactly from the file, with enough surrounding lines to make it unique."
          : "Include more surrounding lines to make it unique, or set replaceAll: true to replace every one.";
      return `Error: oldString matches ${failure.count} places in ${display}${how} (lines ${where}). ${fix}${failure.hint ? `\n${failure.hint}` : ""}`;
    }
    case "inconsistent_indentation":
      return `Error: oldString matches ${display} only when indentation is ignored, and its indentation differs from the file's in a way that cannot be carried over to newString. Copy oldString with the file's indentation.${failure.hint ? `\n${failure.hint}` : ""}`;
    case "not_found":
      return `Error: oldString was not found in ${display} (tried an exact match, then ignoring line endings, trailing whitespace, indentation, extra escaping, Unicode punctuation and spacing inside lines). ${failure.hint ?? "Read the file again and copy the text exactly."}`;
  }
}

const RECOVERY_STRATEGIES: ReadonlySet<string> = new Set([
  "unescaped",
  "unicode-punctuation",
  "inner-whitespace",
  "indentation-and-spacing",
]);

/** The edits a call asks for, or why the call is malformed. */
function requestedEdits(input: EditFileInput): EditRequest[] | string {
  // Some models fill every field: empty oldString/newString next to an edits list mean "not used".
  const single = (input.oldString ?? "") !== "" || (input.newString ?? "") !== "";
  if (input.edits !== undefined) {
    if (single) return "Error: pass either oldString/newString or edits, not both.";
    if (input.edits.length === 0) return "Error: edits is empty. Pass at least one { oldString, newString }.";
    if (input.edits.length > MAX_EDITS)
      return `Error: edits has ${input.edits.length} entries; at most ${MAX_EDITS} per call. Split the change, or use write_file.`;
    return input.edits;
  }
  if (input.oldString === undefined || input.newString === undefined) {
    return "Error: edit_file needs oldString and newString (or an edits list).";
  }
  return [{ oldString: input.oldString, newString: input.newString, replaceAll: input.replaceAll }];
}

/** Checks an edit can be applied at all, before the file is opened. */
function precheck(display: string, e: EditRequest): string | undefined {
  if (e.oldString === e.newString) return failureMessage(display, { ok: false, reason: "no_change" });
  const placeholder = findPlaceholder(e.newString, e.oldString);
  if (placeholder) {
    return `Error: newString contains placeholder text ("${placeholder}") that is not in oldString. edit_file writes newString literally, so the code it stands for would be deleted. Put the real text in newString, or make oldString smaller so newString needs no placeholder.`;
  }
  return undefined;
}

/** Validates the call and works out the new content without writing anything. */
async function planEdit(ctx: ToolContext, input: EditFileInput, threadId: string | undefined): Promise<Plan> {
  const edits = requestedEdits(input);
  if (typeof edits === "string") return refuse(edits);
  const many = edits.length > 1 || input.edits !== undefined;
  for (const [i, e] of edits.entries()) {
    const problem = precheck(input.filePath, e);
    if (problem) return refuse(many ? problem.replace(/^Error: /, `Error: edits[${i}]: `) : problem);
  }
  const ws = await ctx.workspace();
  const loaded = await loadEditTarget(ctx, ws, input.filePath, threadId, "edit_file");
  if (!loaded.ok) return refuse(loaded.message);
  const { absolute, display, exists, before } = loaded.target;
  let text = before;
  const results: EditSuccess[] = [];
  for (const [i, e] of edits.entries()) {
    if (e.oldString.trim() === "" && text.replace(/^\uFEFF/, "") === "") {
      // An empty oldString fills a missing or empty file, as Claude Code, opencode and Gemini CLI do.
      text = (text.startsWith("\uFEFF") ? "\uFEFF" : "") + e.newString;
      results.push({
        ok: true,
        strategy: "exact",
        count: 1,
        text,
        spans: [{ oldStart: 0, oldEnd: 0, newStart: 0, newEnd: e.newString.length }],
        eol: "\n",
      });
      continue;
    }
    if (!exists && i === 0)
      return refuse(
        `Error: ${display} does not exist. To create it, pass an empty oldString with the whole content as newString (or use write_file).`,
      );
    const result = applyEdit(text, e.oldString, e.newString, e.replaceAll ?? false);
    if (!result.ok) {
      const message = failureMessage(display, result);
      const prefix = many ? `Error: edits[${i}] failed, so none of the ${edits.length} edits was applied: ` : "";
      return refuse(prefix ? prefix + message.replace(/^Error: /, "") : message);
    }
    results.push(result);
    text = result.text;
  }
  if (text === before && exists) return refuse(failureMessage(display, { ok: false, reason: "no_change" }));
  const filled = edits[0]!.oldString.trim() === "" && before.replace(/^\uFEFF/, "") === "";
  return { ok: true, absolute, display, before, after: text, filled, existed: exists, results };
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
    const cut =
      text.length > MAX_SNIPPET_LINE_CHARS ? `${text.slice(0, MAX_SNIPPET_LINE_CHARS)}… [line truncated]` : text;
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

/** The diff's lines, capped for the model's result. */
function cappedDiff(diff: string): string {
  const lines = diff.split("\n").slice(2); // without the ---/+++ header
  if (lines.length <= 2 * MAX_SNIPPET_LINES) return lines.join("\n");
  return [
    ...lines.slice(0, 2 * MAX_SNIPPET_LINES),
    `   ... (${lines.length - 2 * MAX_SNIPPET_LINES} more diff lines not shown)`,
  ].join("\n");
}

async function editFile(
  ctx: ToolContext,
  input: EditFileInput,
  threadId: string | undefined,
): Promise<[string, EditArtifact | undefined]> {
  // Read, planned and written under the file's lock: a second edit of it waits and applies to this one's result.
  const plan = await withPathLocks(await ctx.workspace(), [input.filePath], async () => {
    const streamed = await streamEditIfBig(ctx, input, threadId);
    if (streamed !== undefined) return streamed;
    const planned = await planEdit(ctx, input, threadId);
    if (!planned.ok) throw new ToolFailure(planned.message);
    await commitText(ctx, threadId, planned.absolute, planned.after);
    return planned;
  });
  if (typeof plan === "string") return [plan, undefined];
  const { display, results } = plan;
  const diff = unifiedDiff(display, plan.before, plan.after);
  if (plan.filled && results.length === 1) {
    const lines = countTextLines(plan.after);
    return [
      `${plan.existed ? "Filled the empty file" : "Created"} ${display} (${lines} ${lines === 1 ? "line" : "lines"}, ${Buffer.byteLength(plan.after)} bytes) from newString.`,
      { diff },
    ];
  }
  if (results.length === 1 && input.edits === undefined) {
    const edit = results[0]!;
    const what = edit.count === 1 ? "1 occurrence" : `${edit.count} occurrences`;
    const shown = edit.count > 1 ? `The first change:\n` : "";
    return [
      `Edited ${display}: replaced ${what} (${STRATEGY_TEXT[edit.strategy]}${edit.rebased ? REBASED_TEXT : ""}).\n${shown}${snippet(edit)}`,
      { diff },
    ];
  }
  const how = results
    .map(
      (r, i) =>
        `${i + 1}: ${STRATEGY_TEXT[r.strategy]}${r.rebased ? REBASED_TEXT : ""}${r.count > 1 ? ` ×${r.count}` : ""}`,
    )
    .join("; ");
  const count = results.length === 1 ? "1 edit" : `${results.length} edits`;
  return [`Edited ${display}: applied ${count} (${how}).\n${cappedDiff(diff)}`, { diff }];
}

/** The size of a file edit_file would stream, if it is one. */
async function bigFileSize(ctx: ToolContext, filePath: string): Promise<number | undefined> {
  const target = await resolvePath(await ctx.workspace(), filePath).catch(() => undefined);
  if (!target?.exists || target.isDirectory) return undefined;
  const stat = await fsp.lstat(target.absolute).catch(() => undefined);
  return stat?.isFile() && stat.size > MAX_EDIT_BYTES ? stat.size : undefined;
}

/** For the approval prompt: the diff the edit would make, or why it would be refused. */
export async function previewEdit(ctx: ToolContext, input: EditFileInput, threadId?: string): Promise<string> {
  try {
    const size = await bigFileSize(ctx, input.filePath);
    if (size !== undefined)
      return `(a ${formatSize(size)} file: the edit is streamed, replacing oldString exactly)\n${unifiedDiff(input.filePath, input.oldString ?? "", input.newString ?? "")}`;
    const plan = await planEdit(ctx, input, threadId);
    if (!plan.ok) return `(this edit would be refused: ${plan.message.replace(/^Error: /, "")})`;
    return unifiedDiff(plan.display, plan.before, plan.after);
  } catch (err) {
    return `(this edit would fail: ${toolErrorMessage(err)})`;
  }
}

export function editFileTool(ctx: ToolContext) {
  return declared(
    tool((input, config) => editFile(ctx, input, conversationOf(config)), {
      name: "edit_file",
      description: DESCRIPTION,
      schema: editFileSchema,
      responseFormat: "content_and_artifact",
    }),
    { kind: "edit", paths: { filePath: "path" } },
  );
}
