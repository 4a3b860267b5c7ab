/**
 * Credentials recognisable by their shape, masked wherever text is shown or sent (the output
 * gate, workspace/output-gate.ts, and settings.ts's messages about a checkpointer URL). Kept at
 * the bottom layer, importing nothing, so settings.ts can use it.
 */

/** What a masked value becomes, here and in workspace/redact.ts. */
export const REDACTED = "[redacted]";

/** Parts of names that mark a secret (flags, variables, query and conninfo keys). */
const SECRET_WORD =
  "(?:password|passwd|passphrase|secret|token|api[-_]?key|access[-_]?key|private[-_]?key|credentials?)";
/** `scheme://user:password@host` — the password runs to the last `@` before the host (it may hold `@`). */
const URL_PASSWORD = /\b([a-z][a-z0-9+.-]*:\/\/[^\s:/?#@]*:)([^\s/?#]*)@(?=[^\s@/?#]*(?:[/?#\s]|$))/gi;
/** `?password=…`, `&sslpassword=…` in a URL's query (a trailing `:`, `.` or `,` is the sentence's). */
const QUERY_PASSWORD = new RegExp(`([?&][a-z_-]*${SECRET_WORD}[a-z_-]*=)([^&#\\s"'<>]*[^&#\\s"'<>:.,;)])`, "gi");
/** libpq conninfo and other `key=value` lists: `password=secret`, `password='with spaces'`. */
const CONNINFO_PASSWORD = new RegExp(
  `(^|[\\s;,(])((?:[a-z_]*${SECRET_WORD}[a-z_]*)\\s*=\\s*)('(?:[^'\\\\]|\\\\.)*'|"(?:[^"\\\\]|\\\\.)*"|[^\\s'";,)]*[^\\s'";,):.])`,
  "gi",
);
/** `--api-key X`, `--token=X`, also quoted as a printed command line has them (`'--token' 'X'`). */
const FLAG_SECRET = new RegExp(`(--?[a-z0-9-]*${SECRET_WORD}[a-z0-9-]*['"]?)(=|\\s+)(['"]?)(?!-)([^\\s'"]+)`, "gi");
/** Key shapes of common providers (OpenAI/Anthropic `sk-`, GitHub, Slack, AWS access key ids, bearer tokens). */
const KEY_SHAPES =
  /\b(?:sk-[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|xox[abprs]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16})\b|(?<=\bBearer\s+)[A-Za-z0-9._~+/-]{16,}=*/g;

/** Masks credentials recognisable by their shape (see the module comment). */
export function redactCredentials(text: string): string {
  return text
    .replace(URL_PASSWORD, (_m, head: string) => `${head}${REDACTED}@`)
    .replace(QUERY_PASSWORD, (_m, head: string) => `${head}${REDACTED}`)
    .replace(CONNINFO_PASSWORD, (_m, lead: string, head: string) => `${lead}${head}${REDACTED}`)
    .replace(FLAG_SECRET, (_m, flag: string, sep: string, quote: string) => `${flag}${sep}${quote}${REDACTED}`)
    .replace(KEY_SHAPES, REDACTED);
}

/** Schemes whose URLs locate a database: their path is a database's name, not a secret. */
const DATABASE_URL = /^(?:postgres(?:ql)?|mysql|mariadb|mongodb(?:\+srv)?|rediss?|amqps?):\/\//i;

/**
 * The passwords a URL- or conninfo-valued secret carries by shape (`scheme://user:pw@host`,
 * `?password=pw`, `password=pw` in a conninfo), as written and percent-decoded; [] for a
 * database URL without one; undefined for any other value. Such a value is a locator with a
 * password in it: redactCredentials masks the password wherever the value is shown, so only the
 * password itself needs to be a known secret, and messages can still name the host and
 * database. Any other URL (a webhook whose path is the secret) is not narrowed: the whole value
 * stays secret.
 */
export function shapedPasswords(value: string): string[] | undefined {
  const text = value.trim();
  const found: string[] = [];
  const add = (raw: string) => {
    const bare = raw.replace(/^(['"])(.*)\1$/s, "$2");
    if (!bare) return;
    found.push(bare);
    try {
      const decoded = decodeURIComponent(bare);
      if (decoded !== bare) found.push(decoded);
    } catch {
      // not percent-encoded
    }
  };
  for (const m of text.matchAll(URL_PASSWORD)) add(m[2]!);
  for (const m of text.matchAll(QUERY_PASSWORD)) add(m[2]!);
  for (const m of text.matchAll(CONNINFO_PASSWORD)) add(m[3]!);
  if (found.length > 0) return [...new Set(found)];
  return DATABASE_URL.test(text) ? [] : undefined;
}
