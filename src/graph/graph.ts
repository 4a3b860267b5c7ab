import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { END, START, StateGraph, type BaseCheckpointSaver, type LangGraphRunnableConfig } from "@langchain/langgraph";
import { createChatModel } from "../agent/model.js";
import { buildSystemPrompt } from "../agent/prompt.js";
import { type Settings } from "../settings.js";
import { createTools, type ToolOptions } from "../tools/index.js";
import { AgentConfiguration } from "./config.js";
import { createAgentNode, createApproveNode, createToolsNode, runOption, type AgentRuntime } from "./nodes.js";
import { routeAfterAgent, routeAfterTools } from "./routing.js";
import { AgentState, type AgentStateType } from "./state.js";

export interface GraphOptions {
  /** Where threads are saved; approvals (interrupts) need one. */
  checkpointer?: BaseCheckpointSaver;
  /** A model to use instead of the one the settings name (tests inject scripted models). */
  model?: BaseChatModel;
  /** Tools to use instead of `createTools` for the settings' workspace. */
  tools?: StructuredToolInterface[];
  /** Passed to `createTools` when it is called here. */
  toolOptions?: Omit<ToolOptions, "workspace">;
}

export type GraphSettings = Pick<
  Settings,
  "workspace" | "model" | "apiKey" | "baseUrl" | "provider" | "requestTimeoutMs" | "maxRetries" | "approval" | "maxSteps" | "contextTokens" | "prices"
> &
  // The provider wire's settings (src/provider/), all optional.
  Pick<Settings, "temperature" | "extraBody" | "streamOptions" | "stream" | "additionalProperties">;

export function createRuntime(settings: GraphSettings & Partial<Pick<Settings, "editTool">>, options: GraphOptions = {}): AgentRuntime {
  const tools = options.tools ?? createTools({ workspace: settings.workspace, editTool: settings.editTool, ...options.toolOptions });
  return {
    model: options.model ?? createChatModel(settings),
    tools,
    systemPrompt: () => buildSystemPrompt({ workspace: settings.workspace, tools: tools.map((t) => t.name) }),
    approval: settings.approval,
    maxSteps: settings.maxSteps,
    contextTokens: settings.contextTokens,
    workspace: settings.workspace,
    // The offline model is free; a real one is priced by its name (agent/cost.ts).
    modelName: settings.provider === "offline" ? undefined : settings.model,
    prices: settings.prices,
  };
}

/** One run's runtime, and its config with the per-run options (approval, maxSteps) settled in `configurable`. */
export interface ResolvedRun {
  runtime: AgentRuntime;
  config: LangGraphRunnableConfig;
}

/**
 * Picks the runtime for a run from its config (Studio: model, workspace, approval and max steps
 * per run). Called by every node; it should return the same runtime object for the same
 * model and workspace, since the nodes built for a runtime are kept with it.
 */
export type RuntimeResolver = (config: LangGraphRunnableConfig) => ResolvedRun;

type Node = (state: AgentStateType, config: LangGraphRunnableConfig) => ReturnType<ReturnType<typeof createAgentNode>>;

interface GraphNodes {
  agent: Node;
  approve: Node;
  tools: Node;
  maxSteps: (config: LangGraphRunnableConfig) => number;
}

function fixedNodes(runtime: AgentRuntime): GraphNodes {
  return {
    agent: createAgentNode(runtime),
    approve: createApproveNode(runtime),
    tools: createToolsNode(runtime),
    maxSteps: (config) => runOption(config, "maxSteps", runtime.maxSteps),
  };
}

/** Nodes that resolve their runtime per run, each runtime's nodes built once and kept. */
function perRunNodes(resolve: RuntimeResolver): GraphNodes {
  const built = new WeakMap<AgentRuntime, GraphNodes>();
  const nodesFor = (config: LangGraphRunnableConfig) => {
    const run = resolve(config);
    let nodes = built.get(run.runtime);
    if (!nodes) built.set(run.runtime, (nodes = fixedNodes(run.runtime)));
    return { nodes, config: run.config };
  };
  return {
    agent: async function agent(state, config) {
      const run = nodesFor(config);
      return run.nodes.agent(state, run.config);
    },
    approve: async function approve(state, config) {
      const run = nodesFor(config);
      return run.nodes.approve(state, run.config);
    },
    tools: async function tools(state, config) {
      const run = nodesFor(config);
      return run.nodes.tools(state, run.config);
    },
    maxSteps: (config) => {
      const run = nodesFor(config);
      return run.nodes.maxSteps(run.config);
    },
  };
}

/**
 * The uncompiled graph: agent -> approve -> tools -> agent, until the model answers. Given a
 * resolver instead of a runtime, every run picks its own (the Studio entry does this).
 * `AgentConfiguration` declares the per-run fields, so Studio's assistant panel shows them.
 */
export function createBuilder(runtime: AgentRuntime | RuntimeResolver) {
  const nodes = typeof runtime === "function" ? perRunNodes(runtime) : fixedNodes(runtime);
  return new StateGraph(AgentState, AgentConfiguration)
    .addNode("agent", nodes.agent)
    .addNode("approve", nodes.approve)
    .addNode("tools", nodes.tools)
    .addEdge(START, "agent")
    .addConditionalEdges("agent", routeAfterAgent, ["approve", END])
    .addEdge("approve", "tools")
    .addConditionalEdges("tools", (state, config) => routeAfterTools(state, nodes.maxSteps(config)), ["agent", END]);
}

export function createGraph(settings: GraphSettings, options: GraphOptions = {}) {
  return createBuilder(createRuntime(settings, options)).compile({ checkpointer: options.checkpointer });
}

export type AgentGraph = ReturnType<typeof createGraph>;
