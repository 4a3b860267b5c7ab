import { END, START, StateGraph, type BaseCheckpointSaver } from "@langchain/langgraph";
import { createRuntime, type AgentRuntime, type RuntimeOptions, type RuntimeSettings } from "../agent/runtime.js";
import { AgentConfiguration } from "./config.js";
import { createNodes } from "./nodes.js";
import { fixedRuntime, runReaders, type RuntimeSource } from "./run-config.js";
import { routeAfterAgent, routeAfterTools } from "./routing.js";
import { AgentState } from "./state.js";
import { createSubagentNodes, subagentSends, subagentSource, type SubagentGraph } from "./subagent.js";

export interface GraphOptions extends RuntimeOptions {
  /** Where threads are saved; approvals (interrupts) need one. */
  checkpointer?: BaseCheckpointSaver;
}

/** The settings a graph is built from (those of its runtime). */
export type GraphSettings = RuntimeSettings;

/**
 * The uncompiled graph. Each step:
 *
 *   START → start_step → restore_files → summarise → agent ─┬─ (answer) ──────────────→ END
 *                                                           ├─ (5th identical turn) → guard → END
 *                                                           ├─ (may need a person) → approve → tools
 *                                                           └─ (nothing to ask) ────→ tools
 *   tools ─┬─ (task calls) → subagent ×N (in parallel, each a subgraph) → subagents_done ─┐
 *          ├─ (steps left) → start_step                                                   │
 *          └─ (step limit) → step_limit → END          (the same two ways) ←──────────────┘
 *
 * Given a runtime source instead of a runtime, every run picks its own (the Studio entry does
 * this). `AgentConfiguration` declares the per-run fields, so Studio's assistant panel shows them.
 */
export function createAgentGraphBuilder(runtime: AgentRuntime | RuntimeSource) {
  const source = typeof runtime === "function" ? runtime : fixedRuntime(runtime);
  const nodes = createNodes(source);
  const run = runReaders(source);
  // The sub-agent is this same graph, compiled as a subgraph without a checkpointer of its own
  // (it inherits the parent's thread); built on first use, as a sub-agent's own graph never runs one.
  let subgraph: SubagentGraph | undefined;
  const sub = createSubagentNodes(
    source,
    () => (subgraph ??= createAgentGraphBuilder(subagentSource(source)).compile() as unknown as SubagentGraph),
  );
  const afterTools = (state: Parameters<typeof routeAfterTools>[0], config: Parameters<typeof run.maxSteps>[0]) => {
    const sends = subagentSends(state);
    return sends.length > 0 ? sends : routeAfterTools(state, run.maxSteps(config));
  };
  return new StateGraph(AgentState, AgentConfiguration)
    .addNode("start_step", nodes.start_step)
    .addNode("restore_files", nodes.restore_files)
    .addNode("summarise", nodes.summarise)
    .addNode("agent", nodes.agent)
    .addNode("guard", nodes.guard)
    .addNode("approve", nodes.approve)
    .addNode("tools", nodes.tools)
    .addNode("subagent", sub.subagent as never)
    .addNode("subagents_done", sub.subagents_done)
    .addNode("step_limit", nodes.step_limit)
    .addEdge(START, "start_step")
    .addEdge("start_step", "restore_files")
    .addEdge("restore_files", "summarise")
    .addEdge("summarise", "agent")
    .addConditionalEdges(
      "agent",
      (state, config) => routeAfterAgent(state, run.approvalMode(config), run.tools(config)),
      ["guard", "approve", "tools", END],
    )
    .addEdge("guard", END)
    .addEdge("approve", "tools")
    .addConditionalEdges("tools", afterTools, ["subagent", "start_step", "step_limit"])
    .addEdge("subagent", "subagents_done")
    .addConditionalEdges("subagents_done", (state, config) => routeAfterTools(state, run.maxSteps(config)), [
      "start_step",
      "step_limit",
    ])
    .addEdge("step_limit", END);
}

export function createGraph(settings: GraphSettings, options: GraphOptions = {}) {
  return createAgentGraphBuilder(createRuntime(settings, options)).compile({ checkpointer: options.checkpointer });
}

export type AgentGraph = ReturnType<typeof createGraph>;
