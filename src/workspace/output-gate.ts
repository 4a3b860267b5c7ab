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
 *      window, set the clipboard or reorder text.
 * JSON output keeps its own escaping: `gateValue(v, { controls: false })` redacts only.
 */

/** C0 controls but \t and \n, DEL, C1 controls, and the Unicode bidi embedding/override/isolate marks. */
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/g;

function visible(ch: string): string {
  const code = ch.charCodeAt(0);
  if (code < 0x20) return `^${String.fromCharCode(code + 0x40)}`; // ESC → ^[, BEL → ^G, CR → ^M
  if (code === 0x7f) return "^?";
  return `<U+${code.toString(16).toUpperCase().padStart(4, "0")}>`;
}

export function neutraliseControls(text: string): string {
  return text.replace(/\r\n/g, "\n").replace(CONTROL, visible);
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
}

/** The gate for one text. */
export function gateText(text: string, options: GateOptions = {}): string {
  const redacted = redactCredentials(redactor.redact(text));
  return options.controls === false ? redacted : neutraliseControls(redacted);
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
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, gateDeep(v, options)]));
  }
  return value;
}
