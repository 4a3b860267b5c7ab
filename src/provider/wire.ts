import {
  currentProviderCall,
  emptyResponse,
  type Json,
  parseJson,
  type OfferedTool,
  type ProviderCall,
} from "./call-context.js";
import { ChunkNormaliser, completionToChunks } from "./chunks.js";
import {
  clip,
  errorFields,
  isLocalUrl,
  looksLikeHtml,
  ProviderError,
  providerMessage,
  systemCode,
  unreachableError,
} from "./errors.js";
import { rejectedParameter, rejectedSchemaKeyword, rewriteRequest, type RequestOptions } from "./request.js";
import { parseSse } from "./sse.js";
import { fetchWithinLimit, WAIT_NOTICE_MS, watchedBody } from "./watchdog.js";

/**
 * The OpenAI SDK's fetch, wrapped: every chat-completions request and response passes through
 * here, for both engines, Studio and compaction. Requests are rewritten (request.ts); streams
 * and JSON completions are normalised into OpenAI's exact streaming shape (chunks.ts); error
 * bodies of any shape become OpenAI's `{"error":{"message"}}` so the SDK and the user see the
 * provider's own words; an HTML page or a refused local connection fails at once, in a sentence.
 */

type Fetch = typeof globalThis.fetch;

export interface WireOptions extends RequestOptions {
  /** Where requests go, for messages (OPENAI_BASE_URL or OpenAI's). */
  baseUrl: string;
  /** The longest silence from the provider, before the response and inside it (MINI_CURSOR_TIMEOUT_MS). */
  timeoutMs: number;
  /** A wait for the response this long is announced (default WAIT_NOTICE_MS). */
  waitNoticeMs?: number;
}

/** Statuses that may name a parameter the provider does not support. */
const PARAMETER_STATUSES = new Set([400, 422]);
/** Parameters dropped for one request at most; a provider rejecting more is reported as is. */
const MAX_DROPS_PER_REQUEST = 3;

const encoder = new TextEncoder();

function sseBody(payloads: AsyncIterable<string>): ReadableStream<Uint8Array> {
  const iterator = payloads[Symbol.asyncIterator]();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const next = await iterator.next();
        if (next.done) controller.close();
        else controller.enqueue(encoder.encode(`data: ${next.value}\n\n`));
      } catch (err) {
        controller.error(err);
      }
    },
    async cancel() {
      await iterator.return?.();
    },
  });
}

function responseHeaders(from: Headers, contentType: string): Headers {
  const headers = new Headers(from);
  headers.delete("content-length");
  headers.delete("content-encoding");
  headers.set("content-type", contentType);
  return headers;
}

/** Longest part of a malformed stream event quoted to the user. */
const MAX_QUOTED_EVENT = 120;

/** A stream event that is not a JSON object: what the provider sent, in one sentence, never retried. */
function malformedEvent(payload: string, baseUrl: string): ProviderError {
  return new ProviderError(
    `The model provider at ${baseUrl} sent a stream event that is not a JSON object (data: ${clip(payload, MAX_QUOTED_EVENT)}), so its response cannot be read. ` +
      "It does not stream OpenAI's format, or something between rewrote the stream: check OPENAI_BASE_URL, or set MINI_CURSOR_STREAM=off to ask for whole responses.",
    "error_body",
  );
}

/** The upstream stream, chunk by chunk through the normaliser. */
async function* normalisedStream(
  body: ReadableStream<Uint8Array>,
  normaliser: ChunkNormaliser,
  baseUrl: string,
): AsyncGenerator<string> {
  for await (const payload of parseSse(body)) {
    if (payload === "[DONE]") {
      for (const extra of normaliser.done()) yield JSON.stringify(extra);
      yield "[DONE]";
      return;
    }
    const data = parseJson(payload);
    // Said here in one sentence: handed on, the SDK would print its parser's dump to the terminal.
    if (data === null || typeof data !== "object" || Array.isArray(data)) throw malformedEvent(payload, baseUrl);
    for (const out of normaliser.chunk(data as Json)) yield JSON.stringify(out);
  }
}

async function* normalisedCompletion(body: Json, normaliser: ChunkNormaliser): AsyncGenerator<string> {
  for (const chunk of completionToChunks(body)) for (const out of normaliser.chunk(chunk)) yield JSON.stringify(out);
  for (const extra of normaliser.done()) yield JSON.stringify(extra);
  yield "[DONE]";
}

function offeredTools(body: Json): OfferedTool[] | undefined {
  if (!Array.isArray(body.tools)) return undefined;
  return body.tools
    .map((t: Json) => ({ name: t?.function?.name as string, parameters: t?.function?.parameters }))
    .filter((t: OfferedTool) => typeof t.name === "string");
}

function errorResponse(status: number, headers: Headers, text: string): Response {
  const message = providerMessage(text) ?? `HTTP ${status} with an empty body`;
  const body = JSON.stringify({ error: { message, ...errorFields(text) } });
  return new Response(body, { status, statusText: "", headers: responseHeaders(headers, "application/json") });
}

