import { AIMessage, type BaseMessage } from "@langchain/core/messages";

/**
 * Rough token counts for when the provider does not report usage, and for the context budget
 * before a request is sent. Imports nothing of ours, so the model call and the budget share it.
 */

/** Characters per token for the rough estimate used when the provider does not count. */
export const CHARS_PER_TOKEN = 4;
/** Per-message overhead (role, separators) in the estimate. */
export const MESSAGE_OVERHEAD_TOKENS = 4;

function textOf(message: BaseMessage): string {
  const content = message.content;
  if (typeof content === "string") return content;
  return content
    .map((part) => ("text" in part && typeof part.text === "string" ? part.text : JSON.stringify(part)))
    .join("");
}

/**
 * Estimates already made, by message: the context is measured before every request, over the whole
 * conversation, and most of it are the same message objects as the last time. An entry holds what
 * it was made from (the content, the tool call list) and is used only while the message still has
 * exactly those.
 */
const estimates = new WeakMap<BaseMessage, { content: unknown; calls: unknown; tokens: number }>();

export function estimateTokens(message: BaseMessage): number {
  const calls = AIMessage.isInstance(message) ? message.tool_calls : undefined;
  const known = estimates.get(message);
  if (known && known.content === message.content && known.calls === calls && typeof known.content === "string")
    return known.tokens;
  let chars = textOf(message).length;
  for (const call of calls ?? []) chars += call.name.length + JSON.stringify(call.args).length;
  const tokens = Math.ceil(chars / CHARS_PER_TOKEN) + MESSAGE_OVERHEAD_TOKENS;
  estimates.set(message, { content: message.content, calls, tokens });
  return tokens;
}

export function estimateTotalTokens(messages: readonly BaseMessage[]): number {
  return messages.reduce((sum, m) => sum + estimateTokens(m), 0);
}

/** Rough tokens of a request's text, as the budget counts them. */
export function estimateTextTokens(text: string): number {
  return Math.ceil(text.length / CHARS_PER_TOKEN) + MESSAGE_OVERHEAD_TOKENS;
}
