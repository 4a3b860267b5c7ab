import { ProviderError } from "./errors.js";
import { linkedAbort } from "./linked-abort.js";

/**
 * Silence limits on the wire (issue 26): a provider that accepts the connection and sends
 * nothing, or goes quiet mid-response, is reported after the configured limit, once. Silence is
 * not retried: a retry would multiply the wait the user sits through, with nothing to show for
 * it. The SDK's own timeout ends at the response headers and is retried by LangChain's caller;
 * these limits are the ones that count, for the headers and for every read of the body.
 */

/** Announces a wait this long without the first byte (spinner text, a `notice` in --json). */
export const WAIT_NOTICE_MS = 2_000;

export interface SilenceLimits {
  /** The longest silence accepted: before the response starts, and between two reads of its body. */
  timeoutMs: number;
  /** Where requests go, for the sentence. */
  baseUrl: string;
}

function seconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`;
}

/** The sentence for a provider that stayed silent; `phase` says when. */
export function silenceError(limits: SilenceLimits, phase: "before" | "headers" | "midway"): ProviderError {
  const what =
    phase === "before"
      ? "accepted the connection but sent no response"
      : phase === "headers"
        ? "started a response but sent nothing in it"
        : "stopped sending in the middle of the response";
  return new ProviderError(
    `The model provider at ${limits.baseUrl} ${what} for ${seconds(limits.timeoutMs)} (the limit, MINI_CURSOR_TIMEOUT_MS=${limits.timeoutMs}); ` +
      "try again, check the server, or raise MINI_CURSOR_TIMEOUT_MS for a model that thinks long before it answers.",
    "silent",
  );
}

/**
 * `fetch` with a limit on the wait for the response to start; `init.signal` (the caller's
 * abort) still ends it at once. `onWait` is told once when the wait passes `noticeMs`.
 */
export async function fetchWithinLimit(
  send: (init: RequestInit) => Promise<Response>,
  init: RequestInit | undefined,
  limits: SilenceLimits,
  onWait?: { afterMs: number; notify: () => void },
): Promise<Response> {
  // Not disposed: the body is read after this returns and must still end with the caller's abort.
  const silence = linkedAbort([init?.signal ?? undefined]);
  let silent = false;
  const timer = setTimeout(() => {
    silent = true;
    silence.abort();
  }, limits.timeoutMs);
  const notice = onWait ? setTimeout(onWait.notify, onWait.afterMs) : undefined;
  try {
    return await send({ ...init, signal: silence.signal });
  } catch (err) {
    if (silent && !init?.signal?.aborted) throw silenceError(limits, "before");
    throw err;
  } finally {
    clearTimeout(timer);
    clearTimeout(notice);
  }
}

/**
 * The response body, erroring with the silence sentence when a read waits longer than the
 * limit (the upstream connection is then cancelled).
 */
export function watchedBody(body: ReadableStream<Uint8Array>, limits: SilenceLimits): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let received = false;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let timer: NodeJS.Timeout | undefined;
      const stalled = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(silenceError(limits, received ? "midway" : "headers")), limits.timeoutMs);
      });
      try {
        const next = await Promise.race([reader.read(), stalled]);
        if (next.done) controller.close();
        else {
          received = true;
          controller.enqueue(next.value);
        }
      } catch (err) {
        await reader.cancel().catch(() => undefined);
        controller.error(err);
      } finally {
        clearTimeout(timer);
      }
    },
    async cancel(reason) {
      await reader.cancel(reason).catch(() => undefined);
    },
  });
}
