import { z } from "zod";
import {
  binaryKindFromExtension,
  COUNT_LINES_MAX_BYTES,
  detectBinary,
  formatSize,
  LINE_NUMBER_WIDTH,
  readLineWindow,
  type WindowLine,
} from "../workspace/files.js";
import { resolvePath } from "../workspace/paths.js";
import { openVerified, type VerifiedFile } from "../workspace/verified-open.js";
import { openSavedOutput } from "../workspace/output-store.js";
import type { ToolContext } from "./context.js";
import { tool } from "@langchain/core/tools";
import { declared } from "../contracts/tools.js";
import { conversationOf, fingerprintFile } from "./read-tracker.js";
import { ToolFailure } from "../guard/failure.js";
import { READ_FILE_PEERS, withPeerArguments } from "./aliases.js";
import { wholeNumber } from "./numbers.js";

/** Lines shown when the model gives no limit. */
export const DEFAULT_READ_LINES = 2000;
/** Most lines one call returns; a larger limit is lowered to this (the footer says where to go on). */
export const MAX_READ_LINES = 2000;
/** Longer lines are cut here: minified bundles and data blobs would otherwise fill the context. */
export const MAX_LINE_CHARS = 2000;
/** Cap on the numbered text of one call, about 12k tokens. */
export const MAX_READ_BYTES = 50 * 1024;

const DESCRIPTION = `Read a text file from the workspace. Paths are relative to the workspace root; the one exception is the absolute path of saved command output that a result names.
Output is numbered like \`cat -n\` (line number, tab, text), followed by a footer such as
"[Lines 1-2000 of 5231. Continue with offset 2001.]" or "[Lines 1-3 of 3, end of file.]"; in a file over ${COUNT_LINES_MAX_BYTES / 1024 / 1024} MB lines past the page are not counted: "[Lines 1-2000 of at least 2001 (a 200 MB file; …)]".
- offset: 1-based line to start from (default 1). limit: number of lines (default and maximum ${MAX_READ_LINES}).
- To read further, call again with the offset the footer gives; files of any size can be read this way.
- Lines longer than ${MAX_LINE_CHARS} characters are cut and marked "… [line truncated, N characters]".
- One call returns at most ${MAX_READ_BYTES / 1024} KB; the footer says when it stopped early.
- The numbers and tab are not part of the file: leave them out when you write it back.
- Binary files (images, archives, executables, fonts, media, databases) are described by type and size, not shown.
- Use list_directory for directories.`;

const schemaObject = z.strictObject({
  filePath: z.string().describe("Path of the file, relative to the workspace root."),
  offset: wholeNumber(1, "offset must be a whole line number, 1 or more")
    .optional()
    .describe("1-based line number to start reading from (default 1)."),
  limit: wholeNumber(1, "limit must be a whole number of lines, 1 or more")
    .optional()
    .describe(`Number of lines to read (default ${MAX_READ_LINES}; more is read as ${MAX_READ_LINES}).`),
});

/** Other agents' names (file_path, Gemini CLI's start_line/end_line, ...) are accepted: aliases.ts. */
const schema = withPeerArguments(schemaObject, READ_FILE_PEERS);

type ReadFileInput = z.infer<typeof schemaObject>;

/**
 * Numbered lines that fit in the byte cap, stopping at the last whole line; `cat -n`: number
 * right-aligned, a tab, the text, and a marker where a long line was cut.
 */
function numberLines(lines: readonly WindowLine[], firstLine: number): { text: string[]; capped: boolean } {
  const text: string[] = [];
  let bytes = 0;
  for (const [i, line] of lines.entries()) {
    const marker = line.truncated ? `… [line truncated, ${line.chars} characters]` : "";
    const formatted = `${String(firstLine + i).padStart(LINE_NUMBER_WIDTH)}\t${line.text}${marker}`;
    bytes += Buffer.byteLength(formatted) + 1;
    if (bytes > MAX_READ_BYTES) return { text, capped: true };
    text.push(formatted);
  }
  return { text, capped: false };
}

