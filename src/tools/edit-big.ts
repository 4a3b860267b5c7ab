import { randomBytes } from "node:crypto";
import { constants, promises as fs } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import path from "node:path";
import {
  binaryKindFromExtension,
  detectBinary,
  formatSize,
  LINE_NUMBER_WIDTH,
  sizeOverLimit,
} from "../workspace/files.js";
import { resolvePath, type Workspace } from "../workspace/paths.js";
import {
  canVerifyDescriptors,
  descriptorPath,
  openDirectoryVerified,
  openVerified,
  verifyDescriptor,
} from "../workspace/verified-open.js";
import type { ByteSplice } from "../workspace/patch-stream.js";
import type { ToolContext } from "./context.js";
import { MAX_EDIT_BYTES } from "./edit-target.js";
import { ToolFailure } from "../guard/failure.js";
import { fingerprintFile } from "./read-tracker.js";

/**
 * edit_file on a file over MAX_EDIT_BYTES (issue 30): streamed, with memory bounded by one chunk
 * whatever the size. One pass finds oldString (exactly, as bytes), a second copies the file
 * into a temp file beside it with the replacement, which then replaces the file atomically
 * through its verified folder, as every other write does.
 */

/** The biggest file edit_file streams; a bigger one is left to a command. */
export const MAX_STREAM_EDIT_BYTES = 1024 * 1024 * 1024;
/** Bytes read per step. */
const CHUNK_BYTES = 4 * 1024 * 1024;
/** Places listed when oldString matches more than one. */
const MAX_LISTED_MATCHES = 5;
/** Most replacements of one replaceAll in a streamed file. */
const MAX_STREAM_REPLACEMENTS = 100_000;
/** Lines of newString shown back. */
const MAX_SHOWN_LINES = 30;
const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;

export interface BigEditInput {
  filePath: string;
  oldString?: string;
  newString?: string;
  replaceAll?: boolean;
  edits?: unknown[];
}

/** Offsets of `needle` in the file, in order; stops after `limit`. */
async function findAll(fh: FileHandle, size: number, needle: Buffer, limit: number): Promise<number[]> {
  const found: number[] = [];
  const buf = Buffer.allocUnsafe(CHUNK_BYTES + needle.length);
  let carried = 0;
  let position = 0;
  while (position < size && found.length < limit) {
    const { bytesRead } = await fh.read(buf, carried, Math.min(CHUNK_BYTES, size - position), position);
    if (bytesRead === 0) break;
    const end = carried + bytesRead;
    const base = position - carried;
    for (let i = buf.indexOf(needle, 0); i !== -1 && i + needle.length <= end; i = buf.indexOf(needle, i + 1)) {
      if (found.length === 0 || base + i >= found[found.length - 1]! + needle.length) found.push(base + i);
      if (found.length >= limit) break;
    }
    position += bytesRead;
    // Keep the last needle.length - 1 bytes: a match may straddle two reads.
    carried = Math.min(needle.length - 1, end);
    buf.copy(buf, 0, end - carried, end);
  }
  return found;
}

/**
 * The line ending most lines of the file's first chunk use, as the in-memory edit decides it
 * for the whole text (workspace/text-edit.ts detectEol); "\n" when the chunk has none.
 */
async function leadingEol(fh: FileHandle, size: number): Promise<"\n" | "\r\n"> {
  const buf = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, size));
  const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
  let crlf = 0;
  let lf = 0;
  for (let i = buf.indexOf(NEWLINE); i !== -1 && i < bytesRead; i = buf.indexOf(NEWLINE, i + 1)) {
    if (i > 0 && buf[i - 1] === CARRIAGE_RETURN) crlf++;
    else lf++;
  }
  return crlf > lf ? "\r\n" : "\n";
}

/** `text` with every line ending made `eol`. */
const withEol = (text: string, eol: string) => text.replace(/\r?\n/g, eol);

/** 1-based line numbers of the given offsets (sorted). */
async function linesOf(fh: FileHandle, offsets: number[]): Promise<number[]> {
  const lines: number[] = [];
  const buf = Buffer.allocUnsafe(CHUNK_BYTES);
  let position = 0;
  let newlines = 0;
  for (const offset of offsets) {
    while (position < offset) {
      const { bytesRead } = await fh.read(buf, 0, Math.min(CHUNK_BYTES, offset - position), position);
      if (bytesRead === 0) break;
      for (let i = buf.indexOf(NEWLINE); i !== -1 && i < bytesRead; i = buf.indexOf(NEWLINE, i + 1)) newlines++;
      position += bytesRead;
    }
    lines.push(newlines + 1);
  }
  return lines;
}

