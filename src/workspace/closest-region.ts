/**
 * When an edit's old text is not in the file, the lines most like it: so the refusal can point
 * the model at a place (with line numbers) instead of "read the file again".
 */

/** Above this many line comparisons the search is skipped (a huge file and a long oldString). */
const MAX_COMPARISONS = 500_000;
/** Below this similarity nothing is "close". */
const MIN_SIMILARITY = 0.5;
/** Most lines of the region quoted back. */
const MAX_QUOTED_LINES = 8;
/** Longest line quoted back. */
const MAX_QUOTED_CHARS = 200;

export interface ClosestRegion {
  /** 1-based first and last line. */
  first: number;
  last: number;
  /** 0..1: shared words and symbols, averaged over the lines. */
  similarity: number;
  /** The region's lines, numbered like read_file. */
  quoted: string;
}

/** A line's words and symbols: cheap to compare, and a typo costs one token, not the line. */
function tokens(line: string): Set<string> {
  return new Set(line.match(/\w+|[^\s\w]/g) ?? []);
}

/** Dice coefficient of two token sets; blank lines are alike only to blank lines. */
function similarity(a: Set<string>, b: Set<string>): number {
  if (a.size === 0 || b.size === 0) return a.size === b.size ? 1 : 0;
  const [small, big] = a.size <= b.size ? [a, b] : [b, a];
  let shared = 0;
  for (const t of small) if (big.has(t)) shared++;
  return (2 * shared) / (a.size + b.size);
}

/** The window of file lines most like `needle`'s lines, if any is at least half alike. */
export function closestRegion(body: string, needle: string): ClosestRegion | undefined {
  const lines = body.replace(/\r\n/g, "\n").split("\n");
  if (lines.length > 0 && lines[lines.length - 1] === "") lines.pop();
  const want = needle
    .replace(/\r\n/g, "\n")
    .replace(/^\n+|\n+$/g, "")
    .split("\n");
  if (want.length === 0 || lines.length === 0) return undefined;
  const span = Math.min(want.length, lines.length);
  if ((lines.length - span + 1) * span > MAX_COMPARISONS) return undefined;
  const fileTokens = lines.map(tokens);
  const wantTokens = want.map(tokens);
  let best = { start: -1, score: 0 };
  for (let i = 0; i + span <= lines.length; i++) {
    let score = 0;
    for (let j = 0; j < span; j++) score += similarity(fileTokens[i + j]!, wantTokens[j]!);
    if (score > best.score) best = { start: i, score };
  }
  const alike = best.score / want.length;
  if (best.start < 0 || alike < MIN_SIMILARITY) return undefined;
  const shown = lines.slice(best.start, best.start + Math.min(span, MAX_QUOTED_LINES));
  const quoted = shown
    .map((text, k) => {
      const cut = text.length > MAX_QUOTED_CHARS ? `${text.slice(0, MAX_QUOTED_CHARS)}…` : text;
      return `${String(best.start + k + 1).padStart(6)}\t${cut}`;
    })
    .join("\n");
  const more = span > MAX_QUOTED_LINES ? `\n   ... (${span - MAX_QUOTED_LINES} more lines)` : "";
  return { first: best.start + 1, last: best.start + span, similarity: alike, quoted: quoted + more };
}
