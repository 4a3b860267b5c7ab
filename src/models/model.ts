import { ChatOpenAI } from "@langchain/openai";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { OfflineChatModel, OFFLINE_MODEL_NAME } from "./offline.js";
import { ResponseRecorder } from "./recorder.js";
import { loadRecording, recordingLabel, ReplayChatModel, ReplayDivergenceError } from "./replay.js";
import type { Settings } from "../settings.js";
import { AsyncCaller } from "@langchain/core/utils/async_caller";
import { findProviderError, localFailure, lostConnection, ProviderError } from "../provider/errors.js";
import { attemptsMade, IncompleteResponseError } from "./invoke.js";
import { currentProviderCall } from "../provider/call-context.js";
import { temperatureFor } from "../provider/family.js";
import { createProviderFetch } from "../provider/wire.js";
import { StateError } from "../memory/state-errors.js";
import { StateFileError } from "../memory/state-file-error.js";

/** Local servers (Ollama, LM Studio, vLLM) take any key, but the OpenAI SDK insists on one. */
const PLACEHOLDER_API_KEY = "not-needed";

export type ModelSettings = Pick<
  Settings,
  "model" | "apiKey" | "baseUrl" | "provider" | "requestTimeoutMs" | "maxRetries" | "record" | "replay"
> &
  Partial<
    Pick<Settings, "temperature" | "extraBody" | "streamOptions" | "stream" | "additionalProperties" | "waitNoticeMs">
  >;

const OPENAI_BASE_URL = "https://api.openai.com/v1";
const UNPROCESSABLE = 422;
/**
 * The SDK's own timeout (to the response headers) is set this much later than the wire's
 * silence limit (provider/watchdog.ts), so the wire's sentence, never retried, is the one seen.
 */
const SDK_TIMEOUT_MARGIN_MS = 5_000;

/** LangChain's own retry rules (429/5xx/connection), with the provider layer's final errors let through at once. */
class DefaultRetryRules extends AsyncCaller {
  readonly handler = this.onFailedAttempt;
}
const defaultFailedAttempt = new DefaultRetryRules({}).handler;
function onFailedAttempt(error: unknown, settings: Pick<ModelSettings, "maxRetries" | "requestTimeoutMs">): void {
  const final = findProviderError(error);
  if (final) throw final;
  // 422 is a validation error (Mistral, vLLM): the same request fails the same way again.
  if ((error as { status?: unknown } | undefined)?.status === UNPROCESSABLE) throw error;
  // The SDK's timeout (LangChain renames it TimeoutError): silence lasted the whole limit already.
  if ((error as { name?: unknown } | undefined)?.name === "TimeoutError")
    throw new ProviderError(
      `The model provider sent no response within MINI_CURSOR_TIMEOUT_MS (${settings.requestTimeoutMs} ms); try again, or raise the limit.`,
      "silent",
    );
  defaultFailedAttempt?.(error);
  // LangChain's caller retries it after a backoff: the spinner (or --json) says so, and why; but
  // only when an attempt is left (it calls this after the last one too), and not for a TypeError
  // its retry loop rethrows at once (one that is no network error: a bug, not a fault on the wire).
  const call = currentProviderCall();
  const attempts = settings.maxRetries + 1;
  if (!call?.onNote || call.attempts >= attempts || (error instanceof TypeError && !lostConnection(error))) return;
  call.onNote({
    kind: "wait",
    text: `retrying: ${retryReason(error)} (attempt ${call.attempts + 1} of ${attempts})`,
  });
}

/** Why a request is being retried, in a few words. */
function retryReason(error: unknown): string {
  const e = (error ?? {}) as ErrorWithStatus & { retryAfterMs?: number };
  const after =
    typeof e.retryAfterMs === "number" ? `, the provider asked to wait ${Math.ceil(e.retryAfterMs / 1000)} s` : "";
  if (e.status === 429) return `the provider is rate limiting (HTTP 429${after})`;
  if (typeof e.status === "number") return `the provider answered HTTP ${e.status}${after}`;
  const lost = lostConnection(error);
  if (lost) return `the provider closed the connection before it answered (${lost})`;
  const code = causeCode(error);
  return code
    ? `the connection failed (${code})`
    : `the request failed (${(e.message ?? String(error)).split("\n")[0]})`;
}