/** Copies [from, to) of the source to the output, counting newlines for the first match's line. */
async function copyRange(src: FileHandle, out: FileHandle, from: number, to: number, buf: Buffer): Promise<void> {
  let position = from;
  while (position < to) {
    const { bytesRead } = await src.read(buf, 0, Math.min(buf.length, to - position), position);
    if (bytesRead === 0) throw new Error("the file became shorter while it was being edited");
    await out.write(buf, 0, bytesRead);
    position += bytesRead;
  }
}

/**
 * The copy with each splice's bytes in place of the range it names (in order), written beside the
 * file and renamed over it; a file changed since `stat` is not replaced. apply_patch's streamed
 * updates write through it too.
 */
export async function writeSpliced(
  ws: Workspace,
  absolute: string,
  userPath: string,
  src: FileHandle,
  stat: { size: number; mode: number; uid: number; gid: number; mtimeMs: number },
  splices: readonly ByteSplice[],
): Promise<void> {
  const dir = await openDirectoryVerified(ws, path.dirname(absolute), userPath);
  const inDir = (name: string) =>
    canVerifyDescriptors() ? descriptorPath(dir.fd, name) : path.join(path.dirname(absolute), name);
  const temp = inDir(`.mini-cursor-${randomBytes(6).toString("hex")}.tmp`);
  try {
    const out = await fs.open(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, stat.mode & 0o7777);
    try {
      const buf = Buffer.allocUnsafe(CHUNK_BYTES);
      let from = 0;
      for (const splice of splices) {
        await copyRange(src, out, from, splice.offset, buf);
        if (splice.bytes.length > 0) await out.write(splice.bytes);
        from = splice.offset + splice.length;
      }
      await copyRange(src, out, from, stat.size, buf);
      if (typeof process.getuid === "function" && process.getuid() === 0 && process.getuid() !== stat.uid)
        await out.chown(stat.uid, stat.gid).catch(() => undefined);
      await out.sync();
    } finally {
      await out.close();
    }
    // Written from what the first pass saw: a file changed meanwhile is not replaced.
    const now = await src.stat();
    if (now.size !== stat.size || now.mtimeMs !== stat.mtimeMs)
      throw new ToolFailure(
        `Error: ${userPath} changed while it was being edited (a command or the user wrote it). Read it again with read_file, then edit it.`,
      );
    await fs.rename(temp, inDir(path.basename(absolute)));
    verifyDescriptor(ws, dir.fd, userPath);
    await dir.sync().catch(() => undefined);
  } catch (err) {
    await fs.rm(temp, { force: true }).catch(() => undefined);
    throw err;
  } finally {
    await dir.close();
  }
}

function numbered(text: string, first: number): string {
  const lines = text.replace(/\r?\n$/, "").split(/\r?\n/);
  const shown = lines.slice(0, MAX_SHOWN_LINES).map((l, i) => `${String(first + i).padStart(LINE_NUMBER_WIDTH)}\t${l}`);
  if (lines.length > MAX_SHOWN_LINES) shown.push(`   ... (${lines.length - MAX_SHOWN_LINES} more lines of newString)`);
  return shown.join("\n");
}

/**
 * Streams the edit when `input.filePath` is a regular file over MAX_EDIT_BYTES; undefined for
 * any other file, which the in-memory edit handles. The caller holds the file's path lock.
 */
