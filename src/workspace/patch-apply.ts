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
 * line: an added line takes the ending of the line it replaces, else of the line before it, so a
 * mixed file stays mixed; "\r\n", "\n" and a lone "\r" all end a line.
 */
import { closestRegion } from "./closest-region.js";
import type { Hunk } from "./patch-parse.js";
import { normalisePunctuation } from "./text-normalise.js";
import { reindent } from "./text-edit.js";

export type HunkMatch =
  | "exact"
  | "unicode-normalisation"
  | "trailing-whitespace"
  | "indentation"
  | "punctuation-and-spacing"
  | "appended";

export const HUNK_MATCH_TEXT: Record<HunkMatch, string> = {
  exact: "exact",
  "unicode-normalisation": "after Unicode normalisation (NFC/NFD)",
  "trailing-whitespace": "ignoring trailing whitespace",
  indentation: "ignoring indentation; added lines re-indented to the file's",
  "punctuation-and-spacing": "ignoring indentation, spacing inside lines and Unicode punctuation",
  appended: "nothing (no context or @@ line): its lines were added at the end of the file",
};

const nfc = (s: string) => s.normalize("NFC");

const LEVELS: ReadonlyArray<[HunkMatch, (s: string) => string]> = [
  ["exact", (s) => s],
  ["unicode-normalisation", nfc],
  ["trailing-whitespace", (s) => nfc(s).trimEnd()],
  ["indentation", (s) => nfc(s).trim()],
  ["punctuation-and-spacing", (s) => normalisePunctuation(nfc(s)).text.trim().replace(/\s+/g, " ")],
];

export type HunksResult = { ok: true; text: string; matches: HunkMatch[] } | { ok: false; message: string };

interface FileLine {
  text: string;
  eol: string;
}