/**
 * "[Lines 1-2000 of 5231. Continue with offset 2001.]" and its variants. A big file's lines are
 * not counted past the page (`total` undefined): "of at least 2001 (a 200 MB file …)".
 */
export function readFooter(first: number, last: number, total: number | undefined, capped: boolean, size = 0): string {
  const cap = capped ? `; output capped at ${MAX_READ_BYTES / 1024} KB` : "";
  if (total === undefined) {
    return `[Lines ${first}-${last} of at least ${last + 1} (a ${formatSize(size)} file; lines past this page are not counted)${cap}. Continue with offset ${last + 1}.]`;
  }
  const range = `Lines ${first}-${last} of ${total}`;
  if (last >= total) return `[${range}${cap}, end of file.]`;
  return `[${range}${cap}. Continue with offset ${last + 1}.]`;
}

async function readFile(ctx: ToolContext, input: ReadFileInput, threadId?: string): Promise<string> {
  let opened = await openSavedOutput(ctx.options.workspace, input.filePath);
  let [absolute, name] = [input.filePath, input.filePath];
  if (!opened) {
    const ws = await ctx.workspace();
    const target = await resolvePath(ws, input.filePath, { mustExist: true, refuseHardLinks: true });
    [absolute, name] = [target.absolute, target.display];
    if (target.isDirectory)
      throw new ToolFailure(`"${name}" is a directory, use list_directory to see what it contains.`);
    // Open first, then verify what was opened: a swapped folder cannot lead the read outside.
    opened = await openVerified(ws, target.absolute, input.filePath, { refuseHardLinks: true });
  }
  try {
    return await readOpened(ctx, input, threadId, absolute, name, opened);
  } finally {
    await opened.handle.close();
  }
}

async function readOpened(
  ctx: ToolContext,
  input: ReadFileInput,
  threadId: string | undefined,
  absolute: string,
  name: string,
  opened: VerifiedFile,
): Promise<string> {
  const { stat } = opened;
  if (stat.isDirectory())
    throw new ToolFailure(`"${name}" is a directory, use list_directory to see what it contains.`);
  // FIFOs and devices would block or never end.
  if (!stat.isFile())
    throw new ToolFailure(`"${name}" is not a regular file (a device, socket or pipe); it cannot be read.`);
  if (stat.size === 0) {
    ctx.reads.record(threadId, absolute, await fingerprintFile(opened.path));
    return `"${name}" is empty (0 bytes).`;
  }
  const binary = binaryKindFromExtension(absolute) ?? (await detectBinary(opened.path));
  if (binary) {
    return `"${name}" is a binary file (${binary}, ${formatSize(stat.size)}); read_file shows text only.`;
  }

  const offset = input.offset ?? 1;
  const limit = Math.min(input.limit ?? DEFAULT_READ_LINES, MAX_READ_LINES);
  const window = await readLineWindow(opened.path, {
    startLine: offset,
    maxLines: limit,
    maxLineChars: MAX_LINE_CHARS,
    maxBytes: MAX_READ_BYTES,
  });
  const total = window.totalLines;
  if (total !== undefined && offset > total) {
    const lines = total === 1 ? "1 line" : `${total} lines`;
    throw new ToolFailure(
      `Offset ${offset} is past the end of "${name}", which has ${lines}. Use an offset from 1 to ${total}.`,
    );
  }
  // What edit_file checks later: the model saw this file, as it is now.
  ctx.reads.record(threadId, absolute, await fingerprintFile(opened.path));
  const { text, capped } = numberLines(window.lines, offset);
  const last = offset + text.length - 1;
  return `${text.join("\n")}\n\n${readFooter(offset, last, total, capped, window.size)}`;
}

export function readFileTool(ctx: ToolContext) {
  return declared(
    tool((input, config) => readFile(ctx, input, conversationOf(config)), {
      name: "read_file",
      description: DESCRIPTION,
      schema,
    }),
    { kind: "read", paths: { filePath: "path" } },
  );
}
