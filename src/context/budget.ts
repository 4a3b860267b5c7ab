import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import {
  CHARS_PER_TOKEN,
  estimateTextTokens,
  estimateTokens,
  estimateTotalTokens,
  MESSAGE_OVERHEAD_TOKENS,
} from "../models/tokens.js";
import { TASK_TOOL } from "../tools/task.js";

// The estimates live with the model code (the call counts usage with them when the provider
// does not); the budget here is built on them.
export { estimateTextTokens, estimateTokens, estimateTotalTokens };

/** Result text for a call that never got one (the run was interrupted or hit its step limit). */
export const UNANSWERED_TOOL_RESULT =
  "This tool call was not run: the run stopped (interrupted or step limit) before it.";

/**
 * The same for a `task` call the journal has nothing on (agent/crash-recovery.ts closes one it
 * has, naming the files changed): its sub-agent may have run in part, so "not run" could be false.
 */
export const UNANSWERED_TASK_RESULT =
  "This task call has no report: the run stopped (interrupted, at its step limit, or mini-cursor was killed) before the sub-agent's report was saved. " +
  "The sub-agent may have run in part, and files it changed stay as it left them: check them before relying on them, or run the task again.";

/** What a call that never got a result is answered with. */
export const unansweredResult = (name: string): string =>
  name === TASK_TOOL ? UNANSWERED_TASK_RESULT : UNANSWERED_TOOL_RESULT;

/**
 * Providers reject a conversation where a tool call has no result. After Ctrl-C or a step
 * limit the saved thread can hold such calls, so answer them before the next request.
 */
export function answerDanglingToolCalls(messages: readonly BaseMessage[]): BaseMessage[] {
  const out: BaseMessage[] = [];
  for (let i = 0; i < messages.length; ) {
    const message = messages[i++]!;
    out.push(message);
    if (!AIMessage.isInstance(message) || !message.tool_calls?.length) continue;
    const answered = new Set<string>();
    for (let result = messages[i]; result && ToolMessage.isInstance(result); result = messages[++i]) {
      answered.add(result.tool_call_id);
      out.push(result);
    }
    for (const { id, name } of message.tool_calls)
      if (id && !answered.has(id))
        out.push(new ToolMessage({ tool_call_id: id, name, content: unansweredResult(name), status: "error" }));
  }
  return out;
}

/** The index of the last item that passes `test`, or -1 (Array.prototype.findLastIndex is ES2023). */
export function lastIndex<T>(items: readonly T[], test: (item: T) => boolean): number {
  for (let i = items.length - 1; i >= 0; i--) if (test(items[i]!)) return i;
  return -1;
}

/** Splits a history into units that must stay together: a tool-calling turn with its results. */
export function toUnits(messages: readonly BaseMessage[]): BaseMessage[][] {
  const units: BaseMessage[][] = [];
  for (const message of messages) {
    if (ToolMessage.isInstance(message) && units.length > 0) units[units.length - 1]!.push(message);
    else units.push([message]);
  }
  return units;
}

/**
 * Most of the budget (after the system prompt) the latest request may take. The rest is for the
 * turn's own tool calls and results: a request that filled the budget would leave the model no
 * room to see what its tools returned, and it would call them again and again.
 */
export const MAX_REQUEST_SHARE = 0.5;

/** The most tokens the latest request is sent with; a larger one is cut to its head and tail. */
export function requestTokenCap(budgetTokens: number, reservedTokens = 0): number {
  return Math.max(0, Math.floor((budgetTokens - reservedTokens) * MAX_REQUEST_SHARE));
}

/** Room kept for the note that says what was cut. */
const CUT_NOTE_TOKENS = 80;

/**
 * A request too large for the budget, cut to its beginning and end with a note in the middle
 * saying how much was left out and why, so the model knows it did not see all of it.
 */
function shortenRequest(message: BaseMessage, capTokens: number, budgetTokens: number): BaseMessage {
  if (typeof message.content !== "string") return message;
  const text = message.content;
  const keepChars = Math.max(0, (capTokens - MESSAGE_OVERHEAD_TOKENS - CUT_NOTE_TOKENS) * CHARS_PER_TOKEN);
  if (text.length <= keepChars) return message;
  const head = text.slice(0, Math.ceil(keepChars / 2));
  const tail = text.slice(text.length - Math.floor(keepChars / 2));
  const cut = text.length - head.length - tail.length;
  const note =
    `\n\n[… ${cut} characters of this request (about ${Math.ceil(cut / CHARS_PER_TOKEN)} tokens) are left out here: the whole request is larger ` +
    `than the context budget of ${budgetTokens} tokens allows, so only its beginning and end are shown. Say so if the missing part matters.]\n\n`;
  return new HumanMessage({ content: `${head}${note}${tail}`, id: message.id });
}

/**
 * Fits a history into `budgetTokens` by dropping the oldest turns, never splitting a tool call
 * from its result and always keeping the latest user request. The system prompt is the
 * caller's and is counted through `reservedTokens`. A latest request larger than its share
 * (MAX_REQUEST_SHARE) is sent as its head and tail with a note, so what is sent always fits.
 */
export function fitToBudget(messages: readonly BaseMessage[], budgetTokens: number, reservedTokens = 0): BaseMessage[] {
  const units = toUnits(answerDanglingToolCalls(messages));
  const latestHuman = lastIndex(units, (unit) => unit[0]!.getType() === "human");
  const cap = requestTokenCap(budgetTokens, reservedTokens);
  if (latestHuman >= 0 && estimateTotalTokens(units[latestHuman]!) > cap) {
    units[latestHuman] = [shortenRequest(units[latestHuman]![0]!, cap, budgetTokens)];
  }
  let used = reservedTokens + (latestHuman >= 0 ? estimateTotalTokens(units[latestHuman]!) : 0);
  const keep = new Set<number>(latestHuman >= 0 ? [latestHuman] : []);
  for (let index = units.length - 1; index >= 0; index--) {
    if (index === latestHuman) continue;
    const c = estimateTotalTokens(units[index]!);
    if (used + c > budgetTokens) break;
    used += c;
    keep.add(index);
  }
  // Some providers insist the first message after the system prompt is the user's.
  const firstHuman = [...keep].filter((i) => units[i]![0]!.getType() === "human").sort((a, b) => a - b)[0];
  return units.filter((_, index) => keep.has(index) && (firstHuman === undefined || index >= firstHuman)).flat();
}
