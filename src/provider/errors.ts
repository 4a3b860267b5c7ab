/**
 * Errors from the wire that a retry cannot fix, and the provider's own message out of an error
 * body of whatever shape it was sent in.
 */

/** Longest provider message quoted to the user. */
const MAX_PROVIDER_MESSAGE = 400;

export type ProviderErrorKind =
  | "web_page"
  | "connection_refused"
  | "unreachable"
  | "silent"
  | "content_filter"
  | "length"
  | "error_body";

/**
 * An error the user must act on, stated in one sentence. Never retried: the wire and the
 * caller's retry handler let it through at once.
 */
export class ProviderError extends Error {
  override name = "ProviderError";
  constructor(
    message: string,
    readonly kind: ProviderErrorKind,
  ) {
    super(message);
  }

  /**
   * Short on purpose: the OpenAI SDK reads `String(error)` of what fetch threw, and text such as
   * "MINI_CURSOR_TIMEOUT_MS" would make it call the error its own timeout and retry it.
   */
  override toString(): string {
    return `ProviderError (${this.kind})`;
  }
}

type Cause = { code?: unknown; message?: unknown; name?: unknown; cause?: unknown };

/** `err` and its causes, at most `depth` of them (the OpenAI SDK and undici wrap what failed). */
function* causeChain(err: unknown, depth = 6): Generator<Cause> {
  for (let e = err, i = 0; e !== null && typeof e === "object" && i < depth; i++, e = (e as Cause).cause)
    yield e as Cause;
}

/** The ProviderError in an error's cause chain (the OpenAI SDK wraps what fetch throws). */
export function findProviderError(err: unknown): ProviderError | undefined {
  for (const e of causeChain(err))
    if (e instanceof ProviderError || e.name === "ProviderError") return e as ProviderError;
  return undefined;
}

/** `text` on one line, cut to `max` characters. */
export function clip(text: string, max = MAX_PROVIDER_MESSAGE): string {
  const one = text.replace(/\s+/g, " ").trim();
  return one.length > max ? `${one.slice(0, max)}…` : one;
}

/** FastAPI/pydantic validation details (Mistral, vLLM): `msg` and where (`loc`). */
function detailText(detail: unknown): string | undefined {
  if (typeof detail === "string") return detail;
  if (!Array.isArray(detail)) return undefined;
  const parts = detail.map((d) => {
    const item = d as { msg?: unknown; loc?: unknown };
    const where = Array.isArray(item.loc) ? ` (${item.loc.join(".")})` : "";
    return typeof item.msg === "string" ? `${item.msg}${where}` : JSON.stringify(d);
  });
  return parts.join("; ");
}

function messageOf(value: unknown, depth = 0): string | undefined {
  if (depth > 4 || value === null || value === undefined) return undefined;
  if (typeof value === "string") return value.trim() || undefined;
  if (Array.isArray(value)) {
    if (value.some((item) => typeof (item as { msg?: unknown })?.msg === "string")) return detailText(value);
    for (const item of value) {
      const found = messageOf(item, depth + 1);
      if (found) return found;
    }
    return undefined;
  }
  if (typeof value !== "object") return String(value);
  const o = value as Record<string, unknown>;
  const inner = messageOf(o.error, depth + 1);
  if (inner) return inner;
  if (typeof o.message === "string" && o.message.trim()) return o.message.trim();
  if (o.message && typeof o.message === "object") {
    const m = o.message as Record<string, unknown>;
    return detailText(m.detail) || (messageOf(m, depth + 1) ?? JSON.stringify(m));
  }
  const detail = detailText(o.detail);
  if (detail) return detail;
  if (typeof o.msg === "string") return o.msg;
  if (typeof o.error_message === "string") return o.error_message;
  return undefined;
}

export function looksLikeHtml(text: string): boolean {
  return /^\s*(<!doctype html|<html|<head|<body)/i.test(text);
}

/**
 * The provider's own message from an error body: `{"error":{"message":…}}` (OpenAI),
 * `[{"error":{…}}]` (Gemini), `{"message":…}` (vLLM before 0.10.1, Mistral),
 * `{"message":{"detail":[…]}}` (Mistral 422), `{"detail":…}` (FastAPI servers), `{"error":"…"}`
 * (Ollama, LM Studio, llama.cpp), or plain text.
 */
export function providerMessage(body: string): string | undefined {
  const text = body.trim();
  if (text === "") return undefined;
  if (looksLikeHtml(text)) return "the server answered with a web page";
  try {
    const found = messageOf(JSON.parse(text));
    return found ? clip(found) : clip(text);
  } catch {
    return clip(text);
  }
}

/** The `type`, `code` and `param` of an OpenAI-shaped error body, kept when the body is rewritten. */
export function errorFields(body: string): { type?: string; code?: string; param?: string } {
  try {
    const parsed = JSON.parse(body) as unknown;
    const first = Array.isArray(parsed) ? parsed[0] : parsed;
    const e = ((first as { error?: unknown })?.error ?? first) as Record<string, unknown>;
    if (!e || typeof e !== "object") return {};
    const pick = (k: string) =>
      typeof e[k] === "string" ? (e[k] as string) : typeof e[k] === "number" ? String(e[k]) : undefined;
    return { type: pick("type"), code: pick("code"), param: pick("param") };
  } catch {
    return {};
  }
}

