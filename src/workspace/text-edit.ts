/**
 * Exact-replace editing of text, the engine behind edit_file. Pure: no file system here.
 *
 * The old text is looked for with strategies from strict to forgiving, and the first that
 * finds it wins: exactly as given; with line endings normalised (a model writes "\n", the file
 * has "\r\n"); ignoring trailing whitespace on each line; ignoring indentation (the new text is
 * then re-indented to the file's, relative to oldString's). Then three recoveries of what models
 * get wrong, each accepted only when it finds exactly one place: oldString over-escaped ("\\n"
 * for a newline), Unicode punctuation typed as ASCII (or the reverse), spacing inside lines.
 * Text outside the replaced span is never touched. The file keeps its BOM, its line endings and
 * its final newline.
 */
import { closestRegion } from "./closest-region.js";
import {
  findNormalised,
  hasUnicodePunctuation,
  normaliseInnerSpacing,
  normaliseLineEndings,
  normalisePunctuation,
  occurrences,
  unescapeText,
  type Normalised,
} from "./text-normalise.js";

/** How each strategy is described to the model. */
export const STRATEGY_TEXT = {
  exact: "exact match",
  "line-endings": "matched after normalising line endings",
  "trailing-whitespace": "matched ignoring trailing whitespace",
  indentation: "matched ignoring indentation; the new text was re-indented to the file's",
  unescaped:
    "matched after removing extra escaping (\\n, \\', \\$, \\\\) from oldString; newString was unescaped the same way",
  "unicode-punctuation": "matched treating Unicode dashes, quotes, spaces and ellipses as their ASCII spelling",
  "inner-whitespace": "matched ignoring the amount of spacing inside lines",
  "indentation-and-spacing":
    "matched ignoring indentation and the amount of spacing inside lines; the new text was re-indented to the file's",
};
export type MatchStrategy = keyof typeof STRATEGY_TEXT;

const BOM = "\uFEFF";

/** Where a replacement went: its span in the old body and in the new body. */
export interface ChangedSpan {
  oldStart: number;
  oldEnd: number;
  newStart: number;
  newEnd: number;
}

export interface EditSuccess {
  ok: true;
  strategy: MatchStrategy;
  /** How many places were replaced. */
  count: number;
  /** The whole new text, BOM included when the old one had it. */
  text: string;
  /** Spans in the text without the BOM. */
  spans: ChangedSpan[];
  /** The line ending the file uses ("\n" or "\r\n"). */
  eol: "\n" | "\r\n";
  /** newString's later lines were moved onto the indentation of the line the match began in. */
  rebased?: boolean;
}

/** Said after STRATEGY_TEXT when an edit was rebased. */
export const REBASED_TEXT = "; newString's lines after the first were re-indented onto that line's indentation";

export interface EditFailure {
  ok: false;
  reason: "empty_old" | "no_change" | "not_found" | "ambiguous" | "inconsistent_indentation";
  /** The strategy that found several matches, for "ambiguous". */
  strategy?: MatchStrategy;
  /** Matches found, for "ambiguous". */
  count?: number;
  /** 1-based lines where the matches start, for "ambiguous". */
  lines?: number[];
  /** A sentence that helps the model find the right text, for "not_found". */
  hint?: string;
}

export type EditResult = EditSuccess | EditFailure;

interface Match {
  start: number;
  end: number;
  replacement: string;
  rebased?: boolean;
}

/** The line ending most lines use; "\n" for files without any. */
export function detectEol(text: string): "\n" | "\r\n" {
  const crlf = occurrences(text, "\r\n");
  return crlf > occurrences(text) - crlf ? "\r\n" : "\n";
}

const toLf = (s: string) => s.replace(/\r\n/g, "\n");
const withEol = (s: string, eol: string) => (eol === "\n" ? toLf(s) : toLf(s).replace(/\n/g, eol));

// --- strategy 1: exact -------------------------------------------------------------------------

function exactMatches(body: string, oldString: string, replacement: string): Match[] {
  const matches: Match[] = [];
  for (let i = body.indexOf(oldString); i !== -1; i = body.indexOf(oldString, i + oldString.length)) {
    matches.push({ start: i, end: i + oldString.length, replacement });
  }
  return matches;
}

// --- strategy 2: line endings normalised --------------------------------------------------------

