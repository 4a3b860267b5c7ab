import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { BaseCheckpointSaver } from "@langchain/langgraph";
import type { Engine } from "../agent/engine.js";
import type { EventSink } from "../agent/events.js";
import { describeModel } from "../agent/model.js";
import { createRuntime } from "../agent/runtime.js";
import { createBuilder } from "../graph/graph.js";
import { createLoopEngine } from "../loop/loop.js";
import { createGraphEngine } from "../graph/stream.js";
import { graphThreadHistory } from "../graph/rewind.js";
import { loadLoopThread, saveLoopThread } from "../loop/memory.js";
import { loopThreadHistory } from "../loop/rewind.js";
import type { ThreadHistory } from "../agent/thread-history.js";
import { createSqliteCheckpointer } from "../memory/checkpointer.js";
import type { SandboxPlan } from "../security/sandbox.js";
import type { Settings } from "../settings.js";
import type { Toolset } from "../tools/index.js";
import { createAgentTools } from "./tools.js";
import type { McpHub } from "../mcp/hub.js";

export interface AgentParts {
  engine: Engine;
  tools: Toolset;
  /** Whether commands run in bubblewrap, and the banner line saying so. */
  sandbox: SandboxPlan;
  /** The engine's saved threads, for /undo and /rewind. */
  history: ThreadHistory;
  /** MCP servers of this session (none configured: undefined). */
  mcp?: McpHub;
  /** Releases what the agent holds (the SQLite handle, MCP servers); background processes are the caller's. */
  close(): Promise<void>;
}

export interface AgentPartsOptions {
  /** Receives live command output as tool_output events. */
  emit: EventSink;
  model?: BaseChatModel;
  checkpointer?: BaseCheckpointSaver;
  /** MCP servers' tools (app/mcp.ts); stopped by `close()`. */
  mcp?: McpHub;
}

/** Builds the engine the settings ask for, with its tools and memory. */
export function createAgentParts(settings: Settings, options: AgentPartsOptions): AgentParts {
  const { tools, sandbox } = createAgentTools(
    settings,
    (chunk) => options.emit({ type: "tool_output", id: chunk.toolCallId ?? "", stream: chunk.stream, text: chunk.text }),
    options.mcp,
  );
  const release = async () => {
    sandbox.sandbox?.dispose();
    await options.mcp?.close();
  };
  const meta = { engine: settings.engine, model: describeModel(settings), provider: settings.provider, workspace: settings.workspace };
  // One runtime contract for either engine (agent/runtime.ts); they differ only in orchestration.
  const runtime = createRuntime(settings, { model: options.model, tools });
  if (settings.engine === "loop") {
    const engine = createLoopEngine({ runtime, meta, modelSettings: settings });
    const history = loopThreadHistory({
      load: (id) => loadLoopThread(settings.workspace, id),
      save: (id, thread) => saveLoopThread(settings.workspace, id, thread),
    });
    return { engine, tools, sandbox, history, mcp: options.mcp, close: release };
  }
  const checkpointer = options.checkpointer ?? createSqliteCheckpointer(settings.workspace);
  const graph = createBuilder(runtime).compile({ checkpointer });
  const engine = createGraphEngine({ graph, meta, modelSettings: settings, approval: settings.approval, maxSteps: settings.maxSteps });
  return {
    engine,
    tools,
    sandbox,
    history: graphThreadHistory(graph),
    mcp: options.mcp,
    async close() {
      const db = (checkpointer as { db?: { close?: () => void } }).db;
      db?.close?.();
      await release();
    },
  };
}
