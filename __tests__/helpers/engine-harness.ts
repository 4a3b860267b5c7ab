import type { BaseMessage } from "@langchain/core/messages";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { MemorySaver } from "@langchain/langgraph";
import type { AgentEvent, ApprovalRequest, ApprovalResponse } from "../../src/contracts/events.js";
import type { Engine, RunSummary } from "../../src/agent/engine.js";
import { createRuntime } from "../../src/agent/runtime.js";
import { createAgentGraphBuilder, type GraphSettings } from "../../src/graph/graph.js";
import { recoverInterruptedCalls, type StopCause } from "../../src/agent/crash-recovery.js";
import type { ToolJournal } from "../../src/memory/tool-journal.js";
import { createGraphEngine } from "../../src/graph/engine.js";
import { createLoopEngine } from "../../src/loop/loop.js";
import type { LoopThread } from "../../src/memory/loop-threads.js";
import type { MemoryBackend } from "../../src/memory/backend.js";
import { createTools } from "../../src/tools/index.js";
import { ScriptedChatModel, type ScriptedTurn } from "./scripted-model.js";
import type { Todo } from "../../src/contracts/tools.js";
import type { WorkspaceSnapshots } from "../../src/agent/snapshot-step.js";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { SubagentType } from "../../src/tools/task.js";
import type { ToolHooks } from "../../src/guard/hooks.js";

/** The loop engine's thread store kept in memory (saved threads are copies, as on disk). */
export function inMemoryLoopThreads() {
  const threads = new Map<string, LoopThread>();
  const memory = {
    load: (id: string) => threads.get(id) ?? { messages: [], alwaysAllow: [] },
    save: (id: string, thread: LoopThread) =>
      void threads.set(id, {
        messages: [...thread.messages],
        alwaysAllow: [...thread.alwaysAllow],
        snapshots: { ...thread.snapshots },
        todos: [...(thread.todos ?? [])],
      }),
  };
  return { threads, memory };
}

/** Runs either engine on a scripted model in `workspace`, with the real tools and an in-memory thread store. */
export type EngineKind = "graph" | "loop";

export interface EngineHarness {
  model: ScriptedChatModel;
  events: AgentEvent[];
  approvals: ApprovalRequest[];
  run(
    task: string,
    opts?: { threadId?: string; answers?: ApprovalResponse[]; signal?: AbortSignal },
  ): Promise<RunSummary>;
  history(threadId?: string): Promise<BaseMessage[]>;
  /** The thread's todo list as saved: the graph's `todos` state field, the loop's thread store. */
  todos(threadId?: string): Promise<Todo[]>;
  /** The thread's snapshots per request as saved: the graph's `snapshots` state field, the loop's thread store. */
  snapshots(threadId?: string): Promise<WorkspaceSnapshots>;
  /** Replaces a thread's saved conversation (to set up odd states). */
  seed(threadId: string, messages: BaseMessage[]): Promise<void>;
}

export interface HarnessExtras {
  /** Tools instead of the real toolset for the workspace. */
  tools?: StructuredToolInterface[];
  /** The answer when a test scripted none (default: a plain denial). */
  defaultAnswer?: ApprovalResponse;
  /** Keep threads here (a PostgreSQL backend) instead of in memory. */
  memory?: MemoryBackend;
  /** A model instead of the scripted one (a routed model for parallel sub-agents); `script` is then unused. */
  model?: BaseChatModel;
  /** Agent types for the `task` tool (none: no `task` tool). */
  subagents?: readonly SubagentType[];
  /** The write-ahead tool journal (none: nothing journalled), with the graph's recovery wired as the CLI's. */
  journal?: ToolJournal;
  /** The person's hooks (guard/hooks.ts), run as a session's are. */
  hooks?: ToolHooks;
}

export function engineSettings(workspace: string, overrides: Partial<GraphSettings> = {}): GraphSettings {
  return {
    workspace,
    model: "scripted",
    provider: "offline",
    requestTimeoutMs: 5000,
    maxRetries: 0,
    approval: "full-auto",
    maxSteps: 30,
    contextTokens: 100_000,
    ...overrides,
  };
}