function splitWithEols(body: string): FileLine[] {
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
function dominantEol(lines: readonly FileLine[]): string {
  const counts = new Map<string, number>();
  for (const l of lines) if (l.eol !== "") counts.set(l.eol, (counts.get(l.eol) ?? 0) + 1);
  let best = "\n";
  for (const [e, n] of counts) if (n > (counts.get(best) ?? 0)) best = e;
  return best;
}

/** Where `wanted` occurs in `lines` at or after `from`, under one normalisation. */
function occurrences(
  lines: readonly FileLine[],
  wanted: readonly string[],
  from: number,
  norm: (s: string) => string,
): number[] {
  const target = wanted.map(norm);
  const found: number[] = [];
  for (let i = from; i + target.length <= lines.length; i++) {
    let same = true;
    for (let j = 0; j < target.length && same; j++) same = norm(lines[i + j]!.text) === target[j];
    if (same) found.push(i);
  }
  return found;
}

function findAnchor(lines: readonly FileLine[], anchor: string, from: number): number {
  for (const [, norm] of LEVELS) {
    const want = norm(anchor);
    for (let i = from; i < lines.length; i++) if (norm(lines[i]!.text) === want) return i;
  }
  return -1;
}

const quote = (s: string) => (s.length > 80 ? `"${s.slice(0, 80)}…"` : `"${s}"`);

/** Applies `hunks` in order to `content`; `display` names the file in messages. */
export function applyHunks(content: string, hunks: readonly Hunk[], display: string): HunksResult {
  const bom = content.startsWith("\uFEFF") ? "\uFEFF" : "";
  const body = bom ? content.slice(1) : content;
  const lines = splitWithEols(body);
  const eol = dominantEol(lines);
  const endedWithNewline = body === "" || /[\r\n]$/.test(body);
  const matches: HunkMatch[] = [];
  let cursor = 0;
  for (const [h, hunk] of hunks.entries()) {
    const label = `hunk ${h + 1} of ${display} (patch line ${hunk.patchLine})`;
    for (const anchor of hunk.anchors) {
      const at = findAnchor(lines, anchor, cursor);
      if (at < 0) {
        return {
          ok: false,
          message: `${label}: the @@ line ${quote(anchor)} was not found${cursor > 0 ? ` after line ${cursor}` : ""}. Name a line that is in the file (e.g. the function's signature), or read the file again.`,
        };
      }
      cursor = at + 1;
    }
    let body = hunk.lines;
    // A blank context line at the end is often a separator the model added, not a file line.
    const trimmedTail = () => {
      let k = body.length;
      while (k > 0 && body[k - 1]!.kind === " " && body[k - 1]!.text.trim() === "") k--;
      return body.slice(0, k);
    };
    let old = body.filter((l) => l.kind !== "+").map((l) => l.text);
    let start = -1;
    let level: HunkMatch = "exact";
    if (old.length === 0) {
      // Only additions: after the anchor, or at the end of the file.
      start = hunk.anchors.length > 0 && !hunk.endOfFile ? cursor : lines.length;
      if (hunk.anchors.length === 0 && !hunk.endOfFile) level = "appended";
    } else {
      for (const attempt of [body, trimmedTail()]) {
        if (attempt.length === 0 || (attempt !== body && attempt.length === body.length)) continue;
        const wanted = attempt.filter((l) => l.kind !== "+").map((l) => l.text);
        if (wanted.length === 0) continue;
        for (const [name, norm] of LEVELS) {
          let found = occurrences(lines, wanted, cursor, norm);
          if (hunk.endOfFile) found = found.filter((i) => i + wanted.length === lines.length);
          if (found.length === 0) continue;
          if (found.length > 1 && hunk.anchors.length === 0) {
            const where = found
              .slice(0, 10)
              .map((i) => i + 1)
              .join(", ");
            return {
              ok: false,
              message: `${label}: its context and removed lines occur ${found.length} times (at lines ${where}). Add an "@@" line naming the enclosing function or class, or more context lines, so it matches one place.`,
            };
          }
          start = found[0]!;
          level = name;
          body = attempt;
          old = wanted;
          break;
        }
        if (start >= 0) break;
      }
      if (start < 0) {
        const close = closestRegion(
          lines
            .slice(cursor)
            .map((l) => l.text)
            .join("\n"),
          old.join("\n"),
        );
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
    const matched = lines.slice(start, start + old.length);
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
    const out: FileLine[] = [];
    let k = 0;
    let a = 0;
    // Line endings of the lines removed since the last context line, for the lines replacing them.
    let replaced: string[] = [];
    let lastReplaced: string | undefined;
    const neighbourEol = () => {
      const before = out.length > 0 ? out[out.length - 1] : lines[start - 1];
      if (before && before.eol !== "") return before.eol;
      const after = matched[k] ?? lines[start + old.length];
      return after && after.eol !== "" ? after.eol : eol;
    };
    for (const l of body) {
      if (l.kind === " ") {
        out.push(matched[k++]!);
        replaced = [];
        lastReplaced = undefined;
      } else if (l.kind === "-") {
        const e = matched[k++]!.eol;
        if (e !== "") replaced.push(e);
      } else {
        const e = replaced.shift() ?? lastReplaced ?? neighbourEol();
        lastReplaced = e;
        out.push({ text: added[a++]!, eol: e });
      }
    }
    // An insertion after an unterminated last line needs a line end before it.
    if (start > 0 && start === lines.length && lines[start - 1]!.eol === "" && out.length > 0)
      lines[start - 1] = { ...lines[start - 1]!, eol };
    lines.splice(start, old.length, ...out);
    cursor = start + out.length;
    matches.push(level);
  }
  // Every line but the last ends with a line end; the last keeps the file's choice.
  for (let i = 0; i < lines.length - 1; i++) if (lines[i]!.eol === "") lines[i] = { ...lines[i]!, eol };
  if (lines.length > 0) {
    const lastLine = lines[lines.length - 1]!;
    lines[lines.length - 1] = { ...lastLine, eol: endedWithNewline ? lastLine.eol || eol : "" };
  }
  return { ok: true, text: bom + lines.map((l) => l.text + l.eol).join(""), matches };
}
