import { readSync } from "node:fs";
import { BINARY_SNIFF_BYTES, binaryKindFromContent } from "../workspace/files.js";

/**
 * Searching one file for search_files (issue 30): a small file is read whole with synchronous
 * calls into a reused buffer; a bigger one is streamed in chunks of whole lines, so a file of
 * any size is searched with memory bounded by the chunk and the longest line.
 */

/** Files up to this size are read whole in one synchronous call. */
export const SMALL_FILE_BYTES = 1024 * 1024;
/**
 * Bytes read per step when streaming a bigger file; a line longer than this is searched in
 * pieces of this size (a match across a cut is missed).
 */
const CHUNK_BYTES = 16 * 1024 * 1024;
export const MAX_LINE_BYTES = CHUNK_BYTES;
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
  /** A piece of text every matching line contains (requiredLiteral), found in raw bytes first. */
  literal?: Literal;
}

/**
 * How a streamed file is searched for a required literal before anything is decoded: as bytes
 * (Buffer.indexOf) when case matters; ignoring case, in the bytes read as Latin-1 (one character a
 * byte, so offsets are byte offsets) with a case-insensitive regex of the ASCII literal. A
 * non-unicode regex never matches a non-ASCII character to an ASCII letter, so no match is lost.
 */
export type Literal = { bytes: Buffer } | { folded: RegExp; length: number };

const escapeRegex = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");

/** The Literal prefilter for `re`, when its source has a required literal worth searching for. */
export function literalOf(re: RegExp): Literal | undefined {
  const text = requiredLiteral(re.source);
  if (text === undefined || text.length < MIN_LITERAL_CHARS) return undefined;
  if (!re.flags.includes("i")) return { bytes: Buffer.from(text, "utf8") };
  // Case folding beyond ASCII is the regex engine's business: no prefilter then.
  if (/[^\x20-\x7e]/.test(text)) return undefined;
  return { folded: new RegExp(escapeRegex(text), "gi"), length: text.length };
}

/** Shorter literals find too many places to be worth it. */
const MIN_LITERAL_CHARS = 3;
/** Escapes of a class of characters (no payload): end a literal run. */
const CLASS_ESCAPES = new Set(["d", "D", "w", "W", "s", "S", "b", "B"]);
const QUANTIFIER = /^\{(\d+)(,\d*)?\}/;

/**
 * The longest run of plain characters that every match of a JavaScript regex source must
 * contain, or undefined when there is none that is certain: a top-level "|", or an escape this
 * reading does not know (\x41, \u{…}, \1, \p{…}), makes it give up. Groups and classes end a run
 * and are skipped; a character made optional by "?", "*" or "{0,…}" is left out.
 */
export function requiredLiteral(source: string): string | undefined {
  let best = "";
  let run = "";
  const flush = () => {
    if (run.length > best.length) best = run;
    run = "";
  };
  const skipQuantifier = (i: number): number => {
    const c = source[i];
    if (c === "*" || c === "+" || c === "?") return source[i + 1] === "?" ? i + 2 : i + 1;
    const q = QUANTIFIER.exec(source.slice(i));
    return q ? i + q[0].length : i;
  };
  for (let i = 0; i < source.length; ) {
    const c = source[i]!;
    if (c === "|") return undefined;
    if (c === "(" || c === "[") {
      flush();
      const close = c === "(" ? groupEnd(source, i) : classEnd(source, i);
      if (close === -1) return undefined;
      i = skipQuantifier(close + 1);
      continue;
    }
    if (c === ")" || c === "]") return undefined;
    if (c === "." || c === "^" || c === "$") {
      flush();
      i = c === "." ? skipQuantifier(i + 1) : i + 1;
      continue;
    }
    let char = c;
    let next = i + 1;
    if (c === "\\") {
      const d = source[i + 1];
      if (d === undefined) return undefined;
      if (CLASS_ESCAPES.has(d)) {
        flush();
        i = skipQuantifier(i + 2);
        continue;
      }
      if (/[A-Za-z0-9]/.test(d)) return undefined;
      char = d;
      next = i + 2;
    }
    const q = source[next];
    const quantified = q === "*" || q === "+" || q === "?" || (q === "{" && QUANTIFIER.test(source.slice(next)));
    if (!quantified) {
      run += char;
      i = next;
      continue;
    }
    // The character repeated: required once (+, {n≥1,…}) or not at all (*, ?, {0,…}).
    const min = q === "+" ? 1 : q === "{" ? Number(QUANTIFIER.exec(source.slice(next))![1]) : 0;
    if (min > 0) run += char;
    flush();
    i = skipQuantifier(next);
  }
  flush();
  return best === "" ? undefined : best;
}

