/**
 * When an edit's old text is not in the file, the lines most like it: so the refusal can point
 * the model at a place (with line numbers) instead of "read the file again".
 */

/** Above this many line comparisons the search is skipped (a huge file and a long oldString). */
const MAX_COMPARISONS = 2_000_000;
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
  /** 0..1, averaged over the lines. */
  similarity: number;
  /** The region's lines, numbered like read_file. */
  quoted: string;
}

function bigrams(s: string): Map<string, number> {
  const m = new Map<string, number>();
  for (let i = 0; i + 1 < s.length; i++) {
    const g = s.slice(i, i + 2);
    m.set(g, (m.get(g) ?? 0) + 1);
  }
  return m;
}

/** Dice coefficient over character bigrams of the trimmed, space-collapsed lines. */
function lineSimilarity(a: string, b: string, cache: Map<string, Map<string, number>>): number {
  const x = a.trim().replace(/\s+/g, " ");
  const y = b.trim().replace(/\s+/g, " ");
  if (x === y) return 1;
  if (x.length < 2 || y.length < 2) return 0;
  const get = (s: string) => {
    let g = cache.get(s);
    if (!g) cache.set(s, (g = bigrams(s)));
    return g;
  };
  const gx = get(x);
  const gy = get(y);
  let overlap = 0;
  for (const [g, n] of gx) overlap += Math.min(n, gy.get(g) ?? 0);
  return (2 * overlap) / (x.length - 1 + (y.length - 1));
}

/** The window of file lines most like `needle`'s lines, if any is at least half alike. */
export function closestRegion(body: string, needle: string): ClosestRegion | undefined {
  const lines = body.replace(/\r\n/g, "\n").split("\n");
  if (lines.length > 0 && lines[lines.length - 1] === "") lines.pop();
  const want = needle.replace(/\r\n/g, "\n").replace(/^\n+|\n+$/g, "").split("\n");
  if (want.length === 0 || lines.length === 0) return undefined;
  const span = Math.min(want.length, lines.length);
  if ((lines.length - span + 1) * span > MAX_COMPARISONS) return undefined;
  const cache = new Map<string, Map<string, number>>();
  let best = { start: -1, score: 0 };
  for (let i = 0; i + span <= lines.length; i++) {
    let score = 0;
    for (let j = 0; j < span; j++) score += lineSimilarity(lines[i + j]!, want[j]!, cache);
    if (score > best.score) best = { start: i, score };
  }
  const similarity = best.score / want.length;
  if (best.start < 0 || similarity < MIN_SIMILARITY) return undefined;
  const shown = lines.slice(best.start, best.start + Math.min(span, MAX_QUOTED_LINES));
  const quoted = shown
    .map((text, k) => {
      const cut = text.length > MAX_QUOTED_CHARS ? `${text.slice(0, MAX_QUOTED_CHARS)}…` : text;
      return `${String(best.start + k + 1).padStart(6)}\t${cut}`;
    })
    .join("\n");
  const more = span > MAX_QUOTED_LINES ? `\n   ... (${span - MAX_QUOTED_LINES} more lines)` : "";
  return { first: best.start + 1, last: best.start + span, similarity, quoted: quoted + more };
}