function lineEndingMatches(body: string, oldString: string, replacement: string): Match[] {
  if (!oldString.includes("\n") || (!body.includes("\r\n") && !oldString.includes("\r\n"))) return [];
  // Search the body with "\r\n" turned into "\n", then map positions back.
  const removed: number[] = []; // positions in the LF text of each "\n" that lost its "\r"
  let lf = "";
  let from = 0;
  for (let i = body.indexOf("\r\n"); i !== -1; i = body.indexOf("\r\n", i + 2)) {
    lf += body.slice(from, i);
    removed.push(lf.length);
    lf += "\n";
    from = i + 2;
  }
  lf += body.slice(from);
  const before = (n: number) => {
    // how many removed "\r" lie before LF position n
    let lo = 0;
    let hi = removed.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (removed[mid]! < n) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  return exactMatches(lf, toLf(oldString), replacement).map((m) => ({
    start: m.start + before(m.start),
    end: m.end + before(m.end),
    replacement,
  }));
}

// --- strategies 3 and 4: whole lines, whitespace-insensitive ------------------------------------

interface Line {
  start: number;
  /** End of the text, before the line ending. */
  contentEnd: number;
  /** End including the line ending. */
  end: number;
  text: string;
}

function splitLines(body: string): Line[] {
  const lines: Line[] = [];
  let start = 0;
  while (start <= body.length) {
    const nl = body.indexOf("\n", start);
    const end = nl === -1 ? body.length : nl + 1;
    const contentEnd = nl === -1 ? body.length : nl > start && body[nl - 1] === "\r" ? nl - 1 : nl;
    lines.push({ start, contentEnd, end, text: body.slice(start, contentEnd) });
    if (nl === -1) break;
    start = end;
  }
  // A body ending with a newline has no last line after it.
  if (lines.length > 1 && lines[lines.length - 1]!.start === body.length) lines.pop();
  return lines;
}

const leadingWhitespace = (s: string) => /^[ \t]*/.exec(s)![0];

/** The width of an indentation, a tab counting as `tab` columns. */
const widthOf = (indent: string, tab: number) => [...indent].reduce((w, c) => w + (c === "\t" ? tab : 1), 0);

/** The indentation unit of some lines: "\t" when they indent with tabs, else the spaces of one level. */
function unitOf(indents: readonly string[]): string | undefined {
  const used = indents.filter((i) => i !== "");
  if (used.length === 0) return undefined;
  if (used.every((i) => /^\t+$/.test(i))) return "\t";
  if (!used.every((i) => /^ +$/.test(i))) return undefined;
  const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));
  const step = used.map((i) => i.length).reduce(gcd);
  // Widths that differ by one space are not a unit (an alignment, not a level).
  return step >= 2 ? " ".repeat(step) : undefined;
}

/**
 * One consistent way from oldString's indentation to the file's, line by line, or undefined:
 * the same prefix added or removed on every line (a consistent offset), or the same number of
 * levels added or removed with each side's own unit (tabs against spaces, 2 against 4 spaces).
 */
function indentationMap(
  pairs: ReadonlyArray<readonly [string, string]>,
): ((indent: string) => string | undefined) | undefined {
  if (pairs.every(([from, to]) => from === to)) return (indent) => indent;
  const [from0, to0] = pairs[0]!;
  // A prefix added to every line: file = D + old.
  const added = to0.slice(0, to0.length - from0.length);
  if (to0.endsWith(from0) && pairs.every(([from, to]) => to === added + from)) return (indent) => added + indent;
  // A prefix removed from every line: old = D + file.
  const removed = from0.slice(0, from0.length - to0.length);
  if (from0.endsWith(to0) && pairs.every(([from, to]) => from === removed + to))
    return (indent) => (indent.startsWith(removed) ? indent.slice(removed.length) : undefined);
  // Levels: each side in its own unit, the same number of levels apart on every line.
  const oldUnit = unitOf(pairs.map(([from]) => from));
  const fileUnit = unitOf(pairs.map(([, to]) => to));
  if (!fileUnit) return undefined;
  const oldStep = oldUnit === "\t" ? 1 : (oldUnit?.length ?? 0);
  const fileStep = fileUnit === "\t" ? 1 : fileUnit.length;
  const levels = (indent: string, unit: string | undefined, step: number) => {
    if (indent === "") return 0;
    if (!unit || (unit === "\t" ? !/^\t+$/.test(indent) : !/^ +$/.test(indent) || indent.length % step !== 0))
      return undefined;
    return indent.length / step;
  };
  let offset: number | undefined;
  for (const [from, to] of pairs) {
    const a = levels(from, oldUnit, oldStep);
    const b = levels(to, fileUnit, fileStep);
    if (a === undefined || b === undefined || (offset !== undefined && b - a !== offset)) return undefined;
    offset = b - a;
  }
  const shift = offset ?? 0;
  return (indent) => {
    // A new line's depth in oldString's unit; spaces beyond whole levels are an alignment, kept.
    const tab = oldStep === 0 ? fileStep : oldUnit === "\t" ? fileStep : oldStep;
    const width = widthOf(indent, tab);
    const step = oldUnit === "\t" ? tab : oldStep || tab;
    const level = Math.floor(width / step) + shift;
    if (level < 0) return undefined;
    return fileUnit.repeat(level) + " ".repeat(width % step);
  };
}

