/**
 * Applies the hunks of one "*** Update File" to a text. Pure: no file system here.
 *
 * Each hunk's old lines (context and "-") are looked for after the previous hunk (and after its
 * "@@" anchors), first exactly, then in Unicode normal form C (a file and a patch may spell "é" as
 * one code point or two), then ignoring trailing whitespace, then ignoring indentation, then also
 * treating Unicode punctuation as ASCII and spacing inside lines as one space. Context lines keep
 * the file's own text; "+" lines are re-indented when the match ignored indentation. A hunk whose
 * old lines occur more than once, with no "@@" anchor to choose, is refused rather than guessed.
 * The file keeps its BOM and its final newline (or lack of one), and its line endings line by
 * line: an added line takes the ending of the line it replaces (the patch may list a change's
 * "+" lines before or after its "-" lines), else of the line before it, so a mixed file stays mixed; "\r\n", "\n" and a lone "\r" all end a line.
 *
 * The matching and the building of each hunk's lines run over PatchLines: the lines of a text in
 * memory here, or of a file too big for memory streamed from disk (patch-stream.ts), so both
 * follow one set of rules.
 */
import { closestRegion } from "./closest-region.js";
import type { Hunk, PatchLine } from "./patch-parse.js";
import { normalisePunctuation } from "./text-normalise.js";
import { reindent } from "./text-edit.js";

export const HUNK_MATCH_TEXT = {
  exact: "exact",
  "unicode-normalisation": "after Unicode normalisation (NFC/NFD)",
  "trailing-whitespace": "ignoring trailing whitespace",
  indentation: "ignoring indentation; added lines re-indented to the file's",
  "punctuation-and-spacing": "ignoring indentation, spacing inside lines and Unicode punctuation",
  appended: "nothing (no context or @@ line): its lines were added at the end of the file",
};
export type HunkMatch = keyof typeof HUNK_MATCH_TEXT;

/** ASCII text is its own NFC and has no Unicode punctuation: the per-line checks skip the work. */
const ASCII = /^[\x00-\x7f]*$/;
const nfc = (s: string) => (ASCII.test(s) ? s : s.normalize("NFC"));
const asciiPunctuation = (s: string) => (ASCII.test(s) ? s : normalisePunctuation(s).text);

export type Norm = (s: string) => string;

const LEVELS: ReadonlyArray<[HunkMatch, Norm]> = [
  ["exact", (s) => s],
  ["unicode-normalisation", nfc],
  ["trailing-whitespace", (s) => nfc(s).trimEnd()],
  ["indentation", (s) => nfc(s).trim()],
  ["punctuation-and-spacing", (s) => asciiPunctuation(nfc(s)).trim().replace(/\s+/g, " ")],
];

export type HunksResult = { ok: true; text: string; matches: HunkMatch[] } | { ok: false; message: string };

export interface FileLine {
  text: string;
  eol: string;
}

/** Where a hunk's lines occur: the first few starts (at most MAX_LISTED_STARTS) and how many in all. */
interface Occurrences {
  starts: number[];
  count: number;
}

/** Starts listed when a hunk's lines occur more than once. */
const MAX_LISTED_STARTS = 10;

/**
 * A file's lines as the hunks are applied one after another: indices are of the lines as they
 * are now, with the earlier hunks' replacements in place. Every search starts at or after the
 * end of the last replacement.
 */
export interface PatchLines {
  readonly length: number;
  line(i: number): Promise<FileLine | undefined>;
  slice(start: number, count: number): Promise<FileLine[]>;
  /**
   * Visits the lines from `from` on, in order, with their indices; true stops. Every search is
   * one such read: a streamed file is read once for all the levels of a round (ROUNDS).
   */
  scan(from: number, visit: (text: string, index: number) => boolean | undefined): Promise<void>;
  splice(start: number, deleteCount: number, out: FileLine[]): void;
  /** The lines most like `old` at or after `from` (for the refusal), when it can tell. */
  closest(from: number, old: readonly string[]): Promise<{ first: number; last: number } | undefined>;
}

export function splitWithEols(body: string): FileLine[] {
  const out: FileLine[] = [];
  const re = /\r\n|\r|\n/g;
  let from = 0;
  for (let m = re.exec(body); m; m = re.exec(body)) {
    out.push({ text: body.slice(from, m.index), eol: m[0] });
    from = m.index + m[0].length;
  }
  if (from < body.length) out.push({ text: body.slice(from), eol: "" });
  return out;
}

/** The line ending most lines use; "\n" for a file without any. */
export function dominantEol(counts: ReadonlyMap<string, number>): string {
  let best = "\n";
  for (const [e, n] of counts) if (n > (counts.get(best) ?? 0)) best = e;
  return best;
}

/** A line's ending in the patched file: every line but the last has one, the last keeps the file's choice. */
export const finalEol = (line: FileLine, isLast: boolean, endedWithNewline: boolean, eol: string) =>
  isLast && !endedWithNewline ? "" : line.eol || eol;

