import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { END, START, StateGraph, type BaseCheckpointSaver } from "@langchain/langgraph";
import { createChatModel } from "../agent/model.js";
import { buildSystemPrompt } from "../agent/prompt.js";
import { type Settings } from "../settings.js";
import { createTools, type ToolOptions } from "../tools/index.js";
import { createAgentNode, createApproveNode, createToolsNode, runOption, type AgentRuntime } from "./nodes.js";
import { routeAfterAgent, routeAfterTools } from "./routing.js";
import { AgentState } from "./state.js";

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
>;

export function createRuntime(settings: GraphSettings, options: GraphOptions = {}): AgentRuntime {
  return {
    model: options.model ?? createChatModel(settings),
    tools: options.tools ?? createTools({ workspace: settings.workspace, ...options.toolOptions }),
    systemPrompt: () => buildSystemPrompt({ workspace: settings.workspace }),
    approval: settings.approval,
    maxSteps: settings.maxSteps,
    contextTokens: settings.contextTokens,
    workspace: settings.workspace,
    // The offline model is free; a real one is priced by its name (agent/cost.ts).
    modelName: settings.provider === "offline" ? undefined : settings.model,
    prices: settings.prices,
  };
}

/** The uncompiled graph: agent -> approve -> tools -> agent, until the model answers. */
export function createBuilder(runtime: AgentRuntime) {
  return new StateGraph(AgentState)
    .addNode("agent", createAgentNode(runtime))
    .addNode("approve", createApproveNode(runtime))
    .addNode("tools", createToolsNode(runtime))
    .addEdge(START, "agent")
    .addConditionalEdges("agent", routeAfterAgent, ["approve", END])
    .addEdge("approve", "tools")
    .addConditionalEdges("tools", (state, config) => routeAfterTools(state, runOption(config, "maxSteps", runtime.maxSteps)), [
      "agent",
      END,
    ]);
}

export function createGraph(settings: GraphSettings, options: GraphOptions = {}) {
  return createBuilder(createRuntime(settings, options)).compile({ checkpointer: options.checkpointer });
}

export type AgentGraph = ReturnType<typeof createGraph>;
