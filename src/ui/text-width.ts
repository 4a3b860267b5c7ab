/**
 * Text as wide as the terminal shows it, for lines that must fit its width: a spinner line wider
 * than the screen wraps, and every redraw then leaves a line behind; a question wider than the
 * screen wraps in the middle of a word. Plain text only (no escape sequences).
 */

/** Code points a terminal shows two columns wide: CJK, Hangul, full-width forms, most emoji. */
const WIDE =
  /[\u1100-\u115f\u2e80-\u303e\u3041-\u33ff\u3400-\u4dbf\u4e00-\u9fff\ua000-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6\u{1f300}-\u{1f6ff}\u{1f900}-\u{1faff}\u{20000}-\u{3fffd}]/u;
/** Code points that take no column of their own: combining marks, zero-width joiners and selectors. */
const ZERO = /[\p{M}\u200b-\u200f]/u;

function charWidth(ch: string): number {
  if (ZERO.test(ch)) return 0;
  return WIDE.test(ch) ? 2 : 1;
}

/** Columns `text` takes on a terminal. */
export function displayWidth(text: string): number {
  let width = 0;
  for (const ch of text) width += charWidth(ch);
  return width;
}

/** `text` cut to at most `width` columns, ending in "…" when cut. */
export function fitWidth(text: string, width: number): string {
  if (displayWidth(text) <= width) return text;
  if (width <= 0) return "";
  return `${headOf(text, width - 1, false)}…`;
}

/** The longest start of `text` that fits in `width` columns; with `oneAtLeast`, at least one character. */
function headOf(text: string, width: number, oneAtLeast = true): string {
  let out = "";
  let used = 0;
  for (const ch of text) {
    const w = charWidth(ch);
    if ((out || !oneAtLeast) && used + w > width) break;
    out += ch;
    used += w;
  }
  return out;
}

/**
 * One line of text as lines of at most `width` columns, broken at spaces; a word longer than a
 * whole line is broken where it must. Lines after the first start with `indent`.
 */
export function wrapWords(line: string, width: number, indent = ""): string[] {
  if (displayWidth(line) <= width) return [line];
  const lines: string[] = [];
  // The line's own leading spaces stay on its first line.
  const lead = /^ */.exec(line)![0];
  let current = lead;
  let fresh = true;
  for (const word of line.slice(lead.length).split(/ +/)) {
    const sep = fresh ? "" : " ";
    if (displayWidth(current + sep + word) <= width) {
      current += sep + word;
      fresh = false;
      continue;
    }
    if (!fresh) {
      lines.push(current);
      current = indent;
    }
    let rest = word;
    while (displayWidth(current + rest) > width) {
      const head = headOf(rest, Math.max(1, width - displayWidth(current)));
      lines.push(current + head);
      current = indent;
      rest = rest.slice(head.length);
    }
    current += rest;
    fresh = false;
  }
  lines.push(current);
  return lines;
}

/**
 * Choices separated by " / " (`  [y]es / [n]o / … / or type feedback:`) as lines of at most
 * `width` columns, broken between choices where it can, and within one only when it alone is
 * wider than a line. Continuation lines are indented like the first.
 */
export function wrapChoices(prompt: string, width: number): string[] {
  const lead = /^ */.exec(prompt)![0];
  const lines: string[] = [];
  let current = "";
  for (const choice of prompt.slice(lead.length).split(" / ")) {
    const joined = current ? `${current} / ${choice}` : `${lead}${choice}`;
    // Two columns kept for the " /" a line ends with when the next choice goes on the next one.
    if (displayWidth(joined) <= width - 2) {
      current = joined;
      continue;
    }
    if (current) lines.push(`${current} /`);
    const wrapped = wrapWords(`${lead}${choice}`, width - 2, `${lead}  `);
    current = wrapped.pop()!;
    lines.push(...wrapped);
  }
  lines.push(current);
  return lines;
}

/**
 * A question for readline that fits the terminal: the text's long lines wrapped at words, and a
 * prompt too wide for one line split into lines of text with its last line as the prompt
 * (readline redraws only the prompt's own line, so it must not wrap). `columns` undefined: as is.
 */
export function fitQuestion(
  question: { text: string; prompt: string },
  columns: number | undefined,
): { text: string; prompt: string } {
  if (!columns || columns <= 0) return question;
  // One column spare: a line that fills the last column makes some terminals wrap early.
  const width = Math.max(20, columns - 1);
  const text = question.text
    .split("\n")
    .flatMap((l) => wrapWords(l, width, " ".repeat(Math.min(/^ */.exec(l)![0].length + 2, 8))))
    .join("\n");
  // The prompt ends with a space for the answer, and leaves room for a few typed characters.
  const lines = wrapChoices(question.prompt.trimEnd(), width - 8);
  const prompt = `${lines.pop()!} `;
  return { text: lines.length > 0 ? `${text}${lines.join("\n")}\n` : text, prompt };
}