/** Index of the ")" closing the group opened at `open`, or -1. */
function groupEnd(source: string, open: number): number {
  let depth = 0;
  for (let i = open; i < source.length; i++) {
    const c = source[i];
    if (c === "\\") i++;
    else if (c === "[") {
      i = classEnd(source, i);
      if (i === -1) return -1;
    } else if (c === "(") depth++;
    else if (c === ")" && --depth === 0) return i;
  }
  return -1;
}

/** Index of the "]" closing the class opened at `open`, or -1. */
function classEnd(source: string, open: number): number {
  for (let i = open + 1; i < source.length; i++) {
    const c = source[i];
    if (c === "\\") i++;
    else if (c === "]") return i;
  }
  return -1;
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
  // A file without the literal's bytes cannot match: not decoded at all.
  if (m.literal && "bytes" in m.literal && buf.subarray(0, n).indexOf(m.literal.bytes) === -1) return undefined;
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

/** Newlines in buf[from, to). */
function countNewlines(buf: Buffer, from: number, to: number): number {
  let count = 0;
  for (let i = buf.indexOf(NEWLINE, from); i !== -1 && i < to; i = buf.indexOf(NEWLINE, i + 1)) count++;
  return count;
}

/** Where a streamed file's search stands between two regions of whole lines. */
interface StreamState {
  m: Matcher;
  found: FileHits["lines"];
  /** Number of the first line of the next region. */
  firstLine: number;
  /** The last lines of the regions before, for context before a match at a region's start. */
  before: string[];
  /** Lines of context still owed after the last match. */
  afterPending: number;
  matches: number;
  budget: number;
  /** Bytes read as Latin-1 at a time (FoldedWindow). */
  foldedWindow: number;
  /** The line the last region ended inside (longer than a chunk), and its offset in the file. */
  long?: { number: number; start: number };
  /** The region being searched starts inside `long` (its first line is a later piece of it). */
  continuing: boolean;
  /** The region being searched ends inside a line (one longer than a chunk). */
  endsInLine: boolean;
  /** What `long`'s entry in `found` was before this region: another one now means its last piece matched. */
  longEntry?: { text: string; match: boolean } | undefined;
}

/** Where the region's whole lines end: the lines before a long line it ends inside are the context before that line. */
const wholeLinesEnd = (region: Buffer, state: StreamState) =>
  state.endsInLine ? region.lastIndexOf(NEWLINE) + 1 : region.length;

/** A line, or a piece of one (`state.continuing`), as shown: cut around the match, "…" before a later piece. */
function shown(state: StreamState, number: number, text: string): string {
  const cut = shorten(text, state.m.re);
  return state.continuing && number === state.firstLine && !cut.startsWith("…") ? `…${cut}` : cut;
}

const SHORTENED = /… \[line has \d+ characters\]$/;

/**
 * The line `state.long` ended at file offset `end` (or the search stopped there: `over`): the
 * piece shown of it says how long the whole line is, not the piece.
 */
function closeLong(state: StreamState, end: number, over: boolean): void {
  const long = state.long;
  state.long = undefined;
  const entry = long && state.found.get(long.number);
  if (!long || !entry) return;
  const size = `[line has ${over ? "over " : ""}${end - long.start} bytes]`;
  // A piece shown whole: "…" after it unless it is the line's last piece.
  const last = !over && entry !== state.longEntry;
  entry.text = SHORTENED.test(entry.text)
    ? entry.text.replace(SHORTENED, `… ${size}`)
    : `${entry.text}${last ? "" : "…"} ${size}`;
}

/**
 * After a region at file offset `start`: notes the line it ends inside (number `lastLine`), and
 * closes the one it ends.
 */
function trackLong(state: StreamState, region: Buffer, start: number, atEnd: boolean, lastLine: number): void {
  if (state.long) {
    const nl = region.indexOf(NEWLINE);
    if (nl !== -1) closeLong(state, start + nl, false);
    else if (atEnd) closeLong(state, start + region.length, false);
  }
  if (!atEnd && !state.long && region[region.length - 1] !== NEWLINE)
    state.long = { number: lastLine, start: start + region.lastIndexOf(NEWLINE) + 1 };
}

const lineText = (region: Buffer, start: number, end: number) => stripCr(region.toString("utf8", start, end));

/**
 * Streams a file of any size in regions of whole lines (a line longer than a chunk is searched
 * in pieces with the same line number). With a literal (Matcher.literal) only the lines holding
 * it are decoded and tested, and the rest only have their newlines counted; without one, a
 * region the whole-text test finds something in is split into lines.
 */
export async function searchStream(
  read: ReadAt,
  m: Matcher,
  budget: number,
  chunkBytes = CHUNK_BYTES,
): Promise<StreamResult> {
  const buf = Buffer.allocUnsafe(chunkBytes);
  const state: StreamState = {
    m,
    found: new Map(),
    firstLine: 1,
    before: [],
    afterPending: 0,
    matches: 0,
    budget,
    foldedWindow: Math.min(FOLDED_WINDOW_BYTES, Math.max(16, chunkBytes >> 2)),
    continuing: false,
    endsInLine: false,
  };
  let carried = 0;
  let position = 0;
  for (;;) {
    const n = await read(carried === 0 ? buf : buf.subarray(carried), position);
    if (position === 0 && n > 0 && binaryKindFromContent(buf.subarray(0, Math.min(n, BINARY_SNIFF_BYTES))))
      return { lines: undefined, matches: 0, stoppedEarly: false };
    position += n;
    const end = carried + n;
    if (end === 0) break;
    // The region ends after its last newline; at the end of the file, or when one line fills the
    // whole buffer, it takes everything.
    let cut = n === 0 ? end : buf.lastIndexOf(NEWLINE, end - 1) + 1;
    if (cut === 0) cut = end === buf.length ? end : 0;
    if (cut > 0) {
      const region = buf.subarray(0, cut);
      const regionStart = position - end;
      state.continuing = state.long !== undefined;
      state.endsInLine = n !== 0 && region[cut - 1] !== NEWLINE;
      state.longEntry = state.long && state.found.get(state.long.number);
      const stopped = m.literal ? searchRegionByLiteral(region, m.literal, state) : searchRegionWhole(region, state);
      if (stopped) {
        // The region's lines were not all counted: its last line's number from its newlines.
        trackLong(state, region, regionStart, false, state.firstLine + countNewlines(region, 0, cut));
        closeLong(state, regionStart + cut, true);
        return { lines: state.found, matches: state.matches, stoppedEarly: true };
      }
      trackLong(state, region, regionStart, n === 0, state.firstLine);
    }
    carried = end - cut;
    if (carried > 0 && cut > 0) buf.copy(buf, 0, cut, end);
    if (n === 0) break;
  }
  return { lines: state.matches > 0 ? state.found : undefined, matches: state.matches, stoppedEarly: false };
}

/**
 * Tests line `number` (its text without the line end) and records it as a match, with the
 * context before it from `previous` (the line that many lines back, if known), or as context
 * owed after a match. True when the budget ran out.
 */
function testLine(
  state: StreamState,
  number: number,
  text: string,
  previous: (back: number) => string | undefined,
): boolean {
  const { m, found } = state;
  if (m.re.test(text)) {
    // A line searched in pieces is one matching line, shown where it first matched.
    if (found.get(number)?.match) return false;
    for (let back = m.context; back >= 1; back--) {
      const ctx = previous(back);
      if (ctx !== undefined && !found.has(number - back))
        found.set(number - back, { text: shorten(ctx, m.re), match: false });
    }
    found.set(number, { text: shown(state, number, text), match: true });
    state.afterPending = m.context;
    return ++state.matches >= state.budget;
  }
  // A later piece of a line already shown is not a line of context after it.
  if (state.afterPending > 0 && !found.has(number)) {
    found.set(number, { text: shown(state, number, text), match: false });
    state.afterPending--;
  }
  return false;
}

/**
 * Up to `count` lines before offset `end` (a line start) of the region, decoded, last one last;
 * the regions before fill in (`earlier`) when it has fewer. Fewer only at the start of the file.
 */
function linesBefore(region: Buffer, end: number, count: number, earlier: readonly string[]): string[] {
  if (count === 0) return [];
  const out: string[] = [];
  let lineEnd = end;
  // The line before a line start ends at lineEnd - 1 (its newline).
  while (out.length < count && lineEnd > 0) {
    const start = lineEnd >= 2 ? region.lastIndexOf(NEWLINE, lineEnd - 2) + 1 : 0;
    out.unshift(lineText(region, start, lineEnd - 1));
    lineEnd = start;
  }
  const need = count - out.length;
  return need > 0 ? [...earlier.slice(Math.max(0, earlier.length - need)), ...out] : out;
}

/** The line `back` lines before the line starting at `start`, or undefined before the file's start. */
const previousLine = (region: Buffer, start: number, earlier: readonly string[]) => (back: number) => {
  const lines = linesBefore(region, start, back, earlier);
  return lines.length === back ? lines[0] : undefined;
};

/** Bytes read as Latin-1 at a time when ignoring case: small strings are cheap to collect, one of 16 MB is not. */
const FOLDED_WINDOW_BYTES = 1024 * 1024;

/** The current window of a region read as Latin-1, kept between the searches of one region. */
interface FoldedWindow {
  /** Bytes per window: FOLDED_WINDOW_BYTES, or less for a small chunk (tests). */
  size: number;
  start: number;
  text?: string;
}

/** The next offset ≥ `from` in the region where the literal starts, or -1. */
function nextLiteral(region: Buffer, literal: Literal, from: number, window: FoldedWindow): number {
  if ("bytes" in literal) return region.indexOf(literal.bytes, from);
  const overlap = literal.length - 1;
  let start = from;
  for (;;) {
    if (window.text === undefined || start < window.start || start >= window.start + window.text.length) {
      window.start = start;
      // Longer than the literal, so each window ends further on than the one before.
      const size = Math.max(window.size, 2 * literal.length);
      window.text = region.toString("latin1", start, Math.min(region.length, start + size));
    }
    literal.folded.lastIndex = start - window.start;
    const found = literal.folded.exec(window.text);
    if (found) return window.start + found.index;
    const end = window.start + window.text.length;
    if (end >= region.length) return -1;
    // A match may straddle two windows: the next one starts just before this one's end.
    start = Math.max(start, end - overlap);
    window.text = undefined;
  }
}

/** One region, decoding only the lines that hold the literal (and the context owed around them). */
function searchRegionByLiteral(region: Buffer, literal: Literal, state: StreamState): boolean {
  const latin1: FoldedWindow = { size: state.foldedWindow, start: 0 };
  // `line` is the number of the line starting at `pos`.
  let pos = 0;
  let line = state.firstLine;
  const testAt = (start: number): boolean => {
    const nl = region.indexOf(NEWLINE, start);
    const end = nl === -1 ? region.length : nl;
    const stop = testLine(state, line, lineText(region, start, end), previousLine(region, start, state.before));
    // A region that ends inside a long line: its next piece continues the same line.
    if (nl === -1) pos = region.length;
    else {
      pos = nl + 1;
      line++;
    }
    return stop;
  };
  while (pos < region.length) {
    // Context owed after a match: the next lines, whatever they hold.
    if (state.afterPending > 0) {
      if (testAt(pos)) return true;
      continue;
    }
    const hit = nextLiteral(region, literal, pos, latin1);
    if (hit === -1) {
      line += countNewlines(region, pos, region.length);
      break;
    }
    const start = Math.max(pos, region.lastIndexOf(NEWLINE, hit) + 1);
    line += countNewlines(region, pos, start);
    if (testAt(start)) return true;
  }
  state.before = linesBefore(region, wholeLinesEnd(region, state), state.m.context, state.before);
  state.firstLine = line;
  return false;
}

/** One region without a literal: decoded whole, and split into lines only when the whole-text test finds something. */
function searchRegionWhole(region: Buffer, state: StreamState): boolean {
  const { m } = state;
  const text = region.toString("utf8");
  const endsLine = region[region.length - 1] === NEWLINE;
  if (state.afterPending === 0 && !m.whole.test(text)) {
    state.before = linesBefore(region, wholeLinesEnd(region, state), m.context, state.before);
    state.firstLine += countNewlines(region, 0, region.length);
    return false;
  }
  const lines = text.split("\n");
  if (endsLine) lines.pop();
  for (let i = 0; i < lines.length; i++) {
    const previous = (back: number) => {
      const j = i - back;
      const earlier = state.before.length + j;
      return j >= 0 ? stripCr(lines[j]!) : earlier >= 0 ? state.before[earlier] : undefined;
    };
    if (testLine(state, state.firstLine + i, stripCr(lines[i]!), previous)) return true;
  }
  state.before = linesBefore(region, wholeLinesEnd(region, state), m.context, state.before);
  state.firstLine += endsLine ? lines.length : lines.length - 1;
  return false;
}