export function createProviderFetch(options: WireOptions, base: Fetch = globalThis.fetch): Fetch {
  /** Parameters the provider rejected: left out of every later request of this run. */
  const dropped = new Set<string>();
  /** The request options; schema keywords a gateway rejected are stripped for the rest of the run. */
  let shaping: RequestOptions = options;
  const webPage = () =>
    new ProviderError(
      `The base URL ${options.baseUrl} answered with a web page, not an API; set OPENAI_BASE_URL to the API's address (usually ending in /v1).`,
      "web_page",
    );

  const limits = { timeoutMs: options.timeoutMs, baseUrl: options.baseUrl };

  async function send(url: string, init: RequestInit | undefined, call?: ProviderCall): Promise<Response> {
    // Said once per request, while nothing has come back yet: what it waits for, and for how long at most.
    const onWait = call?.onNote && {
      afterMs: options.waitNoticeMs ?? WAIT_NOTICE_MS,
      notify: () =>
        call.onNote?.({
          kind: "wait",
          text: `waiting for the model provider at ${options.baseUrl}: no response yet (gives up after ${options.timeoutMs / 1000} s)`,
        }),
    };
    try {
      return await fetchWithinLimit((withSignal) => base(url, withSignal), init, limits, onWait || undefined);
    } catch (err) {
      const code = systemCode(err);
      // A refused connection to this machine is not going to start working in the next second.
      if (code === "ECONNREFUSED" && isLocalUrl(options.baseUrl)) {
        throw new ProviderError(
          `Could not reach the model provider at ${options.baseUrl} (ECONNREFUSED: nothing listens there); is the server running? Check OPENAI_BASE_URL.`,
          "connection_refused",
        );
      }
      throw unreachableError(options.baseUrl, err) ?? err;
    }
  }

  return async function providerFetch(input, init) {
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    const isChat = /\/chat\/completions\/?(\?|$)/.test(url) && typeof init?.body === "string";
    if (!isChat) return send(url, init);
    const call: ProviderCall | undefined = currentProviderCall();
    const original = JSON.parse(init!.body as string) as Json;
    let body = rewriteRequest(original, shaping, dropped, call);
    if (call) {
      // The engine's own tools when it named them (exact validation, and replays have no wire).
      call.offered ??= offeredTools(body);
      call.response = emptyResponse();
      call.attempts++;
    }
    let response: Response | undefined;
    for (let drops = 0; ; drops++) {
      if (call) call.requests++;
      response = await send(url, { ...init, body: JSON.stringify(body) }, call);
      if (response.ok) break;
      const text = await response.text();
      // A wrong base URL often lands on a website's own 404 page (a 5xx page from a proxy is retried as usual).
      if (response.status < 500 && looksLikeHtml(text)) throw webPage();
      const retryable = PARAMETER_STATUSES.has(response.status) && drops < MAX_DROPS_PER_REQUEST;
      const keyword = retryable && !shaping.stripAdditionalProperties ? rejectedSchemaKeyword(body, text) : undefined;
      if (keyword) {
        // Gemini behind an OpenAI-compatible gateway: the tools' schemas go without the keyword.
        shaping = { ...shaping, stripAdditionalProperties: true };
        call?.notices.push(
          `The provider rejected the JSON-schema keyword "${keyword}" in the tool schemas (HTTP ${response.status}: ${providerMessage(text)}); retrying without it for the rest of this run. MINI_CURSOR_ADDITIONAL_PROPERTIES=off leaves it out from the start.`,
        );
        body = rewriteRequest(original, shaping, dropped, call);
        continue;
      }
      const rejected = retryable ? rejectedParameter(body, text, errorFields(text).param) : undefined;
      if (!rejected || dropped.has(rejected)) return errorResponse(response.status, response.headers, text);
      dropped.add(rejected);
      call?.notices.push(
        `The provider rejected the parameter "${rejected}" (HTTP ${response.status}: ${providerMessage(text)}); retrying without it for the rest of this run.`,
      );
      body = rewriteRequest(original, shaping, dropped, call);
    }
    const contentType = response.headers.get("content-type") ?? "";
    if (/text\/html/i.test(contentType)) {
      await response.body?.cancel();
      throw webPage();
    }
    // From here every read of the body has the same silence limit as the wait for the headers.
    if (response.body)
      response = new Response(watchedBody(response.body, limits), {
        status: response.status,
        statusText: response.statusText,
        headers: response.headers,
      });
    const normaliser = new ChunkNormaliser(call?.response ?? emptyResponse());
    const { status, headers } = response;
    const stream = (payloads: AsyncIterable<string>, code: number) =>
      new Response(sseBody(payloads), { status: code, headers: responseHeaders(headers, "text/event-stream") });
    if (/event-stream/i.test(contentType) && response.body)
      return stream(normalisedStream(response.body, normaliser, options.baseUrl), status);
    // A JSON completion: asked for (MINI_CURSOR_STREAM=off), or a server that ignores `stream`.
    const text = await response.text();
    if (looksLikeHtml(text)) throw webPage();
    const parsed = parseJson(text) as Json | null | undefined;
    if (!Array.isArray(parsed?.choices)) {
      const what = parsed === undefined ? "something that is not JSON" : "an error";
      throw new ProviderError(
        `The model server at ${options.baseUrl} answered with ${what}: ${providerMessage(text)}`,
        "error_body",
      );
    }
    if (original.stream === true) return stream(normalisedCompletion(parsed, normaliser), 200);
    return new Response(text, { status, headers: responseHeaders(headers, "application/json") });
  };
}
