/**
 * Exact-replace editing of text, the engine behind edit_file. Pure: no file system here.
 *
 * The old text is looked for with strategies from strict to forgiving, and the first that
 * finds it wins: exactly as given; with line endings normalised (a model writes "\n", the file
 * has "\r\n"); ignoring trailing whitespace on each line; ignoring indentation (the new text is
 * then re-indented to the file's). The file keeps its BOM, its line endings and its final newline.
 */

export type MatchStrategy = "exact" | "line-endings" | "trailing-whitespace" | "indentation";

/** How each strategy is described to the model. */
export const STRATEGY_TEXT: Record<MatchStrategy, string> = {
  exact: "exact match",
  "line-endings": "matched after normalising line endings",
  "trailing-whitespace": "matched ignoring trailing whitespace",
  indentation: "matched ignoring indentation; the new text was re-indented to the file's",
};

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
}

export interface EditFailure {
  ok: false;
  reason: "empty_old" | "no_change" | "not_found" | "ambiguous";
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
}

/** The line ending most lines use; "\n" for files without any. */
export function detectEol(text: string): "\n" | "\r\n" {
  let crlf = 0;
  let lf = 0;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) {
    if (i > 0 && text[i - 1] === "\r") crlf++;
    else lf++;
  }
  return crlf > lf ? "\r\n" : "\n";
}

const toLf = (s: string) => s.replace(/\r\n/g, "\n");
const withEol = (s: string, eol: string) => (eol === "\n" ? toLf(s) : toLf(s).replace(/\n/g, eol));

function lineOf(text: string, index: number): number {
  let line = 1;
  for (let i = text.indexOf("\n"); i !== -1 && i < index; i = text.indexOf("\n", i + 1)) line++;
  return line;
}

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

/** Moves the new text to the file's indentation: the model's indent of the old text is swapped for the file's. */
function reindent(newLf: string, oldIndent: string, fileIndent: string): string {
  if (oldIndent === fileIndent) return newLf;
  return newLf
    .split("\n")
    .map((line) => {
      if (line.trim() === "") return line;
      if (line.startsWith(oldIndent)) return fileIndent + line.slice(oldIndent.length);
      return line;
    })
    .join("\n");
}

function lineMatches(
  body: string,
  oldString: string,
  newString: string,
  normalise: (line: string) => string,
  reindentNew: boolean,
): Match[] {
  const oldLf = toLf(oldString);
  const oldEndsWithNewline = oldLf.endsWith("\n");
  const oldLines = (oldEndsWithNewline ? oldLf.slice(0, -1) : oldLf).split("\n").map(normalise);
  const lines = splitLines(body);
  const matches: Match[] = [];
  const rawOldLines = (oldEndsWithNewline ? oldLf.slice(0, -1) : oldLf).split("\n");
  const firstNonBlank = rawOldLines.findIndex((l) => l.trim() !== "");
  for (let i = 0; i + oldLines.length <= lines.length; i++) {
    let same = true;
    for (let j = 0; j < oldLines.length && same; j++) same = normalise(lines[i + j]!.text) === oldLines[j];
    if (!same) continue;
    const last = lines[i + oldLines.length - 1]!;
    const lastHasEol = last.end > last.contentEnd;
    const end = oldEndsWithNewline && lastHasEol ? last.end : last.contentEnd;
    let replacement = toLf(newString);
    if (oldEndsWithNewline && !lastHasEol && replacement.endsWith("\n")) replacement = replacement.slice(0, -1);
    if (reindentNew && firstNonBlank >= 0) {
      replacement = reindent(replacement, leadingWhitespace(rawOldLines[firstNonBlank]!), leadingWhitespace(lines[i + firstNonBlank]!.text));
    }
    matches.push({ start: lines[i]!.start, end, replacement });
    i += oldLines.length - 1;
  }
  return matches;
}

// --- hints ----------------------------------------------------------------------------------------

/** read_file prints "     12\t"; models sometimes copy that into oldString. */
const LINE_NUMBER_PREFIX = /^\s*\d+\t/;

