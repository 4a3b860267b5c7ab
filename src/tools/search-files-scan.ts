import { fstatSync, readSync } from "node:fs";
import { BINARY_SNIFF_BYTES, binaryKindFromContent } from "../workspace/files.js";

/**
 * Searching one file for search_files (issue 30): a small file is read whole with synchronous
 * calls into a reused buffer; a bigger one is streamed in chunks of whole lines, so a file of
 * any size is searched with memory bounded by the chunk and the longest line.
 */

/** Files up to this size are read whole in one synchronous call. */
export const SMALL_FILE_BYTES = 1024 * 1024;
/** Bytes read per step when streaming a bigger file. */
const CHUNK_BYTES = 4 * 1024 * 1024;
/** A line longer than this is searched in pieces of this size (a match across a cut is missed). */
export const MAX_LINE_BYTES = 16 * 1024 * 1024;
/** A longer line is shown as a window around its first match. */
const MAX_LINE_CHARS = 300;
/** Characters kept before the match when a long line is cut. */
const CUT_LEAD_CHARS = 100;
const NEWLINE = 0x0a;

/** The lines found in one file: matches and the context around them, by line number. */
export interface FileHits {
  path: string;
  lines: Map<number, { text: string; match: boolean }>;
}

export function shorten(line: string, re: RegExp): string {
  if (line.length <= MAX_LINE_CHARS) return line;
  const at = Math.max(0, line.search(re));
  const start = Math.max(0, at - CUT_LEAD_CHARS);
  const piece = line.slice(start, start + MAX_LINE_CHARS);
  return `${start > 0 ? "…" : ""}${piece}… [line has ${line.length} characters]`;
}

/** The same pattern with "m", for a whole-text test that finds everything a per-line test would. */
export function wholeTextPattern(re: RegExp): RegExp {
  return new RegExp(re.source, re.flags.includes("m") ? re.flags : `${re.flags}m`);
}

const stripCr = (line: string) => (line.endsWith("\r") ? line.slice(0, -1) : line);

/** Lines of `text` matching `re`, with `context` lines around them. */
export function searchText(
  text: string,
  re: RegExp,
  context: number,
  whole = wholeTextPattern(re),
): FileHits["lines"] | undefined {
  if (!whole.test(text)) return undefined;
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  const found: FileHits["lines"] = new Map();
  for (let i = 0; i < lines.length; i++) {
    const line = stripCr(lines[i]!);
    if (!re.test(line)) continue;
    found.set(i + 1, { text: shorten(line, re), match: true });
    for (let j = Math.max(0, i - context); j <= Math.min(lines.length - 1, i + context); j++) {
      if (!found.has(j + 1)) found.set(j + 1, { text: shorten(stripCr(lines[j]!), re), match: false });
    }
  }
  // A match that only spans lines (e.g. "a\\nb") has no single matching line.
  return [...found.values()].some((l) => l.match) ? found : undefined;
}

export interface Matcher {
  re: RegExp;
  whole: RegExp;
  context: number;
}

/** A reusable read buffer for small files (one per search, never shared between searches). */
export function smallFileBuffer(): Buffer {
  return Buffer.allocUnsafe(SMALL_FILE_BYTES);
}

/**
 * Searches an open small file (size ≤ SMALL_FILE_BYTES) synchronously. Undefined: no match,
 * or binary content.
 */
export function searchSmallSync(fd: number, size: number, m: Matcher, buf: Buffer): FileHits["lines"] | undefined {
  let n = 0;
  while (n < size) {
    const read = readSync(fd, buf, n, size - n, n);
    if (read === 0) break;
    n += read;
  }
  if (n === 0 || binaryKindFromContent(buf.subarray(0, Math.min(n, BINARY_SNIFF_BYTES)))) return undefined;
  return searchText(buf.toString("utf8", 0, n), m.re, m.context, m.whole);
}

/** Reads up to buf.length bytes at `position`; 0 at the end. */
export type ReadAt = (buf: Buffer, position: number) => Promise<number>;

export interface StreamResult {
  lines: FileHits["lines"] | undefined;
  /** Matching lines found (stops at `budget`). */
  matches: number;
  /** True when the budget ran out before the end of the file. */
  stoppedEarly: boolean;
}

/**
 * Streams a file of any size in chunks of whole lines. Only a chunk the whole-text test finds a
 * match in is split into lines; the others only have their newlines counted. Context lines
 * around a match may come from the chunk before (kept) or the one after (pending).
 */
export async function searchStream(read: ReadAt, m: Matcher, budget: number): Promise<StreamResult> {
  const buf = Buffer.allocUnsafe(CHUNK_BYTES);
  const found: FileHits["lines"] = new Map();
  let carry: Buffer = Buffer.alloc(0);
  let position = 0;
  let firstLine = 1;
  let before: string[] = [];
  let afterPending = 0;
  let matches = 0;
  for (;;) {
    const n = await read(buf, position);
    position += n;
    if (position === n && n > 0 && binaryKindFromContent(buf.subarray(0, Math.min(n, BINARY_SNIFF_BYTES))))
      return { lines: undefined, matches: 0, stoppedEarly: false };
    const data = carry.length > 0 ? Buffer.concat([carry, buf.subarray(0, n)]) : buf.subarray(0, n);
    if (data.length === 0) break;
    let cut = n === 0 ? data.length : data.lastIndexOf(NEWLINE) + 1;
    if (cut === 0) {
      if (data.length < MAX_LINE_BYTES) {
        carry = Buffer.from(data);
        continue;
      }
      cut = data.length;
    }
    const text = data.toString("utf8", 0, cut);
    carry = Buffer.from(data.subarray(cut));
    // A giant line cut in pieces: its next piece has the same line number.
    const pieceOfLine = n > 0 && !text.endsWith("\n") ? 1 : 0;
    if (afterPending === 0 && !m.whole.test(text)) {
      let count = 0;
      for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) count++;
      if (m.context > 0) before = lastLines(text, m.context);
      firstLine += (text.endsWith("\n") ? count : count + 1) - pieceOfLine;
    } else {
      const lines = text.split("\n");
      if (lines[lines.length - 1] === "") lines.pop();
      for (let i = 0; i < lines.length; i++) {
        const line = stripCr(lines[i]!);
        const number = firstLine + i;
        if (m.re.test(line)) {
          for (let j = i - m.context; j < i; j++) {
            const ctx = j >= 0 ? lines[j] : before[before.length + j];
            if (ctx !== undefined && !found.has(firstLine + j))
              found.set(firstLine + j, { text: shorten(stripCr(ctx), m.re), match: false });
          }
          found.set(number, { text: shorten(line, m.re), match: true });
          afterPending = m.context;
          if (++matches >= budget) return { lines: found, matches, stoppedEarly: true };
        } else if (afterPending > 0) {
          if (!found.has(number)) found.set(number, { text: shorten(line, m.re), match: false });
          afterPending--;
        }
      }
      before = lines.slice(Math.max(0, lines.length - m.context));
      firstLine += lines.length - pieceOfLine;
    }
    if (n === 0) break;
  }
  return { lines: matches > 0 ? found : undefined, matches, stoppedEarly: false };
}

/** The last `count` lines of a text ending in a newline. */
function lastLines(text: string, count: number): string[] {
  let start = text.length - 1;
  for (let k = 0; k < count && start > 0; k++) start = text.lastIndexOf("\n", start - 1);
  const tail = text.slice(start < 0 ? 0 : start + 1);
  const lines = tail.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  return lines.slice(-count);
}

/** fstat of an open descriptor, for size, kind and links. */
export const statFd = (fd: number) => fstatSync(fd);