/**
 * Moves the new text from the model's indentation to the file's, relatively: oldString's
 * indentation must map onto the file's line by line in one consistent way (an offset, or levels
 * with tabs against spaces), and every line of newString is moved the same way, keeping its
 * depth relative to the others, so no block comes out half-indented. newString already written
 * at the file's indentation is left alone (never indented on top). Undefined when there is no
 * such mapping (one indentation of oldString stands for two of the file's), so there is no
 * honest way to re-indent.
 */
export function reindent(
  newLf: string,
  oldLines: readonly string[],
  fileLines: readonly string[],
  /** False when newLf is only part of the new text (a patch's added lines), whose base says nothing. */
  trustBase = true,
): string | undefined {
  const pairs: Array<[string, string]> = [];
  for (const [j, old] of oldLines.entries()) {
    if (old.trim() === "") continue;
    pairs.push([leadingWhitespace(old), leadingWhitespace(fileLines[j]!)]);
  }
  if (pairs.length === 0 || pairs.every(([from, to]) => from === to)) return newLf;
  const newLines = newLf.split("\n");
  // Its first line already where the file's is (and not where oldString's is): written for the file.
  const first = (lines: readonly string[]) => {
    const line = lines.find((l) => l.trim() !== "");
    return line === undefined ? undefined : leadingWhitespace(line);
  };
  if (trustBase && first(newLines) === first(fileLines) && first(oldLines) !== first(fileLines)) return newLf;
  const move = indentationMap(pairs);
  if (!move) return undefined;
  const out = newLines.map((line) => {
    const indent = leadingWhitespace(line);
    const moved = line.trim() === "" ? indent : move(indent);
    return moved === undefined ? undefined : moved + line.slice(indent.length);
  });
  return out.includes(undefined) ? undefined : out.join("\n");
}

/** Whole-line matches; `inconsistent` is set when a match could not be re-indented honestly. */
interface LineSearch {
  matches: Match[];
  inconsistent: boolean;
  /** The file's lines of the first match that could not be re-indented (0-based, end exclusive). */
  inconsistentAt?: [number, number];
}

function lineMatches(
  body: string,
  oldString: string,
  newString: string,
  normalise: (line: string) => string,
  reindentNew: boolean,
): LineSearch {
  const oldLf = toLf(oldString);
  const oldEndsWithNewline = oldLf.endsWith("\n");
  const rawOldLines = (oldEndsWithNewline ? oldLf.slice(0, -1) : oldLf).split("\n");
  const oldLines = rawOldLines.map(normalise);
  const lines = splitLines(body);
  const result: LineSearch = { matches: [], inconsistent: false };
  for (let i = 0; i + oldLines.length <= lines.length; i++) {
    let same = true;
    for (let j = 0; j < oldLines.length && same; j++) same = normalise(lines[i + j]!.text) === oldLines[j];
    if (!same) continue;
    const last = lines[i + oldLines.length - 1]!;
    const lastHasEol = last.end > last.contentEnd;
    const end = oldEndsWithNewline && lastHasEol ? last.end : last.contentEnd;
    let replacement: string | undefined = toLf(newString);
    if (oldEndsWithNewline && !lastHasEol && replacement.endsWith("\n")) replacement = replacement.slice(0, -1);
    if (reindentNew) {
      const fileLines = lines.slice(i, i + oldLines.length).map((l) => l.text);
      replacement = reindent(replacement, rawOldLines, fileLines);
      if (replacement === undefined) {
        result.inconsistent = true;
        result.inconsistentAt ??= [i, i + oldLines.length];
        replacement = toLf(newString);
      }
    }
    result.matches.push({ start: lines[i]!.start, end, replacement });
    i += oldLines.length - 1;
  }
  return result;
}

