import { END } from "@langchain/langgraph";
import { lastAIMessage, stepsSinceLastRequest } from "../agent/turn.js";
import type { AgentStateType } from "./state.js";

/** After the model: tools when it asked for any, otherwise the run is done. Pure. */
export function routeAfterAgent(state: Pick<AgentStateType, "messages">): "approve" | typeof END {
  const last = state.messages[state.messages.length - 1];
  const ai = last ? lastAIMessage([last]) : undefined;
  return ai?.tool_calls?.length ? "approve" : END;
}

/** After the tools: back to the model, unless this run has used its steps. Pure. */
export function routeAfterTools(state: Pick<AgentStateType, "messages">, maxSteps: number): "agent" | typeof END {
  return stepsSinceLastRequest(state.messages) >= maxSteps ? END : "agent";
}

