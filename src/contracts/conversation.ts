import { AIMessage, type BaseMessage } from "@langchain/core/messages";

/**
 * How the conversation is read: where its latest model turn is, and how many steps the current
 * request has taken. The engines, the guards and the policy all read it this way.
 */

/** The latest model turn, if the conversation ends with one. */
export function lastAIMessage(messages: readonly BaseMessage[]): AIMessage | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (AIMessage.isInstance(m)) return m;
    if (m.getType() === "human") return undefined;
  }
  return undefined;
}

/** Model turns one message stands for: a compaction summary (SUMMARY_KEY in compaction.ts) stands for those it replaced. */
function turnsIn(message: AIMessage): number {
  const marker = (message.response_metadata as Record<string, unknown> | undefined)?.mini_cursor_summary as
    | { steps?: number }
    | undefined;
  return marker ? (marker.steps ?? 0) : 1;
}

/** Model turns since the latest user request: the step count of the current run. */
export function stepsSinceLastRequest(messages: readonly BaseMessage[]): number {
  let steps = 0;
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.getType() === "human") break;
    if (AIMessage.isInstance(m)) steps += turnsIn(m);
  }
  return steps;
}