/**
 * The one factory for chat models. Retries (429/5xx with retry-after, via LangChain's caller),
 * the request timeout and streaming are set here, once, for both engines and Studio.
 * `wire` replaces the HTTP fetch under the provider layer (the first step's rehearsal,
 * agent/rehearsal.ts, answers from memory through the same code).
 */
export function createChatModel(settings: ModelSettings, wire?: typeof globalThis.fetch): BaseChatModel {
  // --record: the recorder observes every request through the model's own callbacks, given
  // to the constructor because ChatOpenAI's bindTools builds a new model from those fields.
  const recorder = settings.record
    ? new ResponseRecorder(settings.record, { model: recordedModelName(settings) })
    : undefined;
  const callbacks = recorder ? [recorder] : undefined;
  // Throws RecordingError (one sentence) for a file that is not a recording.
  if (settings.replay) return new ReplayChatModel(loadRecording(settings.replay), { callbacks });
  if (settings.provider === "offline") return new OfflineChatModel({ callbacks });
  // Everything between LangChain and the HTTP wire that providers need differently: src/provider/.
  const fetch = createProviderFetch(
    {
      baseUrl: settings.baseUrl ?? OPENAI_BASE_URL,
      extraBody: settings.extraBody,
      streamOptions: settings.streamOptions ?? true,
      stream: settings.stream ?? true,
      stripAdditionalProperties: settings.additionalProperties === false,
      timeoutMs: settings.requestTimeoutMs,
      waitNoticeMs: settings.waitNoticeMs,
    },
    wire,
  );
  return new ChatOpenAI({
    callbacks,
    model: settings.model,
    apiKey: settings.apiKey ?? PLACEHOLDER_API_KEY,
    configuration: { ...(settings.baseUrl ? { baseURL: settings.baseUrl } : {}), fetch },
    temperature: temperatureFor(settings.model, settings.temperature),
    onFailedAttempt: (error: unknown) => onFailedAttempt(error, settings),
    streaming: true,
    streamUsage: true,
    maxRetries: settings.maxRetries,
    timeout: settings.requestTimeoutMs + SDK_TIMEOUT_MARGIN_MS,
  });
}

/** The model a recording's header names. */
function recordedModelName(settings: ModelSettings): string {
  if (settings.replay) return `replay of ${recordingLabel(settings.replay)}`;
  return settings.provider === "offline" ? OFFLINE_MODEL_NAME : settings.model;
}

/** How the banner names the model. */
export function describeModel(settings: ModelSettings): string {
  const source = settings.replay
    ? `replay of ${recordingLabel(settings.replay)} (recorded responses, no model provider)`
    : settings.provider === "offline"
      ? `${OFFLINE_MODEL_NAME} (embedded, no API key or base URL set)`
      : `${settings.model} via ${settings.baseUrl ?? OPENAI_BASE_URL}`;
  return source + (settings.record ? `, recording to ${recordingLabel(settings.record)}` : "");
}

interface ErrorWithStatus {
  status?: number;
  code?: string;
  message?: string;
  cause?: unknown;
  lc_error_code?: string;
}

function causeCode(err: unknown): string | undefined {
  let e = err as ErrorWithStatus | undefined;
  for (let depth = 0; e && depth < 5; depth++) {
    if (typeof e.code === "string" && /^E[A-Z]+/.test(e.code)) return e.code;
    e = e.cause as ErrorWithStatus | undefined;
  }
  return undefined;
}

/** The provider's own words from an SDK error: "400 Unsupported parameter…" without the status and LangChain's appendix. */
function providerWords(message: string, status: number | undefined): string {
  const first = message.split("\n")[0]!.trim();
  const words = status !== undefined && first.startsWith(`${status} `) ? first.slice(String(status).length + 1) : first;
  return /status code \(no body\)/.test(words) ? "" : words;
}