function notFoundHint(body: string, oldString: string): string | undefined {
  const oldLines = toLf(oldString).split("\n").filter((l) => l.trim() !== "");
  if (oldLines.length > 0 && oldLines.every((l) => LINE_NUMBER_PREFIX.test(l))) {
    return 'oldString seems to include the line numbers read_file shows ("    12<tab>"); copy only the text after the tab.';
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
 * Replaces `oldString` with `newString` in `content`: exactly one match, or every match with
 * `replaceAll`. Tries the strategies in order and reports which one matched.
 */
export function applyEdit(content: string, oldString: string, newString: string, replaceAll = false): EditResult {
  if (oldString.trim() === "") return { ok: false, reason: "empty_old" };
  if (oldString === newString) return { ok: false, reason: "no_change" };
  const bom = content.startsWith(BOM) ? BOM : "";
  const body = bom ? content.slice(1) : content;
  const eol = detectEol(body);
  const strategies: Array<[MatchStrategy, () => Match[]]> = [
    ["exact", () => exactMatches(body, oldString, newString)],
    ["line-endings", () => lineEndingMatches(body, oldString, newString)],
    ["trailing-whitespace", () => lineMatches(body, oldString, newString, (l) => l.trimEnd(), false)],
    ["indentation", () => lineMatches(body, oldString, newString, (l) => l.trim(), true)],
  ];
  for (const [strategy, find] of strategies) {
    const matches = find();
    if (matches.length === 0) continue;
    if (matches.length > 1 && !replaceAll) {
      return { ok: false, reason: "ambiguous", count: matches.length, lines: matches.map((m) => lineOf(body, m.start)) };
    }
    const applied = apply(body, matches, eol);
    let text = applied.text;
    // Keep the final newline the file had, whatever the edit did at its end.
    if (/\n$/.test(body) && text !== "" && !text.endsWith("\n")) text += eol;
    if (text === body) return { ok: false, reason: "no_change" };
    return { ok: true, strategy, count: matches.length, text: bom + text, spans: applied.spans, eol };
  }
  return { ok: false, reason: "not_found", hint: notFoundHint(body, oldString) };
}

// --- placeholders ---------------------------------------------------------------------------------

/** A line that is only a comment (or nothing but an ellipsis). */
const COMMENT_LINE = /^\s*(?:\/\/+|#+|\/\*+|\*|<!--|--|;+|\{\s*\/\*|%|'|rem\b)?\s*(.*?)\s*(?:\*\/\s*\}?|-->)?\s*$/i;
const PLACEHOLDER_PATTERNS: RegExp[] = [
  // "... existing code ...", "… rest of the file …", "...other methods..."
  /^(?:\.{3}|…)\s*(?:existing|previous|rest|remaining|other|unchanged|same|more|original)\b/i,
  /\b(?:existing|previous|remaining|unchanged|original)\s+(?:code|content|implementation|logic|methods|functions|imports|styles|lines|tests)\b.*(?:\.{3}|…)\s*$/i,
  // "rest of (the) code unchanged", "remainder of the file remains the same"
  /\b(?:rest|remainder)\s+of\s+(?:the\s+)?(?:code|file|function|class|implementation|component|method|content|module|styles?|tests?)\b.*\b(?:unchanged|remains?|same|as\s+(?:before|is)|omitted|here|goes\s+here)\b/i,
  /\b(?:code|content|implementation)\s+(?:remains?\s+)?unchanged\b/i,
];

/**
 * Placeholder lines ("// ... existing code ...", "# rest of the file unchanged") in the new text
 * that are not in the old: written literally, they would delete the code they stand for.
 */
export function findPlaceholder(newString: string, oldString: string): string | undefined {
  const oldLines = new Set(toLf(oldString).split("\n").map((l) => l.trim()));
  for (const raw of toLf(newString).split("\n")) {
    const line = raw.trim();
    if (line === "" || oldLines.has(line)) continue;
    const comment = COMMENT_LINE.exec(line)?.[1] ?? line;
    // A comment, or a bare "... words ..." line; "...rest," is a spread, not a placeholder.
    const isCommentish = comment !== line || /^(?:\.{3}|…)\s+\S/.test(line);
    if (!isCommentish) continue;
    if (PLACEHOLDER_PATTERNS.some((p) => p.test(comment))) return line;
  }
  return undefined;
}
