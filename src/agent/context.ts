import { AIMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";

/** Characters per token for the rough estimate used when the provider does not count. */
const CHARS_PER_TOKEN = 4;
/** Per-message overhead (role, separators) in the estimate. */
const MESSAGE_OVERHEAD_TOKENS = 4;

/** Result text for a call that never got one (the run was interrupted or hit its step limit). */
export const UNANSWERED_TOOL_RESULT = "This tool call was not run: the run stopped (interrupted or step limit) before it.";

function textOf(message: BaseMessage): string {
  const content = message.content;
  if (typeof content === "string") return content;
  return content.map((part) => ("text" in part && typeof part.text === "string" ? part.text : JSON.stringify(part))).join("");
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

/**
 * Providers reject a conversation where a tool call has no result. After Ctrl-C or a step
 * limit the saved thread can hold such calls, so answer them before the next request.
 */
export function answerDanglingToolCalls(messages: readonly BaseMessage[]): BaseMessage[] {
  const out: BaseMessage[] = [];
  let i = 0;
  while (i < messages.length) {
    const message = messages[i]!;
    out.push(message);
    i++;
    if (!AIMessage.isInstance(message) || !message.tool_calls?.length) continue;
    const answered = new Set<string>();
    while (i < messages.length && ToolMessage.isInstance(messages[i]!)) {
      const result = messages[i] as ToolMessage;
      answered.add(result.tool_call_id);
      out.push(result);
      i++;
    }
    for (const call of message.tool_calls) {
      if (call.id && !answered.has(call.id)) {
        out.push(new ToolMessage({ tool_call_id: call.id, name: call.name, content: UNANSWERED_TOOL_RESULT, status: "error" }));
      }
    }
  }
  return out;
}

/** Splits a history into units that must stay together: a tool-calling turn with its results. */
function toUnits(messages: readonly BaseMessage[]): BaseMessage[][] {
  const units: BaseMessage[][] = [];
  for (const message of messages) {
    if (ToolMessage.isInstance(message) && units.length > 0) units[units.length - 1]!.push(message);
    else units.push([message]);
  }
  return units;
}

/**
 * Fits a history into `budgetTokens` by dropping the oldest turns, never splitting a tool call
 * from its result and always keeping the latest user request. The system prompt is the
 * caller's and is counted through `reservedTokens`.
 */
export function fitToBudget(
  messages: readonly BaseMessage[],
  budgetTokens: number,
  reservedTokens = 0,
): BaseMessage[] {
  const units = toUnits(answerDanglingToolCalls(messages));
  let latestHuman = -1;
  units.forEach((unit, index) => {
    if (unit[0]!.getType() === "human") latestHuman = index;
  });
  const cost = (unit: BaseMessage[]) => estimateTotalTokens(unit);
  let used = reservedTokens + (latestHuman >= 0 ? cost(units[latestHuman]!) : 0);
  const keep = new Set<number>(latestHuman >= 0 ? [latestHuman] : []);
  for (let index = units.length - 1; index >= 0; index--) {
    if (index === latestHuman) continue;
    const c = cost(units[index]!);
    if (used + c > budgetTokens) break;
    used += c;
    keep.add(index);
  }
  // Some providers insist the first message after the system prompt is the user's.
  const firstHuman = [...keep].filter((i) => units[i]![0]!.getType() === "human").sort((a, b) => a - b)[0];
  return units.filter((_, index) => keep.has(index) && (firstHuman === undefined || index >= firstHuman)).flat();
}
