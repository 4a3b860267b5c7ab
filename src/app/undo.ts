import type { BaseMessage } from "@langchain/core/messages";
import { messageText } from "../agent/turn.js";
import { SUMMARY_KEY } from "../context/compaction.js";
import {
  mergeSnapshots,
  missingSnapshotReason,
  UNHELD,
  UNRECORDED,
  unrecordedPaths,
  workspaceAt,
  type TurnSnapshot,
  type WorkspaceSnapshots,
} from "../agent/snapshot-step.js";
import type { ThreadHistory } from "../agent/thread-history.js";
import { snapshotSettings } from "../snapshots/git.js";
import type { BackgroundProcess, ProcessRegistry } from "../workspace/processes.js";
import {
  MAX_SNAPSHOT_FILE_BYTES,
  shownPath,
  SnapshotError,
  snapshotStore,
  type SnapshotChange,
} from "../snapshots/store.js";
import { requestTask } from "../policy/plan-mode.js";
import { planTurnBack } from "../agent/turn-back.js";

/**
 * /undo, /rewind and `--undo`: the files a turn changed go back to what they were before it
 * (bytes, modes, deleted files recreated, new files removed), the thread is cut back to before
 * its request, and background processes it started are stopped. A file changed by hand since
 * the agent's step is never overwritten without a yes.
 */

/** How much of a request a turn list shows. */
const TURN_TITLE_CHARS = 70;

export interface Turn {
  /** 1 for the thread's first request. */
  number: number;
  requestId: string;
  text: string;
  snapshot?: TurnSnapshot;
}

/** A compaction's summary of older turns comes as a user message, but it is no request of the user's. */
function isSummary(message: BaseMessage): boolean {
  return Boolean((message.response_metadata as Record<string, unknown> | undefined)?.[SUMMARY_KEY]);
}

export function listTurns(messages: readonly BaseMessage[], snapshots: WorkspaceSnapshots): Turn[] {
  return messages
    .filter((m) => m.getType() === "human" && m.id && !isSummary(m))
    .map((m, i) => ({
      number: i + 1,
      requestId: m.id!,
      text: requestTask(messageText(m)),
      snapshot: snapshots[m.id!],
    }));
}

export function formatTurns(turns: Turn[]): string {
  if (turns.length === 0) return "No turns in this thread yet.";
  const lines = turns.map((t) => {
    const title = t.text.replace(/\s+/g, " ").trim();
    const short = title.length > TURN_TITLE_CHARS ? `${title.slice(0, TURN_TITLE_CHARS - 1)}…` : title;
    return `  ${String(t.number).padStart(3)}  ${short}${t.snapshot ? "" : "  (changed no files)"}`;
  });
  return `Turns (/rewind <n> goes back to before turn n):\n${lines.join("\n")}`;
}

export interface UndoContext {
  workspace: string;
  threadId: string;
  history: ThreadHistory;
  processes?: ProcessRegistry;
  /**
   * The snapshots of a step the last run left in the middle (killed): what the next run's recovery
   * takes from the tool journal, so an undo right after a crash still has that step's files.
   */
  interrupted?: (threadId: string, messages: readonly BaseMessage[]) => Promise<WorkspaceSnapshots>;
}

export interface UndoOptions {
  /** Overwrite files changed by hand since the agent's step without asking. */
  overwrite?: boolean;
  /** Asks whether to overwrite those files (on a terminal); without it the undo is refused. */
  confirm?: (paths: string[]) => Promise<boolean>;
  /** How to tell the user to force it (the flag differs between the CLI and the session). */
  forceHint: string;
}

export interface UndoResult {
  ok: boolean;
  /** What happened, for the terminal: the restored files as a diff summary, or why nothing changed. */
  text: string;
}

