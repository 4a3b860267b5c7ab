import type { ChalkInstance } from "chalk";
import { gateValue } from "../workspace/output-gate.js";
import { BRACKETED_PASTE_OFF, BRACKETED_PASTE_ON } from "./paste.js";
import { sanitizeForTerminal, sanitizeLine } from "./sanitize.js";

/**
 * The one way mini-cursor's output leaves the process: every line on the terminal or a pipe,
 * every `--json` line. Callers hand over pieces, never finished strings: each piece of text
 * passes the output gate here (secrets masked, control and format characters made visible), and
 * only then do our own colours go around it, so a colour of ours can never be confused with an
 * escape in the text, and no call site can forget the gate. A plain string is one line on the
 * screen (a name, a label, a description: its line breaks show as `^J`, so it cannot start a
 * fake line); text of several lines (a reply, a command's output) is a `block`. npm run lint
 * keeps writes to the terminal's streams in this file (scripts/layers.json, rule "output").
 */

export type Style = "bold" | "dim" | "red" | "green" | "yellow" | "blue" | "magenta" | "cyan" | "badge" | "current";

interface Styled {
  readonly style: Style;
  readonly body: Piece;
}

interface Block {
  readonly block: string;
}

/** A secret of ours shown on purpose to the one person it is for (see `ownCode`). */
interface OwnCode {
  readonly code: string;
}

export type Piece = string | number | Styled | Block | OwnCode | readonly Piece[] | false | undefined;

/** Text of several lines: its line breaks and tabs are kept. */
export const block = (text: string): Block => ({ block: text });

/**
 * Studio's one-time approval code on the dev server's own terminal: the gate masks it everywhere
 * else (it is one of its secrets), but here the person must read it to type it back. Only a
 * code's characters pass unmasked; anything else is gated like any text.
 */
export const ownCode = (code: string): OwnCode => ({ code });
const CODE_SHAPE = /^[A-Z0-9]{1,16}(?:-[A-Z0-9]{1,16})?$/;

/** Pieces in one of our colours (none when colour is off). */
export const styled = (style: Style, ...body: Piece[]): Styled => ({ style, body });

/** Our colours as chalk's; the two of our own are combinations. */
const chalkStyle = (c: ChalkInstance, style: Style) =>
  style === "badge" ? c.bgGreen.black : style === "current" ? c.yellow.bold : c[style];

const isList = (piece: Piece): piece is readonly Piece[] => Array.isArray(piece);

/** The pieces as the terminal gets them: gated, then coloured with `colour` when given. */
export function render(piece: Piece, colour?: ChalkInstance): string {
  if (piece === undefined || piece === false) return "";
  if (typeof piece === "string") return sanitizeLine(piece);
  if (typeof piece === "number") return String(piece);
  if (isList(piece)) return piece.map((p) => render(p, colour)).join("");
  if ("block" in piece) return sanitizeForTerminal(piece.block);
  if ("code" in piece) return CODE_SHAPE.test(piece.code) ? piece.code : sanitizeLine(piece.code);
  const inner = render(piece.body, colour);
  return colour && inner !== "" ? chalkStyle(colour, piece.style)(inner) : inner;
}

/** Writes the pieces. */
export function print(stream: NodeJS.WritableStream, piece: Piece, colour?: ChalkInstance): void {
  stream.write(render(piece, colour));
}

/**
 * DEL, C1 controls, Unicode format characters and the line and paragraph separators: JSON.stringify
 * leaves them raw (it escapes only C0), so `--json` output shown on a terminal could still act on
 * it or hide text. Escaped as `\uXXXX`, the parsed value is the same.
 */
const JSON_UNSAFE = /[\x7f-\x9f\u2028\u2029\p{Cf}]/gu;

/** JSON text with JSON_UNSAFE characters written as `\uXXXX` escapes (the same JSON value). */
export function escapeUnsafeJson(json: string): string {
  return json.replace(JSON_UNSAFE, (ch) =>
    ch
      .split("")
      .map((unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, "0")}`)
      .join(""),
  );
}

/** One `--json` line: every string in the value, keys included, gated; nothing raw left for a terminal. */
export function jsonLine(value: unknown): string {
  return `${escapeUnsafeJson(JSON.stringify(gateValue(value, { controls: false })))}\n`;
}

/** Writes one `--json` line. */
export function printJson(stream: NodeJS.WritableStream, value: unknown): void {
  stream.write(jsonLine(value));
}

/** Writes `--json` lines made by jsonLine, several in one write. */
export function printJsonLines(stream: NodeJS.WritableStream, lines: string): void {
  stream.write(lines);
}

/** The only escape sequences mini-cursor writes itself. */
const TERMINAL_CONTROLS = {
  /** Back to the start of the line and erase it (the spinner). */
  eraseLine: "\r\x1b[2K",
  bracketedPasteOn: BRACKETED_PASTE_ON,
  bracketedPasteOff: BRACKETED_PASTE_OFF,
} as const;

export function printControl(stream: NodeJS.WritableStream, control: keyof typeof TERMINAL_CONTROLS): void {
  stream.write(TERMINAL_CONTROLS[control]);
}
