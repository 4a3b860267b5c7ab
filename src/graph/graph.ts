import { END, START, StateGraph, type BaseCheckpointSaver } from "@langchain/langgraph";
import { createRuntime, type AgentRuntime, type RuntimeOptions, type RuntimeSettings } from "../agent/runtime.js";
import { AgentConfiguration } from "./config.js";
import { createNodes } from "./nodes.js";
import { fixedRuntime, type RuntimeSource } from "./run-config.js";
import { routeAfterAgent, routeAfterTools } from "./routing.js";
import { AgentState } from "./state.js";

export interface GraphOptions extends RuntimeOptions {
  /** Where threads are saved; approvals (interrupts) need one. */
  checkpointer?: BaseCheckpointSaver;
}

/** The settings a graph is built from (those of its runtime). */
export type GraphSettings = RuntimeSettings;

/**
 * The uncompiled graph. Each step:
 *
 *   START → compact → agent ─┬─ (answer) ─────────────────────────→ END
 *                            ├─ (5th identical turn) → guard ──────→ END
 *                            ├─ (may need a person) → approve → tools
 *                            └─ (nothing to ask) ─────────────→ tools
 *   tools ─┬─ (steps left) → compact
 *          └─ (step limit) → step_limit → END
 *
 * Given a runtime source instead of a runtime, every run picks its own (the Studio entry does
 * this). `AgentConfiguration` declares the per-run fields, so Studio's assistant panel shows them.
 */
export function createBuilder(runtime: AgentRuntime | RuntimeSource) {
  const nodes = createNodes(typeof runtime === "function" ? runtime : fixedRuntime(runtime));
  return new StateGraph(AgentState, AgentConfiguration)
    .addNode("compact", nodes.compact)
    .addNode("agent", nodes.agent)
    .addNode("guard", nodes.guard)
    .addNode("approve", nodes.approve)
    .addNode("tools", nodes.tools)
    .addNode("step_limit", nodes.step_limit)
    .addEdge(START, "compact")
    .addEdge("compact", "agent")
    .addConditionalEdges(
      "agent",
      (state, config) => routeAfterAgent(state, nodes.approval(config), nodes.toolset(config)),
      ["guard", "approve", "tools", END],
    )
    .addEdge("guard", END)
    .addEdge("approve", "tools")
    .addConditionalEdges("tools", (state, config) => routeAfterTools(state, nodes.maxSteps(config)), [
      "compact",
      "step_limit",
    ])
    .addEdge("step_limit", END);
}

export function createGraph(settings: GraphSettings, options: GraphOptions = {}) {
  return createBuilder(createRuntime(settings, options)).compile({ checkpointer: options.checkpointer });
}

export type AgentGraph = ReturnType<typeof createGraph>;