/** PatchLines over an array in memory. */
function linesInMemory(lines: FileLine[]): PatchLines {
  return {
    get length() {
      return lines.length;
    },
    line: async (i) => lines[i],
    slice: async (start, count) => lines.slice(start, start + count),
    async scan(from, visit) {
      for (let i = from; i < lines.length; i++) if (visit(lines[i]!.text, i)) return;
    },
    splice(start, deleteCount, out) {
      lines.splice(start, deleteCount, ...out);
    },
    async closest(from, old) {
      return closestRegion(
        lines
          .slice(from)
          .map((l) => l.text)
          .join("\n"),
        old.join("\n"),
      );
    },
  };
}

/**
 * The levels' searches in two rounds: exactly first (most patches match so, and a file read for
 * it alone stops early or decodes less), then every looser level in one more read. A hunk that
 * matches nowhere read a big file five times, once per level.
 */
const ROUNDS = [LEVELS.slice(0, 1), LEVELS.slice(1)];

/** The first line at or after `from` whose text under the first round's level that has one is `anchor`, or -1. */
async function findAnchor(lines: PatchLines, anchor: string, from: number): Promise<number> {
  for (const round of ROUNDS) {
    const want = round.map(([, norm]) => norm(anchor));
    const first = round.map(() => -1);
    await lines.scan(from, (text, index) => {
      round.forEach(([, norm], l) => {
        if (first[l] === -1 && norm(text) === want[l]) first[l] = index;
      });
      // The first level wins wherever the others are: nothing after it can change the answer.
      return first[0] !== -1;
    });
    const at = first.find((i) => i !== -1);
    if (at !== undefined) return at;
  }
  return -1;
}

/**
 * Per level, in LEVELS' order, where `wanted` occurs at or after `from` (only at the very end when
 * `atEnd`). Levels after the first that occurs may be left unsearched (count 0).
 */
async function occurrencesByLevel(
  lines: PatchLines,
  wanted: readonly string[],
  from: number,
  atEnd: boolean,
): Promise<Occurrences[]> {
  const k = wanted.length;
  const out: Occurrences[] = [];
  for (const round of ROUNDS) {
    if (out.some((o) => o.count > 0)) break;
    const found = round.map((): Occurrences => ({ starts: [], count: 0 }));
    // Per level, the wanted lines and the last k lines as it normalises them: each line is read once for all.
    const want = round.map(([, norm]) => wanted.map(norm));
    const recent = round.map((): string[] => []);
    await lines.scan(atEnd ? Math.max(from, lines.length - k) : from, (text, index) => {
      round.forEach(([, norm], l) => {
        const window = recent[l]!;
        window.push(norm(text));
        if (window.length > k) window.shift();
        if (window.length < k) return;
        for (let j = 0; j < k; j++) if (window[j] !== want[l]![j]) return;
        const at = found[l]!;
        at.count++;
        if (at.starts.length < MAX_LISTED_STARTS) at.starts.push(index - k + 1);
      });
      return undefined;
    });
    out.push(...found);
  }
  return out;
}

const quote = (s: string) => (s.length > 80 ? `"${s.slice(0, 80)}…"` : `"${s}"`);

/** Applies `hunks` in order to `content`; `display` names the file in messages. */
export async function applyHunks(content: string, hunks: readonly Hunk[], display: string): Promise<HunksResult> {
  const bom = content.startsWith("\uFEFF") ? "\uFEFF" : "";
  const body = bom ? content.slice(1) : content;
  const lines = splitWithEols(body);
  const counts = new Map<string, number>();
  for (const l of lines) if (l.eol !== "") counts.set(l.eol, (counts.get(l.eol) ?? 0) + 1);
  const eol = dominantEol(counts);
  const endedWithNewline = body === "" || /[\r\n]$/.test(body);
  const result = await applyHunksTo(linesInMemory(lines), hunks, display, eol);
  if (!result.ok) return result;
  const text = lines.map((l, i) => l.text + finalEol(l, i === lines.length - 1, endedWithNewline, eol)).join("");
  return { ok: true, text: bom + text, matches: result.matches };
}

/**
 * Applies `hunks` in order to `lines` (splicing each replacement in); `eol` is the file's most
 * common line ending. The final line endings (every line but the last has one, the last keeps
 * the file's choice) are the caller's.
 */
