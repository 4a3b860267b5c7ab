import { redactCredentials } from "../credential-shapes.js";
import { redactorFor, type Redactor } from "./redact.js";

export { redactCredentials };

/**
 * The one output gate. Everything mini-cursor prints (the trace, notes, errors, MCP status),
 * and everything it sends elsewhere (LangSmith payloads) passes `gateText` / `gateValue`:
 *   1. known secret values are redacted (the API key, secret-looking variables of the
 *      environment and the workspace's .env, values of secret-looking MCP server variables:
 *      `addGatedSecrets`), in every form redact.ts finds;
 *   2. credentials recognisable by shape are masked: passwords in URLs (`user:pass@host`, an `@`
 *      inside the password included), `password=` in query strings and libpq conninfo strings
 *      (quoted or not), values of secret-named flags and variables on command lines
 *      (`--api-key X`, `--token=X`, `GITHUB_TOKEN=X`), and common key shapes (`sk-…`, `ghp_…`);
 *   3. control characters are made visible instead of obeyed (newlines and tabs kept), so a
 *      tool name, a server's stderr or a model's reply cannot move the cursor, retitle the
 *      window, set the clipboard or reorder text; so are Unicode's invisible format characters
 *      (bidi marks, zero-width characters, tag characters) and its line and paragraph
 *      separators, so text cannot hide, reorder or break what is shown. Text that is one line on
 *      the screen (a label, a tool name) has its line breaks made visible too (`lineBreaks`).
 * JSON output keeps its own escaping: `gateValue(v, { controls: false })` redacts only.
 */

/**
 * C0 controls but \t and \n, DEL, C1 controls, every Unicode format character (Cf: LRM/RLM, the
 * Arabic letter mark, bidi embeddings, overrides and isolates, zero-width space and joiners, the
 * word joiner, the byte order mark, tag characters…), and the line and paragraph separators.
 */
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f\p{Cf}\u2028\u2029]/gu;
/** The same, and the line feed: for text that is one line on the screen. */
const CONTROL_OR_BREAK = /[\x00-\x08\x0a-\x1f\x7f-\x9f\p{Cf}\u2028\u2029]/gu;

/**
 * The two joiners are part of writing where they stand between letters of scripts that need
 * them (Persian, Urdu, Indic scripts: non-ASCII letters or marks on both sides), and of emoji
 * sequences (👨‍👩‍👧): there they stay. Next to ASCII, or alone, they only hide text.
 */
const JOINER_IN_WRITING =
  /(?<=[^\P{L}\x00-\x7f]|\p{M})[\u200c\u200d](?=[^\P{L}\x00-\x7f]|\p{M})|(?<=\p{Extended_Pictographic}|\p{Emoji_Modifier}|\ufe0f)\u200d(?=\p{Extended_Pictographic})/uy;

function visible(ch: string, offset: number, text: string): string {
  const code = ch.codePointAt(0)!;
  if (code === 0x200c || code === 0x200d) {
    JOINER_IN_WRITING.lastIndex = offset;
    if (JOINER_IN_WRITING.test(text)) return ch;
  }
  if (code < 0x20) return `^${String.fromCharCode(code + 0x40)}`; // ESC → ^[, BEL → ^G, CR → ^M, LF → ^J
  if (code === 0x7f) return "^?";
  return `<U+${code.toString(16).toUpperCase().padStart(4, "0")}>`;
}

/** Control and format characters made visible; `lineBreaks`: line feeds too (one-line text). */
export function neutraliseControls(text: string, lineBreaks = false): string {
  const crlf = text.replace(/\r\n/g, "\n");
  return crlf.replace(lineBreaks ? CONTROL_OR_BREAK : CONTROL, visible);
}

/** The process's known secret values (the session adds them once its settings are known). */
let secrets: string[] = [];
let redactor: Redactor = redactorFor(secrets);

export function addGatedSecrets(values: readonly string[]): void {
  const next = [...new Set([...secrets, ...values.filter((v) => typeof v === "string" && v !== "")])];
  if (next.length === secrets.length) return;
  secrets = next;
  redactor = redactorFor(secrets);
}

export interface GateOptions {
  /** Make control characters visible (default); off for JSON, whose encoder escapes them. */
  controls?: boolean;
  /** The text is one line on the screen: its line breaks are made visible too. */
  lineBreaks?: boolean;
}

/** The gate for one text. */
export function gateText(text: string, options: GateOptions = {}): string {
  const redacted = redactCredentials(redactor.redact(text));
  return options.controls === false ? redacted : neutraliseControls(redacted, options.lineBreaks === true);
}

/** The gate for every string inside a value (plain objects, arrays, and objects with toJSON). */
export function gateValue<T>(value: T, options: GateOptions = {}): T {
  return gateDeep(value, options) as T;
}

function gateDeep(value: unknown, options: GateOptions): unknown {
  if (typeof value === "string") return gateText(value, options);
  if (Array.isArray(value)) return value.map((v) => gateDeep(v, options));
  if (value && typeof value === "object") {
    // Messages and other classes serialise through toJSON; gate what would be sent.
    const plain =
      typeof (value as { toJSON?: unknown }).toJSON === "function" ? (value as { toJSON(): unknown }).toJSON() : value;
    if (plain !== value) return gateDeep(plain, options);
    // Keys too: a model's argument names or a server's fields are its text as much as the values.
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [gateText(k, options), gateDeep(v, options)]));
  }
  return value;
}
