import { AIMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { unansweredResult } from "../context/budget.js";
import type { JournalEntry, ToolJournal } from "../memory/tool-journal.js";
import { editNote } from "../guard/results.js";
import { snapshotSettings } from "../snapshots/git.js";
import { TASK_TOOL } from "../tools/task.js";
import { snapshotStore, type SnapshotChange } from "../snapshots/store.js";
import type { WorkspaceSnapshots } from "./snapshot-step.js";
import { INTERRUPTED_CALL_RESULT, interruptionMessages } from "./turn.js";

/**
 * A run that was killed mid-step leaves its last tool calls without results in the thread. The
 * next run closes that step before its request, from the write-ahead journal: a call that ended
 * gets its real result, a call that started gets "interrupted; its effects may be partly on
 * disk" with the files the snapshots show changed since the step began, and only a call that
 * never started is "not run". The step's snapshot is kept with its request, so undoing that
 * turn restores what the interrupted calls changed too.
 */

/** Most changed paths named in one interrupted call's result. */
export const MAX_NAMED_CHANGES = 40;

const STATUS_WORD: Record<SnapshotChange["status"], string> = {
  A: "added",
  D: "deleted",
  M: "modified",
  T: "type changed",
};

/** Why a step's calls were left without results: the process was killed, or the person pressed Ctrl-C. */
export type StopCause = "killed" | "cancelled";

/**
 * How an interrupted call's result begins. A task call's is about its sub-agent, which ran on its
 * own, and it is told after Ctrl-C too (another call cut off by Ctrl-C gets INTERRUPTED_CALL_RESULT).
 */
function interruptedHead(name: string, cause: StopCause): string {
  if (name === TASK_TOOL)
    return cause === "cancelled"
      ? "This task call's sub-agent was interrupted by the user (Ctrl-C) before it gave its report, so it may have done part of its task."
      : "This task call's sub-agent was interrupted: mini-cursor stopped (the process was killed or crashed) before its report was saved, so it may have done part of its task.";
  return `This ${name} call was interrupted: it started, but mini-cursor stopped (the process was killed or crashed) before its result was saved, so its effects may be partly on disk.`;
}

export interface InterruptedOptions {
  /** Killed (the default) or cancelled. */
  cause?: StopCause;
  /** A task call whose sub-agent had no tool that changes files. */
  readOnly?: boolean;
  /** Why what changed is not known, when `changes` is undefined (UNKNOWN_CHANGES names the cases). */
  unknown?: string;
}

/** Why an interrupted call's effects on disk are not known (no `before` snapshot to compare with). */
export const UNKNOWN_CHANGES = {
  off: "workspace snapshots were off",
  none: "no workspace snapshot was taken before this step: its tools are not ones that change files, or the snapshot could not be taken in time",
  failed: "the workspace snapshot failed",
} as const;

export function interruptedResultText(
  name: string,
  changes: readonly SnapshotChange[] | undefined,
  options: InterruptedOptions = {},
): string {
  const head = interruptedHead(name, options.cause ?? "killed");
  if (options.readOnly) return `${head} Its tools could not change files, so it changed none.`;
  if (!changes)
    return `${head} What changed on disk is not known (${options.unknown ?? UNKNOWN_CHANGES.off}). Check the files before running it again.`;
  if (changes.length === 0)
    return `${head} No file in the workspace changed since this step started. Check before running it again if it has effects outside the workspace.`;
  const named = changes.slice(0, MAX_NAMED_CHANGES).map((c) => `${c.path} (${STATUS_WORD[c.status]})`);
  const more = changes.length > named.length ? `, and ${changes.length - named.length} more` : "";
  return `${head} Since this step started, these files changed: ${named.join(", ")}${more}. Check them before running it again.`;
}

export interface RecoveryInput {
  journal?: ToolJournal;
  threadId: string;
  workspace: string;
  messages: readonly BaseMessage[];
  /**
   * The graph thread whose latest snapshot time travel tracks (its ref is moved to the snapshot
   * taken here); empty for the loop.
   */
  timeTravelThread: string;
  /**
   * Killed (the default: the next run closes the step) or cancelled (the run closes its own turn
   * after Ctrl-C, interruptionMessages with what the journal knows: cancelledTurn).
   */
  cause?: StopCause;
}

export interface Recovery {
  /** Results for the dangling calls, in call order (empty: nothing to close). */
  results: ToolMessage[];
  /** The interrupted step's snapshots, by request (merge into the thread's). */
  snapshots: WorkspaceSnapshots;
  /** What was recovered, for the trace. */
  note?: string;
}

const NOTHING: Recovery = { results: [], snapshots: {} };

/** The last model turn's calls that have no result, when the thread ends with that turn. */
function danglingCalls(messages: readonly BaseMessage[]) {
  let i = messages.length - 1;
  while (i >= 0 && ToolMessage.isInstance(messages[i]!)) i--;
  const last = messages[i];
  if (!last || !AIMessage.isInstance(last) || !last.tool_calls?.length) return [];
  const answered = new Set(messages.slice(i + 1).map((m) => (m as ToolMessage).tool_call_id));
  return last.tool_calls.filter((c) => c.id && !answered.has(c.id));
}

async function changesSince(
  input: RecoveryInput,
  started: JournalEntry[],
): Promise<{ changes?: SnapshotChange[]; snapshots: WorkspaceSnapshots; unknown?: string }> {
  const first = started.find((e) => e.before);
  if (!snapshotSettings().enabled) return { snapshots: {}, unknown: UNKNOWN_CHANGES.off };
  if (!first?.before) return { snapshots: {}, unknown: UNKNOWN_CHANGES.none };
  try {
    const store = snapshotStore(input.workspace);
    const after = await store.take();
    const changes = await store.changes(first.before, after);
    const paths = changes.map((c) => c.path);
    if (input.timeTravelThread) await store.setThreadSnapshot(input.timeTravelThread, after, paths);
    const startedAt = Date.parse(first.startedAt) || Date.now();
    const snapshots = first.request ? { [first.request]: { before: first.before, after, startedAt, paths } } : {};
    return { changes, snapshots };
  } catch {
    return { snapshots: {}, unknown: UNKNOWN_CHANGES.failed };
  }
}

/**
 * The snapshots of the step the last run left in the middle, as recoverInterruptedCalls finds them,
 * the journal left as it is (for the run that closes the step): what `--undo` right after a crash
 * undoes, which otherwise would say the turn changed no file while its files stay.
 */
export async function interruptedSnapshots(input: RecoveryInput): Promise<WorkspaceSnapshots> {
  const dangling = danglingCalls(input.messages);
  if (!input.journal || !input.threadId || dangling.length === 0) return {};
  const byId = new Map((await input.journal.read(input.threadId)).map((e) => [e.callId, e]));
  const recorded = dangling.map((c) => byId.get(c.id!)).filter((e): e is JournalEntry => Boolean(e?.before));
  return recorded.length > 0 ? (await changesSince(input, recorded)).snapshots : {};
}

export async function recoverInterruptedCalls(input: RecoveryInput): Promise<Recovery> {
  const dangling = danglingCalls(input.messages);
  if (!input.journal || !input.threadId) return NOTHING;
  const entries = dangling.length > 0 ? await input.journal.read(input.threadId) : [];
  if (dangling.length === 0 || entries.length === 0) {
    // A journal left by a step that was saved after all (or by nothing): it has nothing to say.
    if (dangling.length === 0) await input.journal.clear(input.threadId).catch(() => undefined);
    return NOTHING;
  }
  const byId = new Map(entries.map((e) => [e.callId, e]));
  const started = dangling.map((c) => byId.get(c.id!)).filter((e): e is JournalEntry => Boolean(e) && !e!.result);
  const cause = input.cause ?? "killed";
  // The step's snapshot is kept whenever the journal has its `before`: calls that ended changed files too.
  // After Ctrl-C only for a cut-off sub-agent: the parent's own calls are closed as they always were,
  // without the wait for a snapshot (a SIGTERM leaves a second before the process exits).
  const recorded =
    cause === "cancelled"
      ? started.filter((e) => e.name === TASK_TOOL)
      : started.length > 0
        ? started
        : dangling.map((c) => byId.get(c.id!)).filter((e) => e?.before);
  const { changes, snapshots, unknown } =
    recorded.length > 0
      ? await changesSince(input, recorded as JournalEntry[])
      : { snapshots: {}, unknown: snapshotSettings().enabled ? UNKNOWN_CHANGES.none : UNKNOWN_CHANGES.off };
  const results = dangling.map((call) => {
    const entry = byId.get(call.id!);
    if (entry?.result)
      return new ToolMessage({
        tool_call_id: call.id!,
        name: call.name,
        content: entry.result.content,
        status: entry.result.status,
      });
    const text = (): string => {
      if (cause === "cancelled" && !(entry && call.name === TASK_TOOL)) return INTERRUPTED_CALL_RESULT;
      if (!entry) return unansweredResult(call.name);
      const interrupted = interruptedResultText(call.name, changes, { cause, readOnly: entry.readOnly, unknown });
      // The model's call is what the thread holds; an edited one ran with the person's arguments.
      return entry.editedArgs ? `${editNote(call.name, entry.editedArgs)}\n${interrupted}` : interrupted;
    };
    return new ToolMessage({ tool_call_id: call.id!, name: call.name, content: text(), status: "error" });
  });
  await input.journal.clear(input.threadId);
  if (cause === "cancelled") return { results, snapshots };
  const ended = dangling.filter((c) => byId.get(c.id!)?.result).length;
  const parts = [
    ended ? `${ended} finished (result recovered)` : "",
    started.length
      ? `${started.length} interrupted while running${changes ? ` (${changes.length} file(s) changed since)` : ""}`
      : "",
    dangling.length - ended - started.length ? `${dangling.length - ended - started.length} never started` : "",
  ].filter(Boolean);
  return {
    results,
    snapshots,
    note: `The previous run on this thread stopped in the middle of a step (killed or crashed). Its tool calls: ${parts.join(", ")}; the model is told so.`,
  };
}

/**
 * The messages that close a turn the person cancelled (Ctrl-C): interruptionMessages (a result
 * for each call without one, then the note), where the journal knows better (closed with cause
 * "cancelled"): a call that ended keeps its result, and a task call whose sub-agent was cut off
 * says so with the files changed since its step began.
 */
export function cancelledTurn(messages: readonly BaseMessage[], recovered: Recovery): BaseMessage[] {
  const known = new Map(recovered.results.map((r) => [r.tool_call_id, r]));
  return interruptionMessages(messages).map((m) => (ToolMessage.isInstance(m) ? (known.get(m.tool_call_id) ?? m) : m));
}