export function engineHarness(
  kind: EngineKind,
  workspace: string,
  script: ScriptedTurn[],
  overrides: Partial<GraphSettings> = {},
  extras: HarnessExtras = {},
): EngineHarness {
  const model = (extras.model ?? new ScriptedChatModel(script)) as ScriptedChatModel;
  const subagents = extras.subagents;
  const settings = engineSettings(workspace, overrides);
  const tools = extras.tools ?? createTools({ workspace });
  const meta = { engine: kind, model: "scripted", provider: settings.provider, workspace };
  const events: AgentEvent[] = [];
  const approvals: ApprovalRequest[] = [];
  let engine: Engine;
  let history: EngineHarness["history"];
  let todos: EngineHarness["todos"];
  let snapshots: EngineHarness["snapshots"];
  let seed: EngineHarness["seed"];
  const journal = extras.journal;
  if (kind === "graph") {
    const graph = createAgentGraphBuilder({
      ...createRuntime(settings, { model, tools, subagents }),
      ...(journal ? { journal } : {}),
      ...(extras.hooks ? { hooks: extras.hooks } : {}),
    }).compile({ checkpointer: extras.memory?.checkpointer() ?? new MemorySaver() });
    engine = createGraphEngine({
      graph,
      meta,
      modelSettings: settings,
      approval: settings.approval,
      maxSteps: settings.maxSteps,
      ...(journal
        ? {
            recover: (threadId: string, messages: readonly BaseMessage[], cause?: StopCause) =>
              recoverInterruptedCalls({ journal, threadId, workspace, messages, timeTravelThread: threadId, cause }),
          }
        : {}),
    });
    history = async (threadId = "t1") =>
      (await graph.getState({ configurable: { thread_id: threadId } })).values.messages;
    todos = async (threadId = "t1") => (await graph.getState({ configurable: { thread_id: threadId } })).values.todos;
    snapshots = async (threadId = "t1") =>
      (await graph.getState({ configurable: { thread_id: threadId } })).values.snapshots ?? {};
    seed = async (threadId, messages) => {
      await graph.updateState({ configurable: { thread_id: threadId } }, { messages }, "agent");
    };
  } else if (extras.memory?.loopMemory) {
    const memory = extras.memory.loopMemory;
    const runtime = createRuntime(settings, { model, tools, subagents });
    engine = createLoopEngine({
      runtime: { ...runtime, workspace, journal, ...(extras.hooks ? { hooks: extras.hooks } : {}) },
      meta,
      modelSettings: settings,
      memory,
    });
    history = async (threadId = "t1") => (await memory.load(threadId)).messages;
    todos = async (threadId = "t1") => (await memory.load(threadId)).todos ?? [];
    snapshots = async (threadId = "t1") => (await memory.load(threadId)).snapshots ?? {};
    seed = async (threadId, messages) => memory.save(threadId, { messages, alwaysAllow: [] });
  } else {
    const { threads, memory } = inMemoryLoopThreads();
    const runtime = createRuntime(settings, { model, tools, subagents });
    engine = createLoopEngine({
      runtime: { ...runtime, workspace, journal, ...(extras.hooks ? { hooks: extras.hooks } : {}) },
      meta,
      modelSettings: settings,
      memory,
    });
    history = async (threadId = "t1") => threads.get(threadId)?.messages ?? [];
    todos = async (threadId = "t1") => threads.get(threadId)?.todos ?? [];
    snapshots = async (threadId = "t1") => threads.get(threadId)?.snapshots ?? {};
    seed = async (threadId, messages) => void threads.set(threadId, { messages, alwaysAllow: [] });
  }
  return {
    model,
    events,
    approvals,
    history,
    todos,
    snapshots,
    seed,
    run(task, opts = {}) {
      const answers = [...(opts.answers ?? [])];
      return engine.run({
        task,
        threadId: opts.threadId ?? "t1",
        signal: opts.signal,
        emit: (e) => events.push(e),
        approver: async (request) => {
          approvals.push(request);
          return answers.shift() ?? extras.defaultAnswer ?? { decision: "deny" };
        },
      });
    },
  };
}

/** The events of one type, typed. */
export function eventsOf<T extends AgentEvent["type"]>(
  events: AgentEvent[],
  type: T,
): Array<Extract<AgentEvent, { type: T }>> {
  return events.filter((e): e is Extract<AgentEvent, { type: T }> => e.type === type);
}
