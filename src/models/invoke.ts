import { setTimeout as sleep } from "node:timers/promises";
import type { BaseMessage, InvalidToolCall, ToolCall } from "@langchain/core/messages";
import { AIMessage, AIMessageChunk } from "@langchain/core/messages";
import type { RunnableConfig, Runnable } from "@langchain/core/runnables";
import type { BaseLanguageModelInput } from "@langchain/core/language_models/base";
import { estimateTokens, estimateTotalTokens } from "./tokens.js";
import { newProviderCall, runInProviderCall, type OfferedTool, type ProviderCall } from "../provider/call-context.js";
import { echoesOf, finishProblem, withProviderExtras, type ProviderNote } from "../provider/message.js";
import { findProviderError, lostConnection } from "../provider/errors.js";
import { linkedAbort } from "../provider/linked-abort.js";

/**
 * LangChain's caller retries failed requests (429/5xx, honouring retry-after), but not a
 * stream that breaks after it started. These extra attempts cover that case only.
 */
export const STREAM_RETRIES = 2;
/** Pause before retrying a broken stream. */
const STREAM_RETRY_DELAY_MS = 500;

type ChatRunnable = Runnable<BaseLanguageModelInput, AIMessage | BaseMessage>;

export interface CallModelOptions {
  /**
   * Abandon a stream after this long without a chunk. Unset: no limit here, because the wire
   * under ChatOpenAI (provider/watchdog.ts) already limits silence to MINI_CURSOR_TIMEOUT_MS.
   */
  idleTimeoutMs?: number;
  /** Told what the provider layer noticed: thinking for the trace, parameters dropped, calls recovered from text. */
  onProviderNote?: (note: ProviderNote) => void;
  /** The tools offered, for recovering calls written as text (default: those the request body lists). */
  tools?: OfferedTool[];
}

function isAbort(err: unknown, signal?: AbortSignal): boolean {
  const e = err as { name?: string; message?: string };
  return Boolean(signal?.aborted) || e?.name === "AbortError" || /aborted|abort/i.test(e?.message ?? "");
}

/**
 * A streamed response that ended cleanly but early (no finish_reason, no [DONE]), or with no
 * message at all: the server answered, and then stopped before its answer was whole.
 */
export class IncompleteResponseError extends Error {
  override name = "IncompleteResponseError";
}

/** Requests a model call sent before it failed, by its final error (callModelWithRetry). */
const attemptsByError = new WeakMap<object, number>();

/** How many requests the model call that failed with `err` sent (each retry counts), when known. */
export function attemptsMade(err: unknown): number | undefined {
  return err !== null && typeof err === "object" ? attemptsByError.get(err) : undefined;
}

/** A dropped connection mid-stream, as opposed to an HTTP error the caller already retried. */
export function isBrokenStream(err: unknown): boolean {
  const e = err as { status?: number; message?: string; code?: string; cause?: { code?: string } };
  if (typeof e?.status === "number") return false;
  // The wire's own sentences (a silent provider, an unreachable one) are final: never retried.
  if (findProviderError(err)) return false;
  const text = `${e?.message ?? ""} ${e?.code ?? ""} ${e?.cause?.code ?? ""}`;
  return /terminated|socket hang up|ECONNRESET|premature close|other side closed|stream (ended|closed)|UND_ERR_SOCKET/i.test(
    text,
  );
}

/**
 * True for a streamed OpenAI-compatible response that never said why it finished. The SDK
 * ends quietly when a proxy or server closes the stream cleanly but early (no finish_reason,
 * no [DONE]), and LangChain then hands back the partial text, and tool calls whose arguments
 * it completed from a prefix (`{"content": "hel` becomes `{content: "hel"}`).
 */
export function isIncompleteResponse(message: BaseMessage): boolean {
  const meta = (message.response_metadata ?? {}) as { model_provider?: string; finish_reason?: string | null };
  return meta.model_provider === "openai" && !meta.finish_reason;
}

/**
 * Tool calls from the raw argument strings the provider streamed, parsed strictly. LangChain
 * parses streamed arguments leniently (a truncated `{"filePath": "a.txt"` becomes a valid call);
 * here anything that is not a JSON object goes to `invalid_tool_calls`, so the model is told
 * instead of a tool running with half its arguments.
 */
export function strictToolCalls(chunk: AIMessageChunk): {
  tool_calls: ToolCall[];
  invalid_tool_calls: InvalidToolCall[];
} {
  const rawChunks = chunk.tool_call_chunks ?? [];
  if (rawChunks.length === 0)
    return { tool_calls: chunk.tool_calls ?? [], invalid_tool_calls: chunk.invalid_tool_calls ?? [] };
  const tool_calls: ToolCall[] = [];
  const invalid_tool_calls: InvalidToolCall[] = [];
  for (const c of rawChunks) {
    const raw = c.args ?? "";
    let parsed: unknown;
    let error: string | undefined;
    try {
      parsed = raw.trim() === "" ? {} : JSON.parse(raw);
      if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed))
        error = "the arguments are not a JSON object";
    } catch (err) {
      error = (err as Error).message;
    }
    if (error === undefined && c.name) {
      tool_calls.push({ id: c.id, name: c.name, args: parsed as Record<string, unknown>, type: "tool_call" });
    } else {
      invalid_tool_calls.push({
        id: c.id,
        name: c.name,
        args: raw,
        error: error ?? "the call has no tool name",
        type: "invalid_tool_call",
      });
    }
  }
  return { tool_calls, invalid_tool_calls };
}

