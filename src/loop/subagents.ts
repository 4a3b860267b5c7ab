import type { AIMessage, ToolMessage } from "@langchain/core/messages";
import type { CallbackManager } from "@langchain/core/callbacks/manager";
import type { Engine, RunRequest } from "../agent/engine.js";
import type { Approver, EventSink } from "../agent/events.js";
import type { AgentRuntime } from "../agent/runtime.js";
import { mergeSnapshots, type WorkspaceSnapshots } from "../agent/snapshot-step.js";
import {
  resolveTaskCall,
  snapshotsForParent,
  subagentResult,
  subagentRuntime,
  taskCalls,
  taskErrorResult,
} from "../agent/subagents.js";
import { journalEnded } from "../agent/tool-journal-step.js";
import { messageText } from "../agent/turn.js";
import type { LoopMemory, LoopThread } from "../memory/loop-threads.js";
import type { ApprovalMode } from "../settings.js";

/**
 * Sub-agents in the loop engine: each `task` call of a turn runs a nested loop on the sub-agent's
 * runtime (agent/subagents.ts), all of the turn's at once, with the parent's approver, mode and
 * cancellation; its events carry the call's id, its conversation lives only in memory, and its
 * file changes join the parent's request for /undo. As the graph's subagent node does it.
 */

type ToolCall = NonNullable<AIMessage["tool_calls"]>[number];

export interface LoopTaskInput {
  runtime: AgentRuntime;
  message: AIMessage;
  /** Builds a loop engine (handed in by loop.ts, so the two files do not import each other). */
  createEngine: (runtime: AgentRuntime, memory: LoopMemory) => Engine;
  threadId: string;
  /** The parent's current request id: the sub-agents' file changes join it. */
  request?: string;
  mode: ApprovalMode;
  maxSteps: number;
  approver: Approver;
  emit: EventSink;
  signal?: AbortSignal;
  callbacks?: CallbackManager;
}

/** One sub-agent's thread, kept in memory for the length of its task call. */
function memoryThread(): { memory: LoopMemory; saved: () => LoopThread | undefined } {
  let thread: LoopThread | undefined;
  return {
    memory: { load: () => ({ messages: [], alwaysAllow: [] }), save: (_id, t) => void (thread = t) },
    saved: () => thread,
  };
}

async function runOne(
  input: LoopTaskInput,
  call: ToolCall,
): Promise<{ result: ToolMessage; snapshots: WorkspaceSnapshots }> {
  // The call's result is in the parent's journal as soon as its sub-agent ends: a run stopped
  // while a sibling still runs gives it back, not "interrupted".
  const ended = async (result: ToolMessage, snapshots: WorkspaceSnapshots = {}) => {
    await journalEnded(input.runtime.journal, input.threadId, [result]);
    return { result, snapshots };
  };
  const resolved = resolveTaskCall(input.runtime, call);
  if ("error" in resolved) return ended(taskErrorResult(call, resolved.error));
  const { type, input: task } = resolved;
  const { memory, saved } = memoryThread();
  const engine = input.createEngine(subagentRuntime(input.runtime, type), memory);
  const run: RunRequest = {
    task: task.prompt,
    // The parent's thread: the read tracker and the snapshots' thread are the parent's.
    threadId: input.threadId,
    approver: input.approver,
    // Its events carry the call's id; its own start and end are the task call's, on the parent's trace.
    emit: (event) => {
      if (event.type !== "run_start" && event.type !== "run_end") input.emit({ ...event, subagent: call.id! });
    },
    signal: input.signal,
    approval: input.mode,
    maxSteps: input.maxSteps,
    callbacks: input.callbacks,
  };
  const summary = await engine.run(run);
  if (input.signal?.aborted) throw new Error("aborted");
  const thread = saved();
  const messages = thread?.messages ?? [];
  const last = messages[messages.length - 1];
  const report = last ? messageText(last) : undefined;
  const result =
    summary.reason === "error"
      ? taskErrorResult(call, `Error: the ${type.name} sub-agent failed: ${summary.error ?? "unknown error"}`)
      : subagentResult(call, type, report, summary.reason, summary.steps);
  return ended(result, snapshotsForParent(thread?.snapshots ?? {}, input.request));
}

/** Runs a turn's `task` calls in parallel; their results in the model's order and their file changes. */
export async function runLoopTaskCalls(
  input: LoopTaskInput,
): Promise<{ results: ToolMessage[]; snapshots: WorkspaceSnapshots }> {
  // Every sub-agent has stopped before a stop is reported: the parent then closes the turn from
  // the journal (crash-recovery.ts), with the files as they left them.
  const settled = await Promise.allSettled(taskCalls(input.message).map((call) => runOne(input, call)));
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === "rejected");
  if (failed) throw failed.reason;
  const outcomes = settled.map((s) => (s as PromiseFulfilledResult<Awaited<ReturnType<typeof runOne>>>).value);
  let snapshots: WorkspaceSnapshots = {};
  for (const o of outcomes) snapshots = mergeSnapshots(snapshots, o.snapshots);
  return { results: outcomes.map((o) => o.result), snapshots };
}