// --- recoveries: exactly one match through a normalisation -----------------------------------------

/**
 * A recovery's match that begins after the indentation of its line (oldString's first line given
 * without it, as a model copies it from the middle of a line) keeps that indentation, so
 * newString's first line lands on it; its later lines are inserted as typed. When they go below
 * that base while the file's lines of the match do not, newString was written relative to its
 * first line (a block starting at column 0): every later line is moved onto the base too, or the
 * block would come out half-indented. Later lines written at the file's depth are left alone.
 */
function rebaseOnLine(body: string, m: Match): Match {
  const lineStart = body.lastIndexOf("\n", m.start - 1) + 1;
  const base = body.slice(lineStart, m.start);
  if (!/^[ \t]+$/.test(base)) return m;
  const below = (line: string) => line.trim() !== "" && !line.startsWith(base);
  const newLines = m.replacement.split("\n");
  if (!newLines.slice(1).some(below)) return m;
  if (toLf(body.slice(m.start, m.end)).split("\n").slice(1).some(below)) return m;
  const replacement = newLines.map((l, i) => (i === 0 || l.trim() === "" ? l : base + l)).join("\n");
  return { ...m, replacement, rebased: true };
}

function normalisedMatches(haystack: Normalised, needle: string, replacement: string, body: string): Match[] {
  return findNormalised(haystack, needle).map((span) => rebaseOnLine(body, { ...span, replacement }));
}

/** oldString with one level of escaping removed ("\\n" as a newline); newString loses the same escapes. */
function unescapedMatches(body: string, oldString: string, newString: string): Match[] {
  if (!oldString.includes("\\")) return [];
  const old = unescapeText(oldString);
  if (old.text === oldString || old.text.trim() === "") return [];
  const replacement = unescapeText(newString, old.undone).text;
  return normalisedMatches(normaliseLineEndings(body), toLf(old.text), toLf(replacement), body);
}

function punctuationMatches(body: string, oldString: string, newString: string): Match[] {
  if (!hasUnicodePunctuation(body) && !hasUnicodePunctuation(oldString)) return [];
  return normalisedMatches(normalisePunctuation(body), normalisePunctuation(oldString).text, toLf(newString), body);
}

function innerSpacingMatches(body: string, oldString: string, newString: string): Match[] {
  const needle = normaliseInnerSpacing(oldString).text;
  if (needle.trim() === "") return [];
  return normalisedMatches(normaliseInnerSpacing(body), needle, toLf(newString), body);
}

// --- hints ----------------------------------------------------------------------------------------

/** read_file prints "     12\t"; models sometimes copy that into oldString. */
const LINE_NUMBER_PREFIX = /^\s*\d+\t/;

function notFoundHint(body: string, oldString: string): string | undefined {
  const oldLines = toLf(oldString)
    .split("\n")
    .filter((l) => l.trim() !== "");
  if (oldLines.length > 0 && oldLines.every((l) => LINE_NUMBER_PREFIX.test(l))) {
    return 'oldString seems to include the line numbers read_file shows ("    12<tab>"); copy only the text after the tab.';
  }
  const close = closestRegion(body, oldString);
  if (close) {
    const where = close.first === close.last ? `line ${close.first}` : `lines ${close.first}-${close.last}`;
    return `The closest text is at ${where} (${Math.round(close.similarity * 100)}% alike):\n${close.quoted}\nCopy oldString from there exactly (without the line numbers), or read the file again.`;
  }
  const first = oldLines[0]?.trim();
  if (!first) return undefined;
  const at = splitLines(body)
    .map((line, index) => (line.text.trim() === first ? index + 1 : 0))
    .filter((n) => n > 0);
  if (at.length > 0) {
    const where = at.length > 5 ? `${at.slice(0, 5).join(", ")}, …` : at.join(", ");
    return `Its first line appears at line ${where}, but the lines after it differ; read that part of the file again and copy it exactly.`;
  }
  return undefined;
}

// --- the edit -------------------------------------------------------------------------------------

function apply(body: string, matches: Match[], eol: "\n" | "\r\n"): { text: string; spans: ChangedSpan[] } {
  let out = "";
  let from = 0;
  const spans: ChangedSpan[] = [];
  for (const m of matches) {
    out += body.slice(from, m.start);
    const replacement = withEol(m.replacement, eol);
    spans.push({ oldStart: m.start, oldEnd: m.end, newStart: out.length, newEnd: out.length + replacement.length });
    out += replacement;
    from = m.end;
  }
  out += body.slice(from);
  return { text: out, spans };
}