/** One sentence a user can act on, for errors from the provider. */
export function describeModelError(err: unknown, settings: ModelSettings): string {
  // The saved state failed, not the provider: said as what it is (memory/state-errors.ts).
  if (err instanceof StateError || err instanceof StateFileError) return err.message;
  if (err instanceof ReplayDivergenceError || (err as Error | undefined)?.name === "ReplayDivergenceError")
    return (err as Error).message;
  const final = findProviderError(err);
  if (final) return final.message;
  const e = (err ?? {}) as ErrorWithStatus;
  const where = settings.baseUrl ?? OPENAI_BASE_URL;
  const message = e.message ?? String(err);
  // LangChain re-throws some HTTP errors (a context overflow) as its own, with the status only in the text.
  const status = e.status ?? (/^([45]\d\d) /.exec(message) ? Number(message.slice(0, 3)) : undefined);
  const said = providerWords(message, status);
  const saying = said ? `: ${said.replace(/\.$/, "")}` : "";
  if (status === 401 || status === 403 || e.lc_error_code === "MODEL_AUTHENTICATION") {
    return `The provider at ${where} rejected the API key (HTTP ${status ?? 401}); check OPENAI_API_KEY.`;
  }
  if (status === 404 || /model.*(not found|does not exist)|unknown model/i.test(message)) {
    return `The provider at ${where} does not know the model "${settings.model}"; pass --model (or MINI_CURSOR_MODEL) with a model it serves.`;
  }
  // Retries are claimed only when they were made: none for a quota, a wait longer than the cap, or --max-retries 0.
  const sent = attemptsMade(err) ?? 1;
  const after = sent > 1 ? ` after ${sent} attempts` : "";
  if (status === 429 && /insufficient_quota|exceeded your current quota/i.test(`${e.code ?? ""} ${message}`))
    return `The provider at ${where} says the API key's account has no quota left (HTTP 429)${saying}; check its plan and billing: waiting does not help.`;
  if (status === 429)
    return `The provider at ${where} is rate limiting requests (HTTP 429)${after}${saying}; wait and try again.`;
  if (status && status >= 500)
    return `The provider at ${where} failed with HTTP ${status}${after}${saying}; try again later.`;
  if (status && status >= 400) return `The provider at ${where} refused the request (HTTP ${status})${saying}.`;
  // Not the provider's doing: this machine's disk or limits (a state file names itself before this).
  const local = localFailure(err);
  if (local)
    return `The run failed on this machine, not at the model provider: ${message.split("\n")[0]} (${local}). ${LOCAL_ADVICE[local] ?? "Fix that and run again."}`;
  const each = sent > 1 ? `, after ${sent} attempts` : "";
  if (err instanceof IncompleteResponseError)
    return `The model provider at ${where} answered, but its response ended before it was complete (no finish_reason)${each}. It is reachable, so OPENAI_BASE_URL is right: try again, and if it keeps happening, check the server's logs, or a proxy between that cuts streams.`;
  const lost = lostConnection(err);
  if (lost && /^connection error\.?$/i.test(message.trim()))
    return `The model provider at ${where} accepted the connection but closed it before answering${each} (${lost}). Something listens there but does not answer as an OpenAI-compatible API would: check the server's logs, and that OPENAI_BASE_URL names its API (http or https, the port).`;
  if (lost)
    return `The model provider at ${where} answered, but the connection closed before its response ended${each} (${lost}). It is reachable, so OPENAI_BASE_URL is right: try again, and if it keeps happening, check the server's logs, or a proxy between that cuts long responses.`;
  const code = causeCode(err);
  if (code || /connection error|fetch failed|ECONNREFUSED|ENOTFOUND|timed? ?out/i.test(message)) {
    return `Could not reach the model provider at ${where}${code ? ` (${code})` : ""}; check OPENAI_BASE_URL and that the server is running.`;
  }
  // Not known to be the provider's: said as the run's failure, without blaming the model request.
  return `The run failed: ${message.split("\n")[0]}`;
}

/** What to do about a failure on this machine, by its code. */
const LOCAL_ADVICE: Record<string, string> = {
  ENOSPC: "The disk is full: free some space (df -h shows where) and run again.",
  EDQUOT: "The disk quota is used up: free some space and run again.",
  EROFS: "A file system it writes to is read-only: make it writable and run again.",
  EACCES: "Give your user access to the file the message names, and run again.",
  EPERM: "Give your user access to the file the message names, and run again.",
  EIO: "The disk reported an error: check it (dmesg) and run again.",
  EMFILE: "Too many files are open: raise the limit (ulimit -n) and run again.",
  ENFILE: "Too many files are open on this machine: close some programs and run again.",
  ENOMEM: "The machine is out of memory: close some programs and run again.",
};
