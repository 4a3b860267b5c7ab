import { END, Send } from "@langchain/langgraph";
import type { AIMessage, BaseMessage } from "@langchain/core/messages";
import { ToolMessage } from "@langchain/core/messages";
import { lastAIMessage, stepsSinceLastRequest } from "../contracts/conversation.js";
import type { ApprovalMode } from "../contracts/modes.js";
import { checkRepeats } from "../guard/repeats.js";
import { mayNeedApproval } from "../policy/approval.js";
import type { ToolLike } from "../policy/effects.js";
import { isTaskCall } from "../agent/subagents.js";
import { turnOf } from "../agent/tool-journal-step.js";
import type { SubagentInput } from "./subagent.js";
import { unrunnableCallResults } from "../agent/turn.js";
import { dispatchCalls } from "../agent/dispatch.js";
import type { AgentRuntime } from "../agent/runtime.js";
import type { AgentStateType } from "./state.js";

/**
 * Where a step goes, as pure functions of the state (and what the run's tools declare):
 * - after the model: the answer ends the run; a fifth identical turn stops it (repeat_stop);
 *   a turn with a call that may need a person, or cannot run, goes through approve; one whose
 *   every call only looks goes straight to its calls;
 * - the calls: one LangGraph Send per call to the ToolNode (`tools`), in the model's order, each
 *   with the ids of the calls that run with it (the order guard reads them); the turn's `task`
 *   calls after them, one Send each to `subagent`; when nothing is left, the next step or the
 *   step limit.
 */

type ToolCall = NonNullable<AIMessage["tool_calls"]>[number];

/**
 * The latest turn's calls that have no result yet, in the model's order. Only results after that
 * turn count: some servers number every response's calls from call_0, so an id can recur.
 */
export function pendingCalls(messages: readonly BaseMessage[]): ToolCall[] {
  const turn = lastAIMessage(messages);
  if (!turn) return [];
  const answered = new Set(
    messages
      .slice(messages.lastIndexOf(turn) + 1)
      .filter(ToolMessage.isInstance)
      .map((m) => m.tool_call_id),
  );
  return (turn.tool_calls ?? []).filter((c) => !answered.has(c.id!));
}

/** The next step, or the step limit when the run has used its steps. */
export function nextStep(messages: readonly BaseMessage[], maxSteps: number): "start_step" | "step_limit" {
  return stepsSinceLastRequest(messages) >= maxSteps ? "step_limit" : "start_step";
}

/**
 * What runs next of a turn: its tool calls (`calls`, the person's arguments where they edited one;
 * by default the pending ones), else its pending task calls, else the next step.
 */
export function dispatch(
  runtime: AgentRuntime,
  state: Pick<AgentStateType, "messages">,
  maxSteps: number,
  calls: readonly ToolCall[] = pendingCalls(state.messages).filter((c) => !isTaskCall(c)),
): Send[] | "start_step" | "step_limit" {
  if (calls.length > 0) {
    const model = lastAIMessage(state.messages)?.tool_calls ?? [];
    return dispatchCalls(runtime, state.messages, calls, model).map(
      ({ call, dispatch }) => new Send("tools", { ...dispatch, lg_tool_call: { ...call, type: "tool_call" } }),
    );
  }
  const tasks = pendingCalls(state.messages).filter(isTaskCall);
  const turn = turnOf(state.messages);
  if (tasks.length > 0) return tasks.map((call) => new Send("subagent", { call, turn } satisfies SubagentInput));
  return nextStep(state.messages, maxSteps);
}

/** After the model, pure (see above). */
export function routeAfterAgent(
  runtime: AgentRuntime,
  state: Pick<AgentStateType, "messages">,
  mode: ApprovalMode,
  maxSteps: number,
): "repeat_stop" | "approve" | typeof END | Send[] | "start_step" | "step_limit" {
  const { tools } = runtime;
  const ai = lastAIMessage(state.messages.slice(-1));
  const calls = ai?.tool_calls ?? [];
  if (calls.length === 0) return END;
  if (checkRepeats(state.messages).action === "stop") return "repeat_stop";
  const asks = calls.some((call) => mayNeedApproval(call, mode, tools as readonly ToolLike[]));
  return asks || unrunnableCallResults(ai!, tools).length > 0 ? "approve" : dispatch(runtime, state, maxSteps);
}
