import { AsyncLocalStorage } from "node:async_hooks";
import type { ProviderNote } from "./message.js";

/**
 * What one model call shares with the wire underneath it. LangChain turns messages into the
 * request body and the response into a message; fields it does not know (DeepSeek's
 * `reasoning_content` going back, Gemini's per-call `extra_content`) and what the wire noticed
 * (thinking, dropped parameters) travel through here instead. AsyncLocalStorage, because the
 * SDK's fetch is called deep inside LangChain with no way to pass anything along.
 */

/**
 * A JSON object on the wire (a request body, a chunk, a completion): its shape differs by
 * provider, and each field is checked where it is read, so the whole is typed loosely once here.
 */
// biome-ignore lint/suspicious/noExplicitAny: wire JSON whose shape varies by provider; every field read is checked where it is read
export type Json = Record<string, any>;

/** JSON.parse, or undefined for text that is not JSON. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Provider fields of one earlier tool call, sent back on the assistant turn that made it. */
export interface ToolCallEcho {
  /** DeepSeek thinking mode: the turn's reasoning, required back on tool-call turns. */
  reasoning_content?: string;
  /** Gemini: `{ google: { thought_signature } }`, required back on each call. */
  extra_content?: unknown;
}

/** An offered tool, as the request body described it. */
export interface OfferedTool {
  name: string;
  parameters?: unknown;
  /** The tool's own check of its arguments (its zod schema), when the caller knows the tool. */
  fits?: (args: Record<string, unknown>) => boolean;
}

export interface ResponseExtras {
  /** Thinking for the trace: reasoning_content / reasoning deltas and <think> blocks. */
  thinking: string;
  /** Gemini's `extra_content` of each call, by call id. */
  extraContent: Record<string, unknown>;
  finishReason?: string;
}

export interface ProviderCall {
  /** By tool-call id: what goes back on the assistant message that made the call. */
  echoes: Map<string, ToolCallEcho>;
  /** The tools the last request offered (for recovering tool calls written as text). */
  offered?: OfferedTool[];
  /** The latest response's extras (reset when a request is retried). */
  response: ResponseExtras;
  /** Things the user should know, for the trace ("retried without temperature"). */
  notices: string[];
  /** Told at once what the user should know while the call is still waiting (waits and retries). */
  onNote?: (note: ProviderNote) => void;
  /** Chat requests sent for this call so far (the first one and every retry, a parameter dropped included). */
  requests: number;
  /** The SDK's requests for this call so far: its first and each of LangChain's retries (one per attempt). */
  attempts: number;
}

const storage = new AsyncLocalStorage<ProviderCall>();

export function emptyResponse(): ResponseExtras {
  return { thinking: "", extraContent: {} };
}

export function newProviderCall(echoes: Map<string, ToolCallEcho> = new Map()): ProviderCall {
  return { echoes, response: emptyResponse(), notices: [], requests: 0, attempts: 0 };
}

export function runInProviderCall<T>(call: ProviderCall, fn: () => Promise<T>): Promise<T> {
  return storage.run(call, fn);
}

export function currentProviderCall(): ProviderCall | undefined {
  return storage.getStore();
}
