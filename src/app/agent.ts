import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { REMOVE_ALL_MESSAGES, type BaseCheckpointSaver } from "@langchain/langgraph";
import { RemoveMessage, type BaseMessage } from "@langchain/core/messages";
import { summariseConversation, type WholeCompaction } from "../context/compaction.js";
import type { Engine } from "../agent/engine.js";
import type { EventSink } from "../contracts/events.js";
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
import type { OutputChunk } from "../tools/index.js";
import type { McpHub } from "../mcp/hub.js";
import { traceEngine } from "./tracing.js";
import { createSessionHooks, sessionEventHooks, type SessionEventHooks } from "./hooks.js";
import { interruptedSnapshots, recoverInterruptedCalls } from "../agent/crash-recovery.js";
import type { WorkspaceSnapshots } from "../agent/snapshot-step.js";
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
  /** The snapshots of a step the last run on a thread left in the middle, from the journal (for /undo). */
  interrupted(threadId: string, messages: readonly BaseMessage[]): Promise<WorkspaceSnapshots>;
  /** MCP servers of this session (none configured: undefined). */
  mcp?: McpHub;
  /**
   * /compact: the thread's whole conversation replaced by one summary, written to the thread in
   * either engine; undefined when there was nothing to summarise.
   */
  compact(threadId: string, focus: string, signal?: AbortSignal): Promise<WholeCompaction | undefined>;
  /** Releases what the agent holds (the database, pending traces, MCP servers); background processes are the caller's. */
  close(): Promise<void>;
  /** The session-level hook events (app/hooks.ts): prompt, stop, start, compaction, questions, end. */
  events: SessionEventHooks;
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

export interface AssembleOptions {
  /** The run's events outside the engine: hook outcomes, and with `liveOutput` commands' output. */
  emit: EventSink;
  /** Commands' output as it comes (`tool_output` events): the CLI's trace; Studio shows results only. */
  liveOutput: boolean;
  /** The engine's stream carries the calls' hook outcomes (default); Studio's has no reader of them: `emit` gets them all. */
  hookReportsInStream?: boolean;
  /** A line for the person (hooks that cannot be read, …). */
  note: (message: string) => void;
  model?: BaseChatModel;
  mcp?: McpHub;
  journal?: AgentRuntime["journal"];
}

/**
 * The one runtime both front ends run, the CLI's session and each Studio run: the tools (secrets
 * kept from commands, bubblewrap when available), the person's hooks, the `task` tool's agent
 * types (built in, the person's, and the repository's trusted ones) and the journal. Hooks it
 * cannot read stop the session (app/hooks.ts), before anything is opened.
 */
export function assembleRuntime(
  settings: Settings,
  options: AssembleOptions,
): { runtime: AgentRuntime; tools: Toolset; sandbox: SandboxPlan; hooks: ReturnType<typeof createSessionHooks> } {
  const { emit } = options;
  const output = options.liveOutput
    ? (chunk: OutputChunk) =>
        emit({
          type: "tool_output",
          id: chunk.toolCallId ?? "",
          stream: chunk.stream,
          text: chunk.text,
          ...(chunk.subagent ? { subagent: chunk.subagent } : {}),
        })
    : undefined;
  const { tools, sandbox, launch } = createAgentTools(settings, output, options.mcp);
  const hooks = createSessionHooks(settings, launch, emit, options.note, options.hookReportsInStream ?? true);
  const runtime: AgentRuntime = {
    ...createRuntime(settings, {
      model: options.model,
      tools,
      sandboxed: sandbox.sandbox !== undefined,
      subagents: loadAgentCatalog(settings).types,
    }),
    ...(options.journal ? { journal: options.journal } : {}),
    ...(hooks ? { hooks, hookTimeoutMs: settings.hookTimeoutMs } : {}),
  };
  return { runtime, tools, sandbox, hooks };
}

/** Builds the engine the settings ask for, with its tools and memory. */
export function createAgentParts(settings: Settings, options: AgentPartsOptions): AgentParts {
  // One runtime contract for either engine (agent/runtime.ts); they differ only in orchestration.
  const assembled = assembleRuntime(settings, {
    emit: options.emit,
    liveOutput: true,
    note: (message) => options.emit({ type: "notice", step: 0, message }),
    model: options.model,
    mcp: options.mcp,
  });
  const { tools, sandbox, hooks } = assembled;
  const memory = options.memory ?? openSqliteMemory(settings.workspace);
  const runtime: AgentRuntime = { ...assembled.runtime, journal: memory.journal };
  const meta = {
    engine: settings.engine,
    model: describeModel(settings),
    provider: settings.provider,
    workspace: settings.workspace,
  };
  if (!options.model) rehearseOnce(settings, runtime);
  let engine: Engine;
  let history: ThreadHistory;
  /** Writes a thread's whole conversation (after /compact), as the engine keeps it. */
  let writeMessages: (threadId: string, messages: BaseMessage[]) => Promise<void>;
  if (settings.engine === "loop") {
    const loopMemory: LoopMemory = memory.loopMemory ?? {
      load: (id) => loadLoopThread(settings.workspace, id),
      save: (id, thread) => saveLoopThread(settings.workspace, id, thread),
    };
    engine = createLoopEngine({ runtime, meta, modelSettings: settings, memory: loopMemory });
    history = loopThreadHistory(loopMemory);
    writeMessages = async (threadId, messages) => {
      const thread = await loopMemory.load(threadId);
      await loopMemory.save(threadId, { ...thread, messages });
    };
  } else {
    const checkpointer = options.checkpointer ?? memory.checkpointer();
    const graph = createAgentGraphBuilder(runtime).compile({ checkpointer });
    engine = createGraphEngine({
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
    });
    history = graphThreadHistory(graph);
    // As the agent node, as /undo cuts a thread back: a finished turn, so nothing is left to run.
    writeMessages = async (threadId, messages) => {
      await graph.updateState(
        { configurable: { thread_id: threadId } },
        { messages: [new RemoveMessage({ id: REMOVE_ALL_MESSAGES }), ...messages] },
        "agent",
      );
    };
  }
  const tracedEngine = traced(engine, settings, options.emit);
  return {
    engine: tracedEngine,
    tools,
    sandbox,
    history,
    interrupted: (threadId, messages) =>
      interruptedSnapshots({
        journal: memory.journal,
        threadId,
        workspace: settings.workspace,
        messages,
        timeTravelThread: settings.engine === "loop" ? "" : threadId,
      }),
    events: sessionEventHooks(hooks, settings.workspace, settings.hookTimeoutMs),
    mcp: options.mcp,
    async compact(threadId, focus, signal) {
      const { messages } = await history.read(threadId);
      const done = await summariseConversation(runtime.model, messages, {
        budgetTokens: runtime.contextTokens,
        focus,
        signal,
      });
      if (done) await writeMessages(threadId, done.history);
      return done;
    },
    async close() {
      // Pending traces are posted before the process may exit.
      await tracedEngine.flush?.();
      await memory.close();
      sandbox.sandbox?.dispose();
      await options.mcp?.close();
    },
  };
}