/**
 * Recoveries map every character of the file to its source, about 16 bytes a character; above
 * this size they are skipped (the exact and line-based strategies still run).
 */
export const MAX_RECOVERY_CHARS = 2 * 1024 * 1024;

/** Lines of the body quoted back, numbered like read_file. */
const MAX_QUOTED = 8;
function quoteLines(body: string, from: number, to: number): string {
  const lines = splitLines(body);
  return lines
    .slice(from, Math.min(to, from + MAX_QUOTED))
    .map((l, k) => `${String(from + k + 1).padStart(6)}\t${l.text.slice(0, 200)}`)
    .join("\n");
}

/**
 * Replaces `oldString` with `newString` in `content`: exactly one match, or every match with
 * `replaceAll`. Tries the strategies in order and reports which one matched.
 */
export function applyEdit(content: string, oldString: string, newString: string, replaceAll = false): EditResult {
  if (oldString.trim() === "") return { ok: false, reason: "empty_old" };
  if (oldString === newString) return { ok: false, reason: "no_change" };
  const bom = content.startsWith(BOM) ? BOM : "";
  const body = bom ? content.slice(1) : content;
  const eol = detectEol(body);
  let inconsistentAt: [number, number] | undefined;
  const byLines = (normalise: (l: string) => string, reindentNew: boolean) => () => {
    const found = lineMatches(body, oldString, newString, normalise, reindentNew);
    if (found.inconsistent) inconsistentAt ??= found.inconsistentAt;
    return found.inconsistent ? [] : found.matches;
  };
  // The last four (`recovery`) only recover a model's slip: they must find exactly one place, even with replaceAll.
  const strategies: Array<[MatchStrategy, () => Match[], recovery?: true]> = [
    ["exact", () => exactMatches(body, oldString, newString)],
    ["line-endings", () => lineEndingMatches(body, oldString, newString)],
    ["trailing-whitespace", byLines((l) => l.trimEnd(), false)],
    ["indentation", byLines((l) => l.trim(), true)],
    ["unescaped", () => unescapedMatches(body, oldString, newString), true],
    ["unicode-punctuation", () => punctuationMatches(body, oldString, newString), true],
    ["inner-whitespace", () => innerSpacingMatches(body, oldString, newString), true],
    // Both at once: indentation and inner spacing typed differently; re-indented like "indentation".
    ["indentation-and-spacing", byLines((l) => l.trim().replace(/\s+/g, " "), true), true],
  ];
  for (const [strategy, find, recovery] of strategies) {
    if (recovery && body.length > MAX_RECOVERY_CHARS) continue;
    const matches = find();
    if (matches.length === 0) continue;
    if (matches.length > 1 && (!replaceAll || recovery)) {
      const lines = matches.map((m) => occurrences(body, "\n", m.start) + 1);
      return {
        ok: false,
        reason: "ambiguous",
        strategy,
        count: matches.length,
        lines,
        // Matched loosely, the places differ from oldString and from each other: show them.
        ...(strategy === "exact" || strategy === "line-endings"
          ? {}
          : {
              hint: `The places start with:\n${lines
                .slice(0, 5)
                .map((l) => quoteLines(body, l - 1, l))
                .join("\n")}`,
            }),
      };
    }
    const applied = apply(body, matches, eol);
    let text = applied.text;
    // Keep the final newline the file had, whatever the edit did at its end.
    if (/\n$/.test(body) && text !== "" && !text.endsWith("\n")) text += eol;
    if (text === body) return { ok: false, reason: "no_change" };
    const rebased = matches.some((m) => m.rebased);
    return {
      ok: true,
      strategy,
      count: matches.length,
      text: bom + text,
      spans: applied.spans,
      eol,
      ...(rebased ? { rebased } : {}),
    };
  }
  if (inconsistentAt) {
    return {
      ok: false,
      reason: "inconsistent_indentation",
      hint: `The closest lines, as the file has them:\n${quoteLines(body, inconsistentAt[0], inconsistentAt[1])}`,
    };
  }
  return { ok: false, reason: "not_found", hint: notFoundHint(body, oldString) };
}

/** One replacement of an `edits` list. */
export interface EditRequest {
  oldString: string;
  newString: string;
  replaceAll?: boolean;
}

export { findPlaceholder } from "./placeholders.js";