export async function applyHunksTo(
  lines: PatchLines,
  hunks: readonly Hunk[],
  display: string,
  eol: string,
): Promise<{ ok: true; matches: HunkMatch[] } | { ok: false; message: string }> {
  const matches: HunkMatch[] = [];
  let cursor = 0;
  for (const [h, hunk] of hunks.entries()) {
    const label = `hunk ${h + 1} of ${display} (patch line ${hunk.patchLine})`;
    for (const anchor of hunk.anchors) {
      const at = await findAnchor(lines, anchor, cursor);
      if (at < 0) {
        return {
          ok: false,
          message: `${label}: the @@ line ${quote(anchor)} was not found${cursor > 0 ? ` after line ${cursor}` : ""}. Name a line that is in the file (e.g. the function's signature), or read the file again.`,
        };
      }
      cursor = at + 1;
    }
    let body = hunk.lines;
    const oldOf = (some: readonly PatchLine[]) => some.filter((l) => l.kind !== "+").map((l) => l.text);
    let old = oldOf(body);
    let start = -1;
    let level: HunkMatch = "exact";
    if (old.length === 0) {
      // Only additions: after the anchor, or at the end of the file.
      start = hunk.anchors.length > 0 && !hunk.endOfFile ? cursor : lines.length;
      if (hunk.anchors.length === 0 && !hunk.endOfFile) level = "appended";
    } else {
      // A blank context line at the end is often a separator the model added, not a file line.
      let k = body.length;
      while (k > 0 && body[k - 1]!.kind === " " && body[k - 1]!.text.trim() === "") k--;
      for (const attempt of k < body.length ? [body, body.slice(0, k)] : [body]) {
        const wanted = oldOf(attempt);
        if (wanted.length === 0) continue;
        const byLevel = await occurrencesByLevel(lines, wanted, cursor, hunk.endOfFile);
        const found = byLevel.find((o) => o.count > 0);
        if (!found) continue;
        if (found.count > 1 && hunk.anchors.length === 0) {
          const where = found.starts.map((i) => i + 1).join(", ");
          return {
            ok: false,
            message: `${label}: its context and removed lines occur ${found.count} times (at lines ${where}). Add an "@@" line naming the enclosing function or class, or more context lines, so it matches one place.`,
          };
        }
        start = found.starts[0]!;
        level = LEVELS[byLevel.indexOf(found)]![0];
        body = attempt;
        old = wanted;
        break;
      }
      if (start < 0) {
        const close = await lines.closest(cursor, old);
        const hint = close
          ? ` The closest text is at lines ${close.first + cursor}-${close.last + cursor}; read the file again and copy the context exactly.`
          : " Read the file again and copy the context lines exactly.";
        return {
          ok: false,
          message: `${label}: its context and removed lines were not found${cursor > 0 ? ` after line ${cursor}` : ""}.${hint}`,
        };
      }
    }
    // Build the replacement: context keeps the file's lines, "+" lines are new.
    const matched = await lines.slice(start, old.length);
    let added = body.filter((l) => l.kind === "+").map((l) => l.text);
    if (level !== "exact" && level !== "trailing-whitespace" && added.length > 0) {
      const rebased = reindent(
        added.join("\n"),
        old,
        matched.map((l) => l.text),
        false,
      );
      if (rebased === undefined) {
        return {
          ok: false,
          message: `${label}: its context matches only when indentation is ignored, and it is indented differently from the file in inconsistent ways, so the indentation of the added lines cannot be worked out. Copy the context lines with the file's indentation.`,
        };
      }
      added = rebased.split("\n");
    }
    const lineBefore = start > 0 ? await lines.line(start - 1) : undefined;
    const lineAfter = await lines.line(start + old.length);
    const out: FileLine[] = [];
    let k = 0;
    let a = 0;
    /**
     * One change between context lines: its added lines take the endings of its removed lines in
     * order, whichever the patch wrote first ("+" lines before "-" ones too); more added lines
     * than removed take the last removed line's ending; none removed, the neighbours'.
     */
    let change: PatchLine[] = [];
    const flush = () => {
      const removed: string[] = [];
      for (const l of change) {
        if (l.kind !== "-") continue;
        const e = matched[k++]!.eol;
        if (e !== "") removed.push(e);
      }
      let neighbour: string | undefined;
      const neighbourEol = () => {
        const before = out.length > 0 ? out[out.length - 1] : lineBefore;
        if (before && before.eol !== "") return before.eol;
        const after = matched[k] ?? lineAfter;
        return after && after.eol !== "" ? after.eol : eol;
      };
      let j = 0;
      for (const l of change) {
        if (l.kind !== "+") continue;
        const e = removed[j++] ?? removed[removed.length - 1] ?? (neighbour ??= neighbourEol());
        out.push({ text: added[a++]!, eol: e });
      }
      change = [];
    };
    for (const l of body) {
      if (l.kind !== " ") {
        change.push(l);
        continue;
      }
      flush();
      out.push(matched[k++]!);
    }
    flush();
    // An insertion after an unterminated last line needs a line end before it.
    if (lineBefore && start === lines.length && lineBefore.eol === "" && out.length > 0)
      lines.splice(start - 1, 1, [{ ...lineBefore, eol }]);
    lines.splice(start, old.length, out);
    cursor = start + out.length;
    matches.push(level);
  }
  return { ok: true, matches };
}
