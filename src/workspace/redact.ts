import { REDACTED } from "../credential-shapes.js";
/**
 * Redaction of known secret values (the API key, secret-looking variables of the environment
 * and of the workspace's .env) wherever mini-cursor shows or saves text: tool results, saved
 * output, the terminal stream. A value is also found in the forms a command can print it in
 * with standard tools — base64 (`base64 .env`, at any of the three byte alignments, wrapped
 * or not), base64url and hex (`xxd -p`) — and across the chunk boundaries of a stream.
 * Not covered: other encodings (gzip, rot13, a reversed string...), or a value cut apart with
 * other text in between: redaction stops accidents and lazy exfiltration, not a determined
 * program (the sandbox's scrubbed environment and hidden files are what keep secrets away).
 */

export { REDACTED };
/** Shorter values are not redacted: they would match ordinary text. */
export const MIN_SECRET_LENGTH = 8;

interface Form {
  /** The text to find. */
  text: string;
  /** Line breaks may sit between its characters (base64 and hex tools wrap lines). */
  wrapped: boolean;
}

/** `s` as a pattern that matches it literally. */
export const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** The part of base64(prefix + secret) that depends only on the secret, for each alignment. */
function base64Forms(secret: Buffer): string[] {
  const out: string[] = [];
  for (let shift = 0; shift < 3; shift++) {
    const encoded = Buffer.concat([Buffer.alloc(shift), secret]).toString("base64");
    const start = Math.ceil((8 * shift) / 6);
    const end = Math.floor((8 * (shift + secret.length)) / 6);
    out.push(encoded.slice(start, end));
  }
  return out;
}

function formsOf(secret: string): Form[] {
  const bytes = Buffer.from(secret, "utf8");
  const forms: Form[] = [{ text: secret, wrapped: false }];
  for (const b64 of base64Forms(bytes)) {
    forms.push({ text: b64, wrapped: true });
    const url = b64.replace(/\+/g, "-").replace(/\//g, "_");
    if (url !== b64) forms.push({ text: url, wrapped: true });
  }
  forms.push({ text: bytes.toString("hex"), wrapped: true });
  forms.push({ text: bytes.toString("hex").toUpperCase(), wrapped: true });
  return forms.filter((f) => f.text.length >= MIN_SECRET_LENGTH);
}

export interface StreamRedactor {
  /** Redacts what can be decided now; holds back a tail that could be the start of a secret. */
  push(text: string): string;
  /** The held-back tail, redacted. */
  flush(): string;
}

export interface Redactor {
  readonly active: boolean;
  redact(text: string): string;
  /** For one stream of chunks (a secret split across two chunks is still caught). */
  stream(): StreamRedactor;
}

const LINE_BREAK = /\r?\n/g;

export function createRedactor(secrets: readonly string[]): Redactor {
  const values = [...new Set(secrets.filter((s) => typeof s === "string" && s.length >= MIN_SECRET_LENGTH))];
  const forms = values.flatMap(formsOf).sort((a, b) => b.text.length - a.text.length);
  const pattern =
    forms.length === 0
      ? undefined
      : new RegExp(
          forms
            .map((f) => (f.wrapped ? [...f.text].map(escapeRegExp).join("(?:\\r?\\n)?") : escapeRegExp(f.text)))
            .join("|"),
          "g",
        );
  const redact = (text: string) => (pattern && text ? text.replace(pattern, REDACTED) : text);

  /** Length of the longest end of `text` that could be the start of a secret (in some form). */
  const heldLength = (text: string): number => {
    let longest = 0;
    for (const form of forms) {
      const span = Math.min(text.length, form.wrapped ? form.text.length * 3 : form.text.length - 1);
      const first = form.text[0]!;
      // Candidate starts are the places holding the form's first character, earliest first.
      for (let start = text.indexOf(first, text.length - span); start !== -1; start = text.indexOf(first, start + 1)) {
        const length = text.length - start;
        if (length <= longest) break;
        const tail = text.slice(start);
        const bare = form.wrapped ? tail.replace(LINE_BREAK, "") : tail;
        if (bare.length < form.text.length && form.text.startsWith(bare)) {
          longest = length;
          break;
        }
      }
    }
    return longest;
  };

  return {
    active: pattern !== undefined,
    redact,
    stream() {
      let pending = "";
      return {
        push(text) {
          if (!pattern) return text;
          const all = redact(pending + text);
          const hold = heldLength(all);
          pending = all.slice(all.length - hold);
          return all.slice(0, all.length - hold);
        },
        flush() {
          const rest = redact(pending);
          pending = "";
          return rest;
        },
      };
    },
  };
}

const cache = new WeakMap<readonly string[], Redactor>();

/** The redactor for a list of secrets, built once per list. */
export function redactorFor(secrets: readonly string[]): Redactor {
  const r = cache.get(secrets) ?? createRedactor(secrets);
  cache.set(secrets, r);
  return r;
}

/** Redacts strings anywhere in a tool's result (a string, or content and artifact). */
export function redactValue<T>(value: T, redactor: Redactor): T {
  if (typeof value === "string") return redactor.redact(value) as T;
  if (Array.isArray(value)) return value.map((v) => redactValue(v, redactor)) as T;
  if (value && typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redactValue(v, redactor)])) as T;
  }
  return value;
}
