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

export function estimateTokens(message: BaseMessage): number {
  let chars = textOf(message).length;
  if (AIMessage.isInstance(message)) {
    for (const call of message.tool_calls ?? []) chars += call.name.length + JSON.stringify(call.args).length;
  }
  return Math.ceil(chars / CHARS_PER_TOKEN) + MESSAGE_OVERHEAD_TOKENS;
}

export function estimateTotalTokens(messages: readonly BaseMessage[]): number {
  return messages.reduce((sum, m) => sum + estimateTokens(m), 0);
}

/** Rough tokens of a request's text, as the budget counts them. */
export function estimateTextTokens(text: string): number {
  return Math.ceil(text.length / CHARS_PER_TOKEN) + MESSAGE_OVERHEAD_TOKENS;
}