export async function streamEditIfBig(
  ctx: ToolContext,
  input: BigEditInput,
  threadId: string | undefined,
): Promise<string | undefined> {
  const ws = await ctx.workspace();
  const target = await resolvePath(ws, input.filePath, { refuseHardLinks: true });
  if (!target.exists || target.isDirectory) return undefined;
  const opened = await openVerified(ws, target.absolute, input.filePath, { refuseHardLinks: true });
  try {
    const { stat } = opened;
    if (!stat.isFile() || stat.size <= MAX_EDIT_BYTES) return undefined;
    const display = target.display;
    const size = formatSize(stat.size);
    if (stat.size > MAX_STREAM_EDIT_BYTES) {
      const sizes = sizeOverLimit(stat.size, MAX_STREAM_EDIT_BYTES);
      throw new ToolFailure(
        `Error: ${display} is ${sizes.size}, larger than edit_file handles (${sizes.limit}). Use a command (e.g. sed) instead.`,
      );
    }
    const binary = binaryKindFromExtension(target.absolute) ?? (await detectBinary(opened.path));
    if (binary) throw new ToolFailure(`Error: ${display} is a binary file (${binary}); edit_file changes text only.`);
    if (ctx.reads.check(threadId, target.absolute, { size: stat.size, mtimeMs: stat.mtimeMs }) !== "ok")
      throw new ToolFailure(
        `Error: ${display} has not been read in this conversation, or has changed since you last read it. Read it with read_file first, then edit it.`,
      );
    if (input.edits !== undefined || input.oldString === undefined || input.newString === undefined)
      throw new ToolFailure(
        `Error: ${display} is ${size}; a file over ${formatSize(MAX_EDIT_BYTES)} takes one oldString and newString per call (no edits list). Make the changes one call at a time.`,
      );
    if (input.oldString === "")
      throw new ToolFailure(
        `Error: oldString is empty, but ${display} has content. Copy the text to replace into oldString.`,
      );
    // read_file shows lines without their "\r": in a "\r\n" file, a "\n" of oldString stands for
    // the file's ending when the text as given is not there, and newString takes the file's ending.
    const eol = await leadingEol(opened.handle, stat.size);
    const limit = input.replaceAll ? MAX_STREAM_REPLACEMENTS + 1 : 2;
    let needle = Buffer.from(input.oldString, "utf8");
    let offsets = await findAll(opened.handle, stat.size, needle, limit);
    const inFileEol = Buffer.from(withEol(input.oldString, eol), "utf8");
    if (offsets.length === 0 && !inFileEol.equals(needle)) {
      needle = inFileEol;
      offsets = await findAll(opened.handle, stat.size, needle, limit);
    }
    if (offsets.length === 0)
      throw new ToolFailure(
        `Error: oldString was not found in ${display}. In a file over ${formatSize(MAX_EDIT_BYTES)} (this one is ${size}) it must match exactly, byte for byte (line endings aside): spaces and indentation as the file has them. Copy it from read_file's output without the line numbers.`,
      );
    if (offsets.length > MAX_STREAM_REPLACEMENTS)
      throw new ToolFailure(
        `Error: oldString matches more than ${MAX_STREAM_REPLACEMENTS} places in ${display}; replaceAll in a file this big stops there. Use a command (e.g. sed) instead.`,
      );
    if (offsets.length > 1 && !input.replaceAll) {
      const all = await findAll(opened.handle, stat.size, needle, MAX_LISTED_MATCHES + 1);
      const lines = await linesOf(opened.handle, all.slice(0, MAX_LISTED_MATCHES));
      const more = all.length > MAX_LISTED_MATCHES ? " and more" : "";
      throw new ToolFailure(
        `Error: oldString matches ${all.length > MAX_LISTED_MATCHES ? "more than " + MAX_LISTED_MATCHES : all.length} places in ${display} (lines ${lines.join(", ")}${more}). Include more surrounding lines to pick one, or pass replaceAll: true.`,
      );
    }
    const newBytes = Buffer.from(withEol(input.newString, eol), "utf8");
    if (needle.equals(newBytes))
      throw new ToolFailure("Error: oldString and newString are the same; nothing would change.");
    const [firstLine] = await linesOf(opened.handle, [offsets[0]!]);
    const splices = offsets.map((offset) => ({ offset, length: needle.length, bytes: newBytes }));
    await writeSpliced(ws, target.absolute, input.filePath, opened.handle, stat, splices);
    ctx.reads.record(threadId, target.absolute, await fingerprintFile(target.absolute));
    const what = offsets.length === 1 ? "1 occurrence" : `${offsets.length} occurrences`;
    return `Edited ${display} (${size}, streamed): replaced ${what} (exact match)${offsets.length > 1 ? "; the first" : ""} at line ${firstLine}:\n${numbered(input.newString, firstLine!)}`;
  } finally {
    await opened.handle.close();
  }
}
