import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { BaseCheckpointSaver } from "@langchain/langgraph";
import type { Engine } from "../agent/engine.js";
import type { EventSink } from "../agent/events.js";
import { describeModel } from "../models/model.js";
import { createRuntime } from "../agent/runtime.js";
import { createAgentGraphBuilder } from "../graph/graph.js";
import { createLoopEngine } from "../loop/loop.js";
import { createGraphEngine } from "../graph/engine.js";
import { graphThreadHistory } from "../graph/rewind.js";
import { loadLoopThread, saveLoopThread, type LoopMemory } from "../memory/loop-threads.js";
import { loopThreadHistory } from "../loop/rewind.js";
import type { ThreadHistory } from "../agent/thread-history.js";
import { openSqliteMemory, type MemoryBackend } from "../memory/backend.js";
import type { SandboxPlan } from "../security/sandbox.js";
import { detachLangChainTracing, type Settings } from "../settings.js";
import type { Toolset } from "../tools/index.js";
import { createAgentTools, redactedValues } from "./tools.js";
import type { McpHub } from "../mcp/hub.js";
import { traceEngine } from "./tracing.js";
import { createSessionHooks } from "./hooks.js";
import { recoverInterruptedCalls } from "../agent/crash-recovery.js";
import { loadAgentCatalog } from "../context/agent-files.js";
import type { AgentRuntime } from "../agent/runtime.js";
import { canRehearse, rehearseFirstStep } from "../agent/rehearsal.js";
import { warmUpWhileModelThinks } from "./warm-up.js";

export interface AgentParts {
  engine: Engine;
  tools: Toolset;
  /** Whether commands run in bubblewrap, and the banner line saying so. */
  sandbox: SandboxPlan;
  /** The engine's saved threads, for /undo and /rewind. */
  history: ThreadHistory;
  /** MCP servers of this session (none configured: undefined). */
  mcp?: McpHub;
  /** Releases what the agent holds (the database, pending traces, MCP servers); background processes are the caller's. */
  close(): Promise<void>;
}

export interface AgentPartsOptions {
  /** Receives live command output as tool_output events. */
  emit: EventSink;
  model?: BaseChatModel;
  checkpointer?: BaseCheckpointSaver;
  /** MCP servers' tools (app/mcp.ts); stopped by `close()`. */
  mcp?: McpHub;
  /** Where threads live (default: SQLite and JSON files in the workspace). */
  memory?: MemoryBackend;
}

/** The engine with LangSmith tracing when it is on (the same secrets redacted as from the tools). */
function traced(engine: Engine, settings: Settings, emit: EventSink): Engine & { flush?(): Promise<void> } {
  if (!settings.tracing) return engine;
  // Only our tracer, which redacts, may post: LangChain would add its own from the environment.
  detachLangChainTracing();
  return traceEngine(engine, {
    tracing: settings.tracing,
    secrets: redactedValues(settings),
    workspace: settings.workspace,
    // One plain line on the trace (issue 31), never the library's own logs.
    onProblem: (message) => emit({ type: "notice", step: 0, message }),
  });
}

/** Whether this process has queued the first step's rehearsal: once warm, the code stays warm. */
let rehearsalQueued = false;

/**
 * The first step's rehearsal (agent/rehearsal.ts) while the first request waits for the model
 * (app/warm-up.ts), once per process, for a model that answers over HTTP. It is given no
 * workspace, thread or journal of the session: only what the model is offered and told.
 */
function rehearseOnce(settings: Settings, runtime: Pick<AgentRuntime, "tools" | "systemPrompt">): void {
  if (rehearsalQueued || !canRehearse(settings)) return;
  rehearsalQueued = true;
  warmUpWhileModelThinks(
    (answered) =>
      rehearseFirstStep({
        modelSettings: settings,
        tools: runtime.tools,
        systemPrompt: runtime.systemPrompt(),
        contextTokens: settings.contextTokens,
        stop: answered,
      }),
    // Every first step gains from it; the shell parser only a first command step.
    true,
  );
}

/** Builds the engine the settings ask for, with its tools and memory. */
export function createAgentParts(settings: Settings, options: AgentPartsOptions): AgentParts {
  const { tools, sandbox, launch } = createAgentTools(
    settings,
    (chunk) =>
      options.emit({ type: "tool_output", id: chunk.toolCallId ?? "", stream: chunk.stream, text: chunk.text }),
    options.mcp,
  );
  // Read before anything is opened: hooks it cannot read stop the session (app/hooks.ts).
  const hooks = createSessionHooks(settings, launch, options.emit, (message) =>
    options.emit({ type: "notice", step: 0, message }),
  );
  const memory = options.memory ?? openSqliteMemory(settings.workspace);
  const meta = {
    engine: settings.engine,
    model: describeModel(settings),
    provider: settings.provider,
    workspace: settings.workspace,
  };
  // One runtime contract for either engine (agent/runtime.ts); they differ only in orchestration.
  const runtime = {
    ...createRuntime(settings, {
      model: options.model,
      tools,
      sandboxed: sandbox.sandbox !== undefined,
      // The `task` tool's agent types: built in, the person's, and the repository's trusted ones.
      subagents: loadAgentCatalog(settings).types,
    }),
    journal: memory.journal,
    ...(hooks ? { hooks, hookTimeoutMs: settings.hookTimeoutMs } : {}),
  };
  if (!options.model) rehearseOnce(settings, runtime);
  let engine: Engine & { flush?(): Promise<void> };
  let history: ThreadHistory;
  if (settings.engine === "loop") {
    const loopMemory: LoopMemory = memory.loopMemory ?? {
      load: (id) => loadLoopThread(settings.workspace, id),
      save: (id, thread) => saveLoopThread(settings.workspace, id, thread),
    };
    engine = traced(
      createLoopEngine({ runtime, meta, modelSettings: settings, memory: loopMemory }),
      settings,
      options.emit,
    );
    history = loopThreadHistory(loopMemory);
  } else {
    const checkpointer = options.checkpointer ?? memory.checkpointer();
    const graph = createAgentGraphBuilder(runtime).compile({ checkpointer });
    engine = traced(
      createGraphEngine({
        graph,
        meta,
        modelSettings: settings,
        approval: settings.approval,
        maxSteps: settings.maxSteps,
        recover: (threadId, messages, cause) =>
          recoverInterruptedCalls({
            journal: memory.journal,
            threadId,
            workspace: settings.workspace,
            messages,
            timeTravelThread: threadId,
            cause,
          }),
      }),
      settings,
      options.emit,
    );
    history = graphThreadHistory(graph);
  }
  return {
    engine,
    tools,
    sandbox,
    history,
    mcp: options.mcp,
    async close() {
      // Pending traces are posted before the process may exit.
      await engine.flush?.();
      await memory.close();
      sandbox.sandbox?.dispose();
      await options.mcp?.close();
    },
  };
}