export function isLocalUrl(url: string): boolean {
  try {
    const host = new URL(url).hostname.replace(/^\[|\]$/g, "");
    return (
      host === "localhost" || host === "::1" || host === "0.0.0.0" || /^127\./.test(host) || host.endsWith(".localhost")
    );
  } catch {
    return false;
  }
}

/** The system error code (ECONNREFUSED…) behind a failed fetch, looking through causes and AggregateErrors. */
export function systemCode(err: unknown): string | undefined {
  const seen = new Set<unknown>();
  const queue: unknown[] = [err];
  while (queue.length > 0) {
    const e = queue.shift() as { code?: unknown; cause?: unknown; errors?: unknown[] } | undefined;
    if (!e || typeof e !== "object" || seen.has(e)) continue;
    seen.add(e);
    if (typeof e.code === "string" && (/^E[A-Z_]+$/.test(e.code) || e.code === CONNECT_TIMEOUT)) return e.code;
    if (e.cause) queue.push(e.cause);
    if (Array.isArray(e.errors)) queue.push(...e.errors);
  }
  return undefined;
}

/** undici's code for a connection not accepted within its connect timeout (10 s). */
const CONNECT_TIMEOUT = "UND_ERR_CONNECT_TIMEOUT";

/** Why a connection could not be made, by system code; these do not heal in the seconds a retry waits. */
const UNREACHABLE: Record<string, (host: string) => string> = {
  ENOTFOUND: (host) => `the name ${host} does not resolve (ENOTFOUND); check OPENAI_BASE_URL for a typo`,
  EAI_AGAIN: (host) =>
    `the name ${host} could not be looked up (EAI_AGAIN: no answer from DNS); is this machine online? Check OPENAI_BASE_URL`,
  ECONNREFUSED: () =>
    "nothing accepted the connection (ECONNREFUSED); check OPENAI_BASE_URL and that the server is running",
  ENETUNREACH: () => "there is no route to it (ENETUNREACH); is this machine online? Check OPENAI_BASE_URL",
  EHOSTUNREACH: () => "the host cannot be reached (EHOSTUNREACH); is this machine online? Check OPENAI_BASE_URL",
  EADDRNOTAVAIL: () => "no network address to connect from (EADDRNOTAVAIL); is this machine online?",
  [CONNECT_TIMEOUT]: () =>
    "the connection was not accepted within 10 s (connect timeout); is this machine online? Check OPENAI_BASE_URL",
};

/**
 * A connection that could not be made, as one sentence never retried (issue 31: an unreachable
 * provider answers within seconds, not after LangChain's backoff of about 20 s); undefined for
 * other failures.
 */
export function unreachableError(baseUrl: string, err: unknown): ProviderError | undefined {
  if (refusedPort(err)) {
    const port = /:(\d+)(?:\/|$)/.exec(baseUrl.replace(/^[a-z]+:\/\/[^/]*?@/i, ""))?.[1] ?? "";
    return new ProviderError(
      `Could not reach the model provider at ${baseUrl}: Node's fetch never connects to port ${port} (it is reserved for other protocols); check the port in OPENAI_BASE_URL.`,
      "unreachable",
    );
  }
  const code = systemCode(err);
  const why = code ? UNREACHABLE[code] : undefined;
  if (!why) return undefined;
  let host = baseUrl;
  try {
    host = new URL(baseUrl).hostname;
  } catch {
    // keep the URL as it is
  }
  return new ProviderError(`Could not reach the model provider at ${baseUrl}: ${why(host)}.`, "unreachable");
}

/** undici refuses the fetch standard's "bad ports" (1, 7, 9, 21, 22, 25…) without trying them. */
function refusedPort(err: unknown): boolean {
  return [...causeChain(err, 4)].some((e) => e.message === "bad port");
}

/** Codes of a connection that was made and then lost: closed or reset by the other side. */
const LOST_CODES = new Set(["ECONNRESET", "EPIPE", "ECONNABORTED", "UND_ERR_SOCKET", "UND_ERR_CLOSED"]);
/** What undici and Node say when the other side closed a connection mid-request. */
const LOST_MESSAGES = /^(terminated|other side closed|socket hang up)$/i;

/**
 * How a connection that was made got lost (`UND_ERR_SOCKET: other side closed`), looking through
 * the cause chain; undefined when `err` is no such loss. Not a connection that could not be made
 * (unreachableError): the server was reached, so OPENAI_BASE_URL is not what to check first.
 */
export function lostConnection(err: unknown): string | undefined {
  let found: string | undefined;
  for (const e of causeChain(err)) {
    const message = typeof e.message === "string" ? e.message.split("\n")[0]!.trim() : "";
    if (typeof e.code === "string" && LOST_CODES.has(e.code)) found = message ? `${e.code}: ${message}` : e.code;
    else if (!found && LOST_MESSAGES.test(message)) found = message;
  }
  return found;
}

/** Codes of a failure on this machine (its disk, its limits), which no provider causes. */
const LOCAL_CODES = new Set(["ENOSPC", "EDQUOT", "EROFS", "EACCES", "EPERM", "EIO", "EMFILE", "ENFILE", "ENOMEM"]);

/** The code of a failure on this machine in `err`'s cause chain (ENOSPC…), or undefined. */
export function localFailure(err: unknown): string | undefined {
  const e = [...causeChain(err)].find((c) => typeof c.code === "string" && LOCAL_CODES.has(c.code));
  return e?.code as string | undefined;
}