/**
 * The merged stream as a plain AIMessage (what the checkpointer and the reducer should keep).
 * The raw OpenAI `additional_kwargs.tool_calls` are dropped: `tool_calls` and
 * `invalid_tool_calls` carry them, and LangChain warns on the console when raw calls come
 * without parsed ones (as when every call was malformed).
 */
function toAIMessage(message: BaseMessage): AIMessage {
  if (AIMessageChunk.isInstance(message)) {
    const { tool_calls: _raw, ...additional_kwargs } = message.additional_kwargs;
    return new AIMessage({
      id: message.id,
      content: message.content,
      name: message.name,
      additional_kwargs,
      response_metadata: message.response_metadata,
      usage_metadata: message.usage_metadata,
      ...strictToolCalls(message),
    });
  }
  if (AIMessage.isInstance(message)) return message;
  return new AIMessage({ content: message.content });
}

/** Why a stream is asked for again, in a few words. */
function brokenReason(err: unknown): string {
  if (err instanceof IncompleteResponseError) return "the response ended before it was complete (no finish_reason)";
  const lost = lostConnection(err);
  if (lost) return `the response broke off (${lost})`;
  const e = err as { message?: string; code?: string; cause?: { code?: string } };
  const code = e?.cause?.code ?? e?.code;
  return `the response broke off (${typeof code === "string" && code ? code : (e?.message ?? String(err)).split("\n")[0]!.slice(0, 120)})`;
}

/**
 * One attempt: streams the response (tokens reach LangGraph's "messages" mode through the
 * callbacks) and merges it. Streaming rather than `invoke` also keeps LangChain from
 * estimating token counts with tiktoken, which downloads encodings from tiktoken.pages.dev and,
 * offline, retries for minutes before every answer.
 */
async function streamOnce(
  model: ChatRunnable,
  messages: BaseMessage[],
  config: RunnableConfig | undefined,
  idleMs: number | undefined,
  call: ProviderCall,
): Promise<AIMessage> {
  // The run's signal, or the stream falling idle, ends the call (linked-abort.ts: not AbortSignal.any, which leaked).
  const link = linkedAbort([config?.signal]);
  let idled = false;
  const signal = link.signal;
  const arm = () =>
    idleMs === undefined
      ? undefined
      : setTimeout(() => {
          idled = true;
          link.abort();
        }, idleMs);
  let timer = arm();
  let merged: BaseMessage | undefined;
  try {
    const stream = await model.stream(messages, { ...config, signal });
    for await (const chunk of stream) {
      clearTimeout(timer);
      timer = arm();
      merged =
        merged === undefined
          ? chunk
          : AIMessageChunk.isInstance(merged) && AIMessageChunk.isInstance(chunk)
            ? merged.concat(chunk)
            : chunk;
    }
  } catch (err) {
    // Falling idle aborted the stream: said as a stall, below.
    if (!idled || config?.signal?.aborted) throw err;
  } finally {
    clearTimeout(timer);
    link.dispose();
  }
  if (idled && !config?.signal?.aborted)
    throw new Error(`The model's response stream stalled: nothing arrived for ${idleMs! / 1000} s.`);
  if (merged === undefined) throw new IncompleteResponseError("The model's response stream ended without a message.");
  if (isIncompleteResponse(merged))
    throw new IncompleteResponseError(
      "The model's response stream ended before the response was complete (no finish_reason).",
    );
  const problem = finishProblem(merged);
  if (problem) throw problem;
  return withProviderExtras(toAIMessage(merged), call);
}

export async function callModelWithRetry(
  model: ChatRunnable,
  messages: BaseMessage[],
  config?: RunnableConfig,
  options: CallModelOptions = {},
): Promise<AIMessage> {
  const idleMs = options.idleTimeoutMs;
  const echoes = echoesOf(messages);
  /** Requests sent so far, LangChain's retries and these together: the final error carries them. */
  let sent = 0;
  for (let attempt = 0; ; attempt++) {
    const call = newProviderCall(echoes);
    if (options.tools) call.offered = options.tools;
    // Waits and retries are told as they happen, not after the call.
    call.onNote = options.onProviderNote;
    try {
      const message = await runInProviderCall(call, () => streamOnce(model, messages, config, idleMs, call));
      if (call.response.thinking.trim())
        options.onProviderNote?.({ kind: "thinking", text: call.response.thinking.trim() });
      for (const notice of call.notices) options.onProviderNote?.({ kind: "notice", text: notice });
      return message;
    } catch (err) {
      sent += call.attempts;
      for (const notice of call.notices) options.onProviderNote?.({ kind: "notice", text: notice });
      if (isAbort(err, config?.signal) || attempt >= STREAM_RETRIES || !isBrokenStream(err)) {
        if (err !== null && typeof err === "object" && sent > 0) attemptsByError.set(err, sent);
        throw err;
      }
      options.onProviderNote?.({
        kind: "wait",
        text: `retrying: ${brokenReason(err)} (attempt ${attempt + 2} of ${STREAM_RETRIES + 1})`,
      });
      // Cut short when the run is stopped: the next attempt then sees the abort.
      await sleep(STREAM_RETRY_DELAY_MS * (attempt + 1), undefined, { signal: config?.signal }).catch(() => undefined);
    }
  }
}

export interface UsageCount {
  input: number;
  output: number;
  estimated: boolean;
}

/** The provider's token counts when it sent them, an estimate from characters otherwise. */
export function usageOf(response: AIMessage, sent: BaseMessage[]): UsageCount {
  const u = response.usage_metadata;
  if (u && (u.input_tokens > 0 || u.output_tokens > 0)) {
    return { input: u.input_tokens, output: u.output_tokens, estimated: false };
  }
  return { input: estimateTotalTokens(sent), output: estimateTokens(response), estimated: true };
}