function describeChange(c: SnapshotChange): string {
  // `c` goes from after the turn to before it: "A" is a file the turn deleted, "D" one it created.
  if (c.status === "A") return `  recreated  ${shownPath(c.path)}`;
  if (c.status === "D") return `  removed    ${shownPath(c.path)}`;
  const lines = c.added === undefined ? "binary" : `+${c.added} -${c.removed}`;
  const mode = c.fromMode !== c.toMode ? `, mode ${c.fromMode.slice(-3)} -> ${c.toMode.slice(-3)}` : "";
  return `  restored   ${shownPath(c.path)} (${c.status === "T" ? "type changed" : lines}${mode})`;
}

const listed = (paths: readonly string[]) => paths.map((p) => `  ${shownPath(p)}`).join("\n");

async function stopStartedSince(processes: ProcessRegistry | undefined, since: number): Promise<BackgroundProcess[]> {
  if (!processes) return [];
  const started = processes.list().filter((p) => p.running && p.startedAt >= since);
  for (const p of started) await processes.stop(p.id);
  return started;
}

/** Undoes the thread's latest turn; git failing is reported, not thrown. */
export async function undoLastTurn(ctx: UndoContext, options: UndoOptions): Promise<UndoResult> {
  try {
    return await undoLast(ctx, options);
  } catch (err) {
    if (!(err instanceof SnapshotError)) throw err;
    return {
      ok: false,
      text: `The undo failed: ${err.message}. Files it had already put back stay so; the conversation was not changed.`,
    };
  }
}

async function undoLast(ctx: UndoContext, options: UndoOptions): Promise<UndoResult> {
  const { messages, snapshots: saved } = await ctx.history.read(ctx.threadId);
  // A step the last run left in the middle is in no snapshot entry yet: its journal says what it was.
  const snapshots = ctx.interrupted ? mergeSnapshots(saved, await ctx.interrupted(ctx.threadId, messages)) : saved;
  const turn = listTurns(messages, snapshots).at(-1);
  if (!turn) return { ok: false, text: `Nothing to undo: thread ${ctx.threadId} has no turns.` };
  const lines = [`Undid turn ${turn.number}: ${turn.text.replace(/\s+/g, " ").slice(0, TURN_TITLE_CHARS)}`];
  /** The paths this undo put back (the thread's log of its file moves records them). */
  let restored: string[] = [];
  const entry = turn.snapshot;
  const refused = entry && (await refusal(ctx, turn.number, entry));
  if (refused) return { ok: false, text: refused };
  if (entry) {
    const store = snapshotStore(ctx.workspace);
    // Only what this thread's steps changed (entry.paths): another thread's files are not this turn's.
    const recorded = entry.paths?.filter((p) => !p.startsWith(UNRECORDED));
    const { restore, conflicts } = await planTurnBack(store, entry.after, entry.before, recorded);
    const lost = unrecordedPaths(entry, ctx.workspace);
    if ((conflicts.length > 0 || lost.length > 0) && !options.overwrite) {
      const heading = [
        conflicts.length > 0
          ? `These files were changed since turn ${turn.number} (by hand or by another thread); undoing it would overwrite those changes:\n${listed(conflicts)}`
          : "",
        lost.length > 0
          ? `These files changed in turn ${turn.number} but were not recorded (over ${MAX_SNAPSHOT_FILE_BYTES / 1024 / 1024} MB, the snapshot limit; or ${UNHELD}), so undoing it cannot bring them back:\n${listed(lost)}`
          : "",
      ].filter(Boolean);
      const force = conflicts.length > 0 ? "overwrite them" : "undo the rest anyway";
      if (!options.confirm || lost.length > 0)
        return {
          ok: false,
          text: `${heading.join("\n")}\nNothing was changed. To ${force}, run ${options.forceHint}.`,
        };
      if (!(await options.confirm(conflicts))) return { ok: false, text: "Undo cancelled; nothing was changed." };
    }
    const skipped = await store.restore(
      entry.before,
      restore.map((c) => c.path),
    );
    const put = restore.filter((c) => !skipped.includes(c.path));
    restored = put.map((c) => c.path);
    lines.push(
      put.length > 0
        ? `Files (${put.length}):`
        : skipped.length > 0
          ? "No file was put back."
          : lost.length > 0
            ? "No recorded file to put back."
            : "The turn left no file changed.",
      ...put.map(describeChange),
      ...(skipped.length > 0
        ? [`Not put back (a link or a file now stands where a folder of theirs was):\n${listed(skipped)}`]
        : []),
      ...(lost.length > 0
        ? [`Not brought back (never recorded: over the snapshot limit, or ${UNHELD}):\n${listed(lost)}`]
        : []),
    );
  } else {
    lines.push("That turn changed no files (or they were not recorded); only the conversation goes back.");
  }
  await ctx.history.rewind(ctx.threadId, turn.requestId);
  if (entry) {
    if (ctx.history.tracksWorkspace) {
      // The thread's files are now those of its new last checkpoint: time travel must not "restore" them again.
      const after = await ctx.history.read(ctx.threadId);
      const at = workspaceAt(after.messages, after.snapshots) ?? entry.before;
      // A checkpoint whose snapshot is not here (another state folder's) is no place to record.
      const store = snapshotStore(ctx.workspace);
      if (await store.has(at)) await store.setThreadSnapshot(ctx.threadId, at, restored);
    }
    const stopped = await stopStartedSince(ctx.processes, entry.startedAt);
    for (const p of stopped) lines.push(`Stopped background process ${p.id} (${p.command}), started by that turn.`);
  }
  return { ok: true, text: lines.join("\n") };
}

