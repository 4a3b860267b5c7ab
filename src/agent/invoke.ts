import type { BaseMessage } from "@langchain/core/messages";
import { AIMessage } from "@langchain/core/messages";
import type { RunnableConfig, Runnable } from "@langchain/core/runnables";
import type { BaseLanguageModelInput } from "@langchain/core/language_models/base";
import { estimateTokens, estimateTotalTokens } from "./context.js";

/**
 * LangChain's caller retries failed requests (429/5xx, honouring retry-after), but not a
 * stream that breaks after it started. These extra attempts cover that case only.
 */
export const STREAM_RETRIES = 2;
/** Pause before retrying a broken stream. */
const STREAM_RETRY_DELAY_MS = 500;

type ChatRunnable = Runnable<BaseLanguageModelInput, AIMessage | BaseMessage>;

function isAbort(err: unknown, signal?: AbortSignal): boolean {
  const e = err as { name?: string; message?: string };
  return Boolean(signal?.aborted) || e?.name === "AbortError" || /aborted|abort/i.test(e?.message ?? "");
}

/** A dropped connection mid-stream, as opposed to an HTTP error the caller already retried. */
export function isBrokenStream(err: unknown): boolean {
  const e = err as { status?: number; message?: string; code?: string; cause?: { code?: string } };
  if (typeof e?.status === "number") return false;
  const text = `${e?.message ?? ""} ${e?.code ?? ""} ${e?.cause?.code ?? ""}`;
  return /terminated|socket hang up|ECONNRESET|premature close|other side closed|stream (ended|closed)|UND_ERR_SOCKET/i.test(text);
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve();
    }, { once: true });
  });
}

export async function callModelWithRetry(
  model: ChatRunnable,
  messages: BaseMessage[],
  config?: RunnableConfig,
): Promise<AIMessage> {
  for (let attempt = 0; ; attempt++) {
    try {
      const response = await model.invoke(messages, config);
      if (!AIMessage.isInstance(response)) return new AIMessage({ content: response.content });
      return response;
    } catch (err) {
      if (isAbort(err, config?.signal) || attempt >= STREAM_RETRIES || !isBrokenStream(err)) throw err;
      await sleep(STREAM_RETRY_DELAY_MS * (attempt + 1), config?.signal);
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
