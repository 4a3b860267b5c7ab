import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { BaseCheckpointSaver } from "@langchain/langgraph";
import type { Engine } from "../agent/engine.js";
import type { EventSink } from "../agent/events.js";
import { describeModel } from "../agent/model.js";
import { createGraph, createRuntime } from "../graph/graph.js";
import { createLoopEngine } from "../loop/loop.js";
import { createGraphEngine } from "../graph/stream.js";
import { openSqliteMemory, type MemoryBackend } from "../memory/backend.js";
import type { SandboxPlan } from "../security/sandbox.js";
import { detachLangChainTracing, secretValues, type Settings } from "../settings.js";
import type { Toolset } from "../tools/index.js";
import { createAgentTools } from "./tools.js";
import { traceEngine } from "./tracing.js";

export interface AgentParts {
  engine: Engine;
  tools: Toolset;
  /** Whether commands run in bubblewrap, and the banner line saying so. */
  sandbox: SandboxPlan;
  /** Releases what the agent holds (the database, pending traces); background processes are the caller's. */
  close(): Promise<void>;
}

export interface AgentPartsOptions {
  /** Receives live command output as tool_output events. */
  emit: EventSink;
  model?: BaseChatModel;
  checkpointer?: BaseCheckpointSaver;
  /** Where threads live (default: SQLite and JSON files in the workspace). */
  memory?: MemoryBackend;
}

/** The engine with LangSmith tracing when it is on (the same secrets redacted as from the tools). */
function traced(engine: Engine, settings: Settings): Engine & { flush?(): Promise<void> } {
  if (!settings.tracing) return engine;
  // Only our tracer, which redacts, may post: LangChain would add its own from the environment.
  detachLangChainTracing();
  const secrets = [...(settings.apiKey ? [settings.apiKey] : []), ...secretValues(settings.workspace)];
  return traceEngine(engine, { tracing: settings.tracing, secrets, workspace: settings.workspace });
}

/** Builds the engine the settings ask for, with its tools and memory. */
export function createAgentParts(settings: Settings, options: AgentPartsOptions): AgentParts {
  const { tools, sandbox } = createAgentTools(settings, (chunk) =>
    options.emit({ type: "tool_output", id: chunk.toolCallId ?? "", stream: chunk.stream, text: chunk.text }),
  );
  const memory = options.memory ?? openSqliteMemory(settings.workspace);
  const meta = { engine: settings.engine, model: describeModel(settings), provider: settings.provider, workspace: settings.workspace };
  let engine: Engine & { flush?(): Promise<void> };
  if (settings.engine === "loop") {
    const runtime = createRuntime(settings, { model: options.model, tools });
    engine = traced(createLoopEngine({ ...runtime, workspace: settings.workspace, meta, modelSettings: settings, memory: memory.loopMemory }), settings);
  } else {
    const checkpointer = options.checkpointer ?? memory.checkpointer();
    const graph = createGraph(settings, { checkpointer, model: options.model, tools });
    engine = traced(createGraphEngine({ graph, meta, modelSettings: settings, approval: settings.approval, maxSteps: settings.maxSteps }), settings);
  }
  return {
    engine,
    tools,
    sandbox,
    async close() {
      // Pending traces are posted before the process may exit.
      await engine.flush?.();
      await memory.close();
      sandbox.sandbox?.dispose();
    },
  };
}