/** Why the turn's files cannot be brought back at all, in one sentence; undefined when they can. */
async function refusal(ctx: UndoContext, number: number, entry: TurnSnapshot): Promise<string | undefined> {
  if (!snapshotSettings().enabled)
    return "Workspace snapshots are off (MINI_CURSOR_SNAPSHOTS=off), so files cannot be brought back; nothing was changed.";
  if (entry.error)
    return `The files of turn ${number} were not recorded (the snapshot failed: ${entry.error}), so they cannot be brought back; nothing was changed.`;
  const store = snapshotStore(ctx.workspace);
  if (entry.before && entry.after && (await store.has(entry.before)) && (await store.has(entry.after)))
    return undefined;
  const pending = await missingSnapshotReason(entry, store);
  if (pending) return `The files of turn ${number} ${pending}, so they cannot be brought back; nothing was changed.`;
  return `The files of turn ${number} were recorded in another state folder (another machine, or one since removed), not in ${store.gitDir}, so they cannot be brought back here; nothing was changed.`;
}

/** Goes back to before turn `number` (1-based), undoing the later turns newest first; stops at the first one refused. */
export async function rewindTo(ctx: UndoContext, number: number, options: UndoOptions): Promise<UndoResult> {
  const { messages, snapshots } = await ctx.history.read(ctx.threadId);
  const turns = listTurns(messages, snapshots);
  if (!Number.isInteger(number) || number < 1 || number > turns.length) {
    return {
      ok: false,
      text:
        turns.length === 0
          ? "No turns in this thread yet."
          : `Usage: /rewind <n> with n from 1 to ${turns.length}.\n${formatTurns(turns)}`,
    };
  }
  const texts: string[] = [];
  for (let i = turns.length; i >= number; i--) {
    const result = await undoLastTurn(ctx, options);
    texts.push(result.text);
    if (!result.ok) return { ok: false, text: texts.join("\n") };
  }
  return { ok: true, text: texts.join("\n") };
}

/** The undo context of a CLI session's current thread. */
export function sessionUndoContext(session: {
  settings: { workspace: string };
  threadId: string;
  parts: Pick<UndoContext, "history" | "interrupted"> & { tools: { processes: ProcessRegistry } };
}): UndoContext {
  return {
    workspace: session.settings.workspace,
    threadId: session.threadId,
    history: session.parts.history,
    processes: session.parts.tools.processes,
    interrupted: session.parts.interrupted,
  };
}
