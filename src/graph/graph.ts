import { END, START, StateGraph, type BaseCheckpointSaver, type Pregel } from "@langchain/langgraph";
import { ToolNode } from "@langchain/langgraph/prebuilt";
import { guardedTools } from "../agent/guards.js";
import { createRuntime, type AgentRuntime, type RuntimeOptions, type RuntimeSettings } from "../agent/runtime.js";
import { subagentRuntime } from "../agent/subagents.js";
import type { SubagentType } from "../tools/task.js";
import { AgentConfiguration } from "./config.js";
import { createNodes } from "./nodes.js";
import { routeAfterAgent } from "./routing.js";
import { runSettings } from "./run-config.js";
import { AgentState } from "./state.js";
import { createSubagentNode, type SubagentGraph } from "./subagent.js";

export interface GraphOptions extends RuntimeOptions {
  /** Where threads are saved; approvals (interrupts) need one. */
  checkpointer?: BaseCheckpointSaver;
}

/** The settings a graph is built from (those of its runtime). */
export type GraphSettings = RuntimeSettings;

/**
 * The uncompiled graph: LangGraph's pieces (a StateGraph, the model bound to the tools, its
 * ToolNode, interrupt() and, once compiled, a checkpointer) with ours around them. Each step:
 *
 *   START → start_step → restore_files → summarise → agent ─┬─ (answer) ────────────────→ END
 *                                                           ├─ (5th identical turn) → repeat_stop → END
 *                                                           ├─ (may ask, or cannot run) → approve ─┐
 *                                                           └─ (every call only looks) ────────────┤
 *                 ┌──────────── a Send per call ───────────────────────────────────────────────────┘
 *                 ▼
 *   tools (ToolNode over the guarded tools) ──→ step_done ─┬─ (task calls) → subagent ×N → step_done
 *                                                          ├─ (steps left) → start_step
 *                                                          ├─ (a hook's continue: false) ──→ END
 *                                                          └─ (step limit) → step_limit → END
 *
 * The ToolNode runs the runtime's tools inside their guards (agent/guards.ts): the order of a
 * turn's calls, snapshots, hooks, the journal and the notes are ours; running the calls in
 * parallel and turning a tool's own error into its result are LangGraph's. `AgentConfiguration`
 * declares the per-run fields, so Studio's assistant panel shows them.
 */
export function createAgentGraphBuilder(runtime: AgentRuntime) {
  const nodes = createNodes(runtime);
  // One sub-agent graph per agent type: this same graph over the type's narrowed runtime, compiled
  // as a subgraph without a checkpointer of its own (it inherits the parent's thread).
  const subgraphs = new Map<string, SubagentGraph>();
  const subgraphFor = (type: SubagentType): SubagentGraph => {
    let graph = subgraphs.get(type.name);
    if (!graph)
      subgraphs.set(
        type.name,
        (graph = createAgentGraphBuilder(subagentRuntime(runtime, type)).compile() as unknown as SubagentGraph),
      );
    return graph;
  };
  // LangGraph is told the node runs a compiled graph (`subgraphs`), so getSubgraphs(), xray drawing
  // and getState(…, { subgraphs: true }) see it. Every type's graph is this same graph over a
  // narrower runtime (same nodes, same state), so the first type's stands for all.
  const first = runtime.subagents?.[0];
  const declared = first ? { subgraphs: [subgraphFor(first) as unknown as Pregel<never, never>] } : undefined;
  // ToolNode's handleToolErrors is off: the guard makes a tool's throw the call's error result in
  // ToolNode's words (guard.ts guardTool), except a failure to save the run's own state, which
  // must end the run; ToolNode's handler would make it a result the model reads, saved with the step.
  return new StateGraph(AgentState, AgentConfiguration)
    .addNode("start_step", nodes.start_step)
    .addNode("restore_files", nodes.restore_files)
    .addNode("summarise", nodes.summarise)
    .addNode("agent", nodes.agent)
    .addNode("repeat_stop", nodes.repeat_stop)
    .addNode("approve", nodes.approve, { ends: ["tools", "subagent", "start_step", "step_limit"] })
    .addNode("tools", new ToolNode(guardedTools(runtime), { handleToolErrors: false }))
    .addNode("subagent", createSubagentNode(runtime, subgraphFor) as never, declared)
    .addNode("step_done", nodes.step_done, { ends: ["subagent", "start_step", "step_limit", END] })
    .addNode("step_limit", nodes.step_limit)
    .addEdge(START, "start_step")
    .addEdge("start_step", "restore_files")
    .addEdge("restore_files", "summarise")
    .addEdge("summarise", "agent")
    .addConditionalEdges(
      "agent",
      (state, config) => {
        const { approval, maxSteps } = runSettings(runtime, config);
        return routeAfterAgent(runtime, state, approval, maxSteps);
      },
      ["repeat_stop", "approve", "tools", "subagent", END],
    )
    .addEdge("repeat_stop", END)
    .addEdge("tools", "step_done")
    .addEdge("subagent", "step_done")
    .addEdge("step_limit", END);
}

export function createGraph(settings: GraphSettings, options: GraphOptions = {}) {
  return createAgentGraphBuilder(createRuntime(settings, options)).compile({ checkpointer: options.checkpointer });
}

export type AgentGraph = ReturnType<typeof createGraph>;
