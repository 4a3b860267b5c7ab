import { AIMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { canonicalJson, withNotes } from "./results.js";

/**
 * The loop guard: a model that makes the same tool call with the same arguments turn after
 * turn is told so at the third time, and stopped at the fifth. Pure, so both engines share it.
 */

/** Identical turns in a row that earn the model a note. */
export const LOOP_NOTE_AT = 3;
/** Identical turns in a row that stop the run. */
export const LOOP_STOP_AT = 5;

export interface LoopCheck {
  /** How many model turns in a row (ending with the latest) made exactly these calls. */
  repeats: number;
  action: "none" | "note" | "stop";
  /** The repeated call (the first, when a turn made several). */
  call?: { name: string; args: Record<string, unknown> };
}

/** What a turn called, independent of call ids and argument order; undefined for a turn without calls. */
export function turnSignature(message: AIMessage): string | undefined {
  const calls = message.tool_calls ?? [];
  if (calls.length === 0) return undefined;
  return calls
    .map((c) => `${c.name}(${canonicalJson(c.args)})`)
    .sort()
    .join("|");
}

/** Counts identical tool-calling turns at the end of the history (since the latest request). */
export function checkRepeats(history: readonly BaseMessage[]): LoopCheck {
  let signature: string | undefined;
  let first: AIMessage | undefined;
  let repeats = 0;
  for (let i = history.length - 1; i >= 0; i--) {
    const message = history[i]!;
    if (ToolMessage.isInstance(message)) continue;
    if (!AIMessage.isInstance(message)) break; // a user request (or anything else) ends the run of turns
    const sig = turnSignature(message);
    if (sig === undefined) break;
    if (signature === undefined) {
      signature = sig;
      first = message;
    } else if (sig !== signature) break;
    repeats++;
  }
  const action = repeats >= LOOP_STOP_AT ? "stop" : repeats >= LOOP_NOTE_AT ? "note" : "none";
  const call = first?.tool_calls?.[0];
  return { repeats, action, call: call ? { name: call.name, args: call.args } : undefined };
}

const callText = (check: LoopCheck) => (check.call ? `${check.call.name} call` : "call");

/** Appended to the result of the repeated call, for the model. */
export function loopNote(check: LoopCheck): string {
  return `[Note from mini-cursor: this is the ${ordinal(check.repeats)} time in a row you made this exact ${callText(check)} with the same arguments, and its result does not change. Do something different: fix the cause of the error, try another approach, or, if the work is done, answer without calling tools. At ${LOOP_STOP_AT} identical calls in a row the run is stopped.]`;
}

/** The result each call of the stopping turn gets (it is not run). */
export function loopStopResult(check: LoopCheck): string {
  return `Not run: this was the ${ordinal(check.repeats)} identical ${callText(check)} in a row, so mini-cursor stopped the run (loop guard). Wait for the user's next request.`;
}

/** Why the run stopped, for the user. */
export function loopStopMessage(check: LoopCheck): string {
  return `The model made the same ${callText(check)} with the same arguments ${check.repeats} times in a row, so the run was stopped. Give it more guidance, or say "continue" to let it try again.`;
}

/** What the loop guard reports (the `loop_guard` event), written once for both engines. */
export function loopGuardReport(check: LoopCheck, step: number, action: "note" | "stop") {
  return {
    step,
    action,
    tool: check.call?.name ?? "",
    repeats: check.repeats,
    message: action === "stop" ? loopStopMessage(check) : loopNote(check),
  };
}

/** The turn's results with the note added to the last one. */
export function withLoopNote(results: ToolMessage[], check: LoopCheck): ToolMessage[] {
  if (check.action !== "note" || results.length === 0) return results;
  return [...results.slice(0, -1), withNotes(results[results.length - 1]!, [loopNote(check)])];
}

/** Results for every call of a turn the guard stopped. */
export function loopStopResults(message: AIMessage, check: LoopCheck): ToolMessage[] {
  return (message.tool_calls ?? []).map(
    (c) => new ToolMessage({ tool_call_id: c.id!, name: c.name, status: "error", content: loopStopResult(check) }),
  );
}

function ordinal(n: number): string {
  const words = [
    "zeroth",
    "first",
    "second",
    "third",
    "fourth",
    "fifth",
    "sixth",
    "seventh",
    "eighth",
    "ninth",
    "tenth",
  ];
  return words[n] ?? `${n}th`;
}
