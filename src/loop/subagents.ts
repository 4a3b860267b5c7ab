import type { AIMessage, ToolMessage } from "@langchain/core/messages";
import type { CallbackManager } from "@langchain/core/callbacks/manager";
import type { Engine, RunRequest } from "../agent/engine.js";
import type { Approver, EventSink } from "../contracts/events.js";
import type { AgentRuntime } from "../agent/runtime.js";
import { mergeSnapshots, type WorkspaceSnapshots } from "../agent/snapshot-step.js";
import {
  askedAs,
  QUEUED_NOTICE,
  runTaskCall,
  snapshotsForParent,
  subagentResult,
  subagentPlaces,
  subagentRuntime,
  taskErrorResult,
  type TaskEnd,
} from "../agent/subagents.js";
import { withTaskHooks } from "../agent/task-hooks.js";
import type { TurnOf } from "../agent/tool-journal-step.js";
import { messageText } from "../agent/turn.js";
import type { LoopMemory, LoopThread } from "../memory/loop-threads.js";
import type { ApprovalMode } from "../contracts/modes.js";

/**
 * Sub-agents in the loop engine: each `task` call of a turn runs a nested loop on the sub-agent's
 * runtime (agent/subagents.ts), at most MAX_PARALLEL_SUBAGENTS at once (the others queued in the
 * model's order, cancelled unstarted by a stop), with the parent's approver, mode and cancellation; its events carry the call's id, its conversation lives only in memory, and its
 * file changes join the parent's request for /undo. As the graph's subagent node does it.
 */

type ToolCall = NonNullable<AIMessage["tool_calls"]>[number];

export interface LoopTaskInput {
  runtime: AgentRuntime;
  /** The turn's task calls, in the model's order. */
  calls: readonly ToolCall[];
  /** Builds a loop engine (handed in by loop.ts, so the two files do not import each other). */
  createEngine: (runtime: AgentRuntime, memory: LoopMemory) => Engine;
  threadId: string;
  /** The parent's turn (for the journal) and request: the sub-agents' file changes join it. */
  turn: TurnOf;
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

/** One task call's sub-agent: a nested loop engine on its runtime, its conversation in memory. */
function runOne(input: LoopTaskInput, call: ToolCall, places: ReturnType<typeof subagentPlaces>): Promise<TaskEnd> {
  const { threadId, turn, signal } = input;
  const queued = () => input.emit({ type: "notice", step: 0, message: QUEUED_NOTICE, subagent: call.id! });
  return runTaskCall(input.runtime, places, { threadId, turn, call, signal }, { queued }, async (type, task) => {
    const { memory, saved } = memoryThread();
    const asker = { callId: call.id!, type: type.name, description: task.description };
    const engine = input.createEngine(subagentRuntime(input.runtime, type), memory);
    const run: RunRequest = {
      task: task.prompt,
      // The parent's thread: the read tracker and the snapshots' thread are the parent's.
      threadId,
      conversation: call.id,
      // Its questions name it and its task, as the graph's interrupt value does.
      approver: (request) => input.approver(askedAs(request, asker)),
      // Its events carry the call's id; its own start and end are the task call's, on the parent's trace.
      emit: (event) => {
        if (event.type === "approval")
          input.emit({ ...event, request: askedAs(event.request, asker), subagent: call.id! });
        else if (event.type !== "run_start" && event.type !== "run_end") input.emit({ ...event, subagent: call.id! });
      },
      signal,
      approval: input.mode,
      maxSteps: input.maxSteps,
      callbacks: input.callbacks,
    };
    const summary = await engine.run(run);
    if (signal?.aborted) throw new Error("aborted");
    const thread = saved();
    const messages = thread?.messages ?? [];
    const last = messages[messages.length - 1];
    const report = last ? messageText(last) : undefined;
    return {
      result:
        summary.reason === "error"
          ? taskErrorResult(call, `Error: the ${type.name} sub-agent failed: ${summary.error ?? "unknown error"}`)
          : subagentResult(call, type, report, summary.reason, summary.steps),
      snapshots: snapshotsForParent(thread?.snapshots ?? {}, input.turn.request),
      // A hook's stop inside the sub-agent is the person's stop: the parent's run ends too.
      stop: summary.reason === "hook_stop",
    };
  });
}

/** Runs a turn's `task` calls in parallel; their results in the model's order and their file changes. */
export async function runLoopTaskCalls(
  input: LoopTaskInput,
): Promise<{ results: ToolMessage[]; snapshots: WorkspaceSnapshots; stop: boolean }> {
  // Every sub-agent has stopped before a stop is reported: the parent then closes the turn from
  // the journal (crash-recovery.ts), with the files as they left them.
  // Each inside the person's hooks (agent/task-hooks.ts), as every other call is.
  const config = { configurable: { thread_id: input.threadId, approval: input.mode }, signal: input.signal };
  const places = subagentPlaces();
  const settled = await Promise.allSettled(
    input.calls.map(async (call) => {
      let end = undefined as TaskEnd | undefined;
      const { result, stop } = await withTaskHooks(input.runtime, call, config, async (args) => {
        end = await runOne(input, { ...call, args }, places);
        return end.result;
      });
      // A hook's `continue: false`, around the call or inside its sub-agent, ends the parent's run too.
      return { result, snapshots: end?.snapshots ?? {}, stop: stop || Boolean(end?.stop) };
    }),
  );
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === "rejected");
  if (failed) throw failed.reason;
  const outcomes = settled.map((s) => (s as PromiseFulfilledResult<TaskEnd>).value);
  let snapshots: WorkspaceSnapshots = {};
  for (const o of outcomes) snapshots = mergeSnapshots(snapshots, o.snapshots);
  return { results: outcomes.map((o) => o.result), snapshots, stop: outcomes.some((o) => o.stop) };
}
