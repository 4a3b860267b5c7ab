import { END } from "@langchain/langgraph";
import { mayNeedApproval } from "../policy/approval.js";
import type { ToolLike } from "../policy/effects.js";
import { checkRepeats } from "../policy/loop-guard.js";
import { lastAIMessage, stepsSinceLastRequest } from "../agent/turn.js";
import type { ApprovalMode } from "../settings.js";
import type { AgentStateType } from "./state.js";

/**
 * After the model, pure:
 * - no tool calls: the model answered, the run is done (END);
 * - the same calls for the fifth turn in a row: the loop guard stops the run (guard);
 * - a call that may need a person (by what its tool declares: any but kind read): approve, then tools;
 * - otherwise straight to tools (nothing to ask about).
 */
export function routeAfterAgent(
  state: Pick<AgentStateType, "messages">,
  mode?: ApprovalMode,
  tools?: readonly ToolLike[],
): "guard" | "approve" | "tools" | typeof END {
  const last = state.messages[state.messages.length - 1];
  const ai = last ? lastAIMessage([last]) : undefined;
  const calls = ai?.tool_calls ?? [];
  if (calls.length === 0) return END;
  if (checkRepeats(state.messages).action === "stop") return "guard";
  return calls.some((call) => mayNeedApproval(call, mode, tools)) ? "approve" : "tools";
}

/** After the tools, pure: the next step, unless this run has used its steps (step_limit ends it). */
export function routeAfterTools(
  state: Pick<AgentStateType, "messages">,
  maxSteps: number,
): "start_step" | "step_limit" {
  return stepsSinceLastRequest(state.messages) >= maxSteps ? "step_limit" : "start_step";
}
