/**
 * Searching text through a normalisation while remembering where each normalised character came
 * from, so a match found in the normalised text maps back to an exact span of the original. The
 * recoveries of edit_file (Unicode punctuation, spacing inside lines, over-escaped strings) use
 * it: everything outside the matched span stays byte for byte as the file had it.
 */

/** A normalised text and, per character, the span of the original it stands for. */
export interface Normalised {
  text: string;
  starts: Uint32Array;
  ends: Uint32Array;
}

/**
 * Unicode punctuation models tend to type as ASCII (or the reverse), by its ASCII spelling: the
 * hyphen, non-breaking hyphen, figure dash, en and em dashes, horizontal bar and minus sign; the
 * no-break, figure, thin, hair and narrow no-break spaces; the single quotes and the prime; the
 * double quotes and the double prime; the ellipsis.
 */
const BY_ASCII: Readonly<Record<string, string>> = {
  "-": "\u2010\u2011\u2012\u2013\u2014\u2015\u2212",
  " ": "\u00A0\u2007\u2009\u200A\u202F",
  "'": "\u2018\u2019\u201A\u201B\u2032",
  '"': "\u201C\u201D\u201E\u201F\u2033",
  "...": "\u2026",
};
const PUNCTUATION: Readonly<Record<string, string>> = Object.fromEntries(
  Object.entries(BY_ASCII).flatMap(([ascii, chars]) => [...chars].map((c) => [c, ascii])),
);
const PUNCTUATION_CLASS = `[${Object.keys(PUNCTUATION).join("")}]`;

/** True when the text has a character PUNCTUATION would change. */
export function hasUnicodePunctuation(text: string): boolean {
  return new RegExp(PUNCTUATION_CLASS).test(text);
}

/**
 * Normalises `text` by replacing each match of `special` (a global pattern) with what `rewrite`
 * returns, keeping everything else. Copies untouched runs in bulk: a 2 MB file takes milliseconds.
 */
function build(text: string, special: RegExp, rewrite: (match: string, index: number) => string): Normalised {
  const pieces: Array<{ index: number; length: number; out: string }> = [];
  let size = text.length;
  for (const m of text.matchAll(special)) {
    const out = rewrite(m[0], m.index!);
    if (out === m[0]) continue;
    pieces.push({ index: m.index!, length: m[0].length, out });
    size += out.length - m[0].length;
  }
  const starts = new Uint32Array(size);
  const ends = new Uint32Array(size);
  const parts: string[] = [];
  let k = 0;
  let from = 0;
  // The untouched run before each piece, then the piece; an empty last piece takes the text's end.
  for (const p of [...pieces, { index: text.length, length: 0, out: "" }]) {
    parts.push(text.slice(from, p.index), p.out);
    for (let i = from; i < p.index; i++, k++) {
      starts[k] = i;
      ends[k] = i + 1;
    }
    for (let j = 0; j < p.out.length; j++, k++) {
      starts[k] = p.index;
      ends[k] = p.index + p.length;
    }
    from = p.index + p.length;
  }
  return { text: parts.join(""), starts, ends };
}

/** "\r\n" as "\n": the base every normalisation starts from. */
export function normaliseLineEndings(text: string): Normalised {
  return build(text, /\r\n/g, () => "\n");
}

/** Unicode dashes, spaces, quotes and the ellipsis in their ASCII spelling; "\r\n" as "\n". */
export function normalisePunctuation(text: string): Normalised {
  return build(text, new RegExp(`\\r\\n|${PUNCTUATION_CLASS}`, "g"), (m) => (m === "\r\n" ? "\n" : PUNCTUATION[m]!));
}

/**
 * Spacing inside lines made uniform: a run of spaces and tabs after the indentation becomes one
 * space, and trailing spaces disappear. Indentation itself is kept, so this never matches text at
 * another nesting level. "\r\n" as "\n".
 */
export function normaliseInnerSpacing(text: string): Normalised {
  return build(text, /\r\n|[ \t]+/g, (m, index) => {
    if (m === "\r\n") return "\n";
    if (index === 0 || text[index - 1] === "\n") return m; // indentation
    const after = index + m.length;
    const atLineEnd =
      after === text.length || text[after] === "\n" || (text[after] === "\r" && text[after + 1] === "\n");
    return atLineEnd ? "" : " ";
  });
}

/** How many times `of` occurs in `text` before `end`, not overlapping. */
export function occurrences(text: string, of = "\n", end = text.length): number {
  let count = 0;
  for (let i = text.indexOf(of); i !== -1 && i < end; i = text.indexOf(of, i + of.length)) count++;
  return count;
}

/** A span of the original text. */
export interface Span {
  start: number;
  end: number;
}

/** Non-overlapping occurrences of `needle` in the normalised text, as spans of the original. */
export function findNormalised(haystack: Normalised, needle: string): Span[] {
  if (needle === "") return [];
  const spans: Span[] = [];
  const { starts, ends } = haystack;
  for (let i = haystack.text.indexOf(needle); i !== -1; ) {
    const last = i + needle.length - 1;
    // A match that begins or ends inside the expansion of one character ("…" as "...") would
    // replace more of the file than the model named: skip it.
    const splitsStart = i > 0 && starts[i - 1] === starts[i];
    const splitsEnd = last + 1 < starts.length && starts[last + 1] === starts[last];
    if (!splitsStart && !splitsEnd) spans.push({ start: starts[i]!, end: ends[last]! });
    i = haystack.text.indexOf(needle, splitsStart || splitsEnd ? i + 1 : i + needle.length);
  }
  return spans;
}

/** Escapes a model may have doubled, and what each stands for in the file. */
const ESCAPES: Readonly<Record<string, string>> = {
  n: "\n",
  t: "\t",
  r: "\r",
  "'": "'",
  '"': '"',
  "`": "`",
  $: "$",
  "\\": "\\",
};

/**
 * Undoes one level of escaping ("\\n" becomes a newline, "\\'" a quote, "\\${" "${", "\\\\" one
 * backslash) and names the escapes it undid, so the same ones can be undone in newString.
 */
export function unescapeText(text: string, only?: ReadonlySet<string>): { text: string; undone: Set<string> } {
  const undone = new Set<string>();
  let out = "";
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    const next = text[i + 1];
    if (ch === "\\" && next !== undefined && ESCAPES[next] !== undefined && (!only || only.has(next))) {
      out += ESCAPES[next];
      undone.add(next);
      i++;
    } else {
      out += ch;
    }
  }
  return { text: out, undone };
}
