import { lstatSync } from "node:fs";
import path from "node:path";
import { HumanMessage, type BaseMessage } from "@langchain/core/messages";
import { snapshotSettings } from "../snapshots/git.js";
import type { TurnSnapshot, WorkspaceSnapshots } from "../contracts/snapshots.js";
import {
  absPath,
  FIRST_SNAPSHOT_TIMEOUT_MS,
  isPendingSnapshot,
  MAX_SNAPSHOT_FILE_BYTES,
  MAX_THREAD_LOG,
  shownPath,
  snapshotStore,
  type SnapshotStore,
} from "../snapshots/store.js";
import { hardLinkScanReason } from "./link-commands.js";
import { planTurnBack } from "./turn-back.js";
import { callEffects, ruleFor, type ToolLike } from "../policy/effects.js";

/**
 * The link between a conversation and its files: before a step's tools can change anything, the
 * workspace is snapshotted (snapshots/store.ts), and after them again. Each request of a
 * thread keeps the snapshot from before its first such step and after its latest, and the paths
 * its own steps changed, in the thread's state (the graph's checkpoints, the loop's thread
 * file), so /undo restores what this thread changed and nothing another thread or the person
 * changed meanwhile, and a checkpoint knows what its files were.
 */

export type { TurnSnapshot, WorkspaceSnapshots };

/** Marks a path of TurnSnapshot.paths that no snapshot holds (no path git names starts with "/"). */
export const UNRECORDED = "//";
/** What undo cannot bring back: files over the limit the turn changed (TurnSnapshot.paths), and what it deleted unheld that is still gone. */
export const unrecordedPaths = (entry: TurnSnapshot, workspace: string) => [
  ...(entry.paths ?? []).filter((p) => p.startsWith(UNRECORDED)).map((p) => p.slice(UNRECORDED.length)),
  ...(entry.unheld ?? []).filter((p) => !fileState(workspace, p)),
];

/**
 * Merges per-request entries; a request's `before` and start time are those of its earliest step.
 * Steps of one request merge in the order they ended, which is not the order they started when
 * sub-agents run in parallel: one that wrote first may end last, and its `before` is the only one
 * without the other's write.
 */
export function mergeSnapshots(current: WorkspaceSnapshots, update: WorkspaceSnapshots): WorkspaceSnapshots {
  const out = { ...current };
  for (const [request, entry] of Object.entries(update)) {
    const first = out[request];
    if (!first) {
      out[request] = entry;
      continue;
    }
    const paths = first.paths && entry.paths ? [...new Set([...first.paths, ...entry.paths])] : undefined;
    const unheld = [...new Set([...(first.unheld ?? []), ...(entry.unheld ?? [])])];
    const error = first.error ?? entry.error;
    const earlier = entry.before && entry.startedAt < first.startedAt ? entry : first;
    out[request] = {
      ...entry,
      before: earlier.before || entry.before,
      after: entry.after || first.after,
      startedAt: Math.min(first.startedAt, entry.startedAt),
      ...(paths ? { paths } : {}),
      ...(unheld.length > 0 ? { unheld } : {}),
      ...(error ? { error } : {}),
    };
    if (!paths) delete out[request]!.paths;
  }
  return out;
}

/** A path a tool named, relative to the workspace and `/`-separated; undefined when it leads outside. */
function relativePath(workspace: string, named: string): string | undefined {
  const rel = path.relative(workspace, path.resolve(workspace, named));
  if (!rel || rel.startsWith("..") || path.isAbsolute(rel)) return undefined;
  return rel.split(path.sep).join("/");
}

/**
 * The paths a step's calls will change, when every call that may change files is an edit tool
 * declaring them (policy/effects.ts); undefined when any may change anything (a command, an
 * undeclared tool), so the step's whole diff counts.
 */
export function declaredPaths(
  workspace: string,
  calls: ReadonlyArray<{ name: string; args?: Record<string, unknown> }>,
  tools?: readonly ToolLike[],
): string[] | undefined {
  const out: string[] = [];
  for (const call of calls) {
    const effects = callEffects({ name: call.name, args: call.args ?? {} }, tools);
    if (!ruleFor(effects).changesFiles) continue;
    if (effects.kind !== "edit" || !effects.paths || effects.paths.length === 0) return undefined;
    for (const p of effects.paths) {
      const rel = relativePath(workspace, p);
      if (rel) out.push(rel);
    }
  }
  return out;
}

/** What a step may change: nothing (undefined), the files edit tools declare, or anything ("any"). */
export type StepChanges = readonly string[] | "any" | undefined;

export function stepChanges(
  workspace: string,
  calls: ReadonlyArray<{ name: string; args?: Record<string, unknown> }>,
  tools?: readonly ToolLike[],
): StepChanges {
  if (!canChangeFiles(calls, tools)) return undefined;
  return declaredPaths(workspace, calls, tools) ?? "any";
}

/** No snapshot is taken for a step whose tools all declare they change no file (kinds read, fetch, other). */
export function canChangeFiles(
  calls: ReadonlyArray<{ name: string; args?: Record<string, unknown> }>,
  tools?: readonly ToolLike[],
): boolean {
  return calls.some((c) => ruleFor(callEffects({ name: c.name, args: c.args ?? {} }, tools)).changesFiles);
}

/** The id of the latest user request in a conversation. */
export function currentRequest(messages: readonly BaseMessage[]): string | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (HumanMessage.isInstance(m) || m.getType() === "human") return m.id;
  }
  return undefined;
}

/** The snapshot of the files as a conversation left them: after the latest request that changed any. */
export function workspaceAt(
  messages: readonly BaseMessage[],
  snapshots: WorkspaceSnapshots | undefined,
): string | undefined {
  if (!snapshots) return undefined;
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.getType() !== "human" || !m.id) continue;
    const entry = snapshots[m.id];
    if (entry?.after) return entry.after;
  }
  return undefined;
}

/** Failures already told, per workspace and reason: each is said once per process, and every step tries again. */
const warned = new Set<string>();

function storeFor(workspace: string): SnapshotStore | undefined {
  if (!snapshotSettings().enabled) return undefined;
  return snapshotStore(workspace);
}

/**
 * Starts the workspace's first snapshot of this process in the background. Any tool step calls
 * it, so a big repository's is under way, or done, when a step first changes files.
 */
export function warmSnapshots(workspace: string): void {
  storeFor(workspace)?.startFirst();
}

/**
 * Before the process ends: when steps were recorded while the workspace's first snapshot was
 * still running, waits for it (their snapshots are whole, and undoable, only once it is done),
 * saying so once the wait has lasted `noticeMs` (as every wait: a short one goes unsaid, so a
 * small workspace's output does not depend on how fast its snapshot was). Never throws.
 */
export async function finishSnapshots(
  workspace: string,
  note: (text: string) => void,
  noticeMs: number,
): Promise<void> {
  const store = storeFor(workspace);
  if (!store?.hasPending()) return;
  const timer = setTimeout(
    () => note("Finishing the workspace's first snapshot, so /undo can bring back the files this run changed…"),
    noticeMs,
  );
  try {
    await store
      .firstReady(FIRST_SNAPSHOT_TIMEOUT_MS)
      .catch((err: Error) =>
        note(`Workspace snapshots failed (${err.message}); /undo cannot bring back the files this run changed.`),
      );
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Why a turn's files cannot be brought back when its snapshot ids are not in the store: taken
 * here while the first snapshot ran, by a process that stopped before it ended; undefined otherwise.
 */
export async function missingSnapshotReason(entry: TurnSnapshot, store: SnapshotStore): Promise<string | undefined> {
  const pending = [entry.before, entry.after].filter(isPendingSnapshot);
  if (pending.length === 0 || !(await store.pendingHere(pending[0]!))) return undefined;
  return "were recorded while the workspace's first snapshot was still being taken, and mini-cursor stopped before that snapshot was done";
}

const mb = (bytes: number) => `${Math.round(bytes / 1024 / 1024)} MB`;

function warn(workspace: string, err: unknown, notice: (text: string) => void): void {
  const key = `${workspace}\0${(err as Error).message}`;
  if (warned.has(key)) return;
  warned.add(key);
  notice(
    `Workspace snapshots failed (${(err as Error).message}); the run goes on, but /undo cannot bring back the files of this step.`,
  );
}

export interface SnapshotStepInput {
  workspace: string;
  /**
   * The graph thread whose files time travel keeps track of (its latest snapshot is kept as a
   * ref in the shadow repository). Empty for the loop, whose threads never travel: its thread
   * ids may equal a graph thread's.
   */
  threadId: string;
  /** The conversation so far (its latest user message names the request), or the request itself. */
  messages?: readonly BaseMessage[];
  request?: string;
  /**
   * The calls this step runs (what their tools declare names the files they change; a command
   * that makes hard links makes the snapshot after scan). Read again when the step finishes: a
   * turn's span (turnSpan) adds the calls that join it.
   */
  calls: ReadonlyArray<{ name: string; args?: Record<string, unknown> }>;
  /**
   * What the step may change, when the caller knows it beyond `calls` (turnSpan: every call of the
   * turn; a sub-agent that has a tool that changes files: "any", recorded as a command step is).
   * Without it, what `calls` declare (stepChanges).
   */
  changes?: StepChanges;
  /** The toolset, for what each called tool declares (without it, the built-in tool of that name). */
  tools?: readonly ToolLike[];
  /** Said once when git is missing or fails. */
  notice: (text: string) => void;
  /** The thread's snapshots (graph state): given, a resumed earlier checkpoint first gets its files back. */
  snapshots?: WorkspaceSnapshots;
}

export interface SnapshotStep {
  /** The snapshot taken before the tools (for the tool journal); none when snapshots are off or failed. */
  readonly before?: string;
  /** After the tools ran: snapshots again and returns the state update (empty when nothing was recorded). */
  finish(): Promise<WorkspaceSnapshots>;
}

const NOTHING: SnapshotStep = { finish: async () => ({}) };

/**
 * Called where a step's tools run, in both engines. Never throws: without git (or when git
 * fails) the run goes on, with one notice in the trace.
 */
export async function snapshotBeforeTools(input: SnapshotStepInput): Promise<SnapshotStep> {
  const request = input.request ?? currentRequest(input.messages ?? []);
  if (request) warmSnapshots(input.workspace);
  const store = request ? storeFor(input.workspace) : undefined;
  const changes = "changes" in input ? input.changes : stepChanges(store?.workspace ?? "", input.calls, input.tools);
  if (!request || !store || !changes) return NOTHING;
  const startedAt = Date.now();
  // Recorded in the turn, so its undo says the files were not kept rather than restoring part.
  const failed = (err: unknown): WorkspaceSnapshots => {
    warn(input.workspace, err, input.notice);
    return { [request]: { before: "", after: "", startedAt, error: (err as Error).message } };
  };
  // An edit step looks at the paths it declares only; a command step at what changed in the whole workspace.
  const declared = changes === "any" ? undefined : [...changes];
  let before: string;
  try {
    // A command may change any file, so it runs once the whole workspace is recorded, waiting a bounded time.
    const waitMs = snapshotSettings().waitMs;
    if (!declared && !(await store.firstReady(waitMs))) {
      const error = `it was not taken in time: the workspace's first snapshot was still being taken after ${waitMs / 1000} s (MINI_CURSOR_SNAPSHOT_WAIT_MS)`;
      input.notice(
        `Workspace snapshot not taken in time: the workspace's first snapshot is still being taken after ${waitMs / 1000} s, so this step runs without one and /undo cannot bring back the files it changes. Steps after it are recorded once that snapshot is done (MINI_CURSOR_SNAPSHOT_WAIT_MS sets the wait).`,
      );
      return { finish: async () => ({ [request]: { before: "", after: "", startedAt, error } }) };
    }
    before = await store.take(declared);
  } catch (err) {
    return { finish: async () => failed(err) };
  }
  // Files over the limit as they were (the declared ones, or all for a whole step): the step names
  // those it changed, deleted or made, and its undo names them, as no snapshot holds them.
  const bigBefore = new Map(store.oversized(declared).map((p) => [p, fileState(store.workspace, p)]));
  const named = declared ? new Set<string>() : namedByCommands(store.workspace, input.calls);
  return {
    before,
    finish: () =>
      inTurn(input.workspace, async () => {
        try {
          // A step that makes hard links may write through them unseen by the file watcher: its snapshot
          // after scans. Read at the end: calls of the turn that joined the span since are counted.
          const scan = declared ? undefined : await hardLinkScanReason(store.workspace, input.calls, input.tools);
          const after = await store.take(declared, scan ? { scan } : undefined);
          const changed = (await store.changes(before, after, undefined, false)).map((c) => c.path);
          const big = [
            ...[...bigBefore].filter(([p, state]) => fileState(store.workspace, p) !== state).map(([p]) => p),
            ...store.oversized(declared).filter((p) => !bigBefore.has(p)),
          ];
          if (big.length > 0)
            input.notice(
              `Not recorded for /undo (over ${mb(MAX_SNAPSHOT_FILE_BYTES)}, the snapshot limit): ${big.map(shownPath).join(", ")}. Undoing this step leaves ${big.length === 1 ? "it" : "them"} as ${big.length === 1 ? "it is" : "they are"}.`,
            );
          // Deleted, yet no recorded change at or under it: no snapshot held it (git ignores it, an empty folder).
          const unheld = [...named].filter(
            (p) =>
              !fileState(store.workspace, p) &&
              !big.includes(p) &&
              !changed.some((c) => c === p || c.startsWith(`${p}/`)),
          );
          if (unheld.length > 0)
            input.notice(
              `Not recorded for /undo (${UNHELD}): ${unheld.map(shownPath).join(", ")}. Undoing this step leaves ${unheld.length === 1 ? "it" : "them"} deleted.`,
            );
          const recorded = (declared ? changed.filter((p) => declared.includes(p)) : changed).filter(
            (p) => !big.includes(p),
          );
          const paths = [...recorded, ...big.map((p) => UNRECORDED + p)];
          if (input.threadId) await store.setThreadSnapshot(input.threadId, after, changed);
          return { [request]: { before, after, startedAt, paths, ...(unheld.length > 0 ? { unheld } : {}) } };
        } catch (err) {
          return failed(err);
        }
      }),
  };
}

/** A turn's calls that run at the same time, and the span they share. */
interface SharedSpan {
  span: Promise<SnapshotStep>;
  calls: Array<{ name: string; args?: Record<string, unknown> }>;
  running: number;
  /** Some call ended with a result (not thrown): the span is recorded when the last one leaves. */
  ended: boolean;
  /** The record, once the last call has left; `leave` settles it. */
  after: Promise<WorkspaceSnapshots>;
  leave: (record: Promise<WorkspaceSnapshots>) => void;
}

const shared = new Map<string, SharedSpan>();

/**
 * One span for the calls of a turn that run at the same time (`key`: the workspace, thread and
 * turn): one snapshot before them, covering what every call of the turn may change (`input.changes`),
 * and one after the last of them, which every one of them returns. Per call, two calls ending
 * together would each record the files after it, and the thread's state would keep whichever
 * the reducer merged last, not the newest (the next step then "travelled" back to it). A call
 * that starts after the others left opens a span of its own. A stopped run (`signal` aborted when
 * the last call leaves) records nothing: its calls' state updates are not saved, and moving the
 * thread's snapshot without them would make the next request "travel" back over a finished edit.
 */
export async function turnSpan(
  key: string,
  call: { name: string; args?: Record<string, unknown> },
  input: () => Omit<SnapshotStepInput, "calls">,
  signal?: AbortSignal,
): Promise<{ before?: string; finish(ok: boolean): Promise<WorkspaceSnapshots> }> {
  let entry = shared.get(key);
  if (!entry) {
    const calls: SharedSpan["calls"] = [];
    let leave: SharedSpan["leave"] = () => undefined;
    const after = new Promise<WorkspaceSnapshots>((resolve) => (leave = resolve));
    entry = { span: snapshotBeforeTools({ ...input(), calls }), calls, running: 0, ended: false, after, leave };
    shared.set(key, entry);
  }
  const mine = entry;
  mine.calls.push(call);
  mine.running++;
  const span = await mine.span;
  return {
    before: span.before,
    finish: (ok) => {
      mine.ended ||= ok;
      if (--mine.running === 0) {
        if (shared.get(key) === mine) shared.delete(key);
        // Every call threw, or the run was stopped: nothing is recorded, as for a lone call.
        mine.leave(mine.ended && !signal?.aborted ? span.finish() : Promise.resolve({}));
      }
      return mine.after;
    },
  };
}

/** Why a deleted path a command named was not recorded. */
export const UNHELD = "ignored by .gitignore, or an empty folder: snapshots do not hold those";

/** At most this many words of a step's commands are looked at for the paths they name. */
const MAX_NAMED_WORDS = 200;

/**
 * The workspace entries a step's commands name as words (`rm -f .env`, `rm -rf node_modules`)
 * that are there before they run: one deleted that no snapshot holds is named by the step and
 * its undo, as a file over the limit is, rather than undo reporting success without it. A path
 * reached another way (a glob, a script) is not seen.
 */
function namedByCommands(workspace: string, calls: SnapshotStepInput["calls"]): Set<string> {
  const out = new Set<string>();
  for (const call of calls) {
    const { command, workingDirectory } = call.args ?? {};
    if (typeof command !== "string") continue;
    const cwd = path.resolve(workspace, typeof workingDirectory === "string" ? workingDirectory : ".");
    for (const word of (command.match(/'[^']*'|"[^"$`\\]*"|[^\s;&|<>()'"`$]+/g) ?? []).slice(0, MAX_NAMED_WORDS)) {
      const bare = word.replace(/^(['"])(.*)\1$/, "$2").replace(/\/+$/, "");
      const rel = bare.startsWith("-") ? undefined : relativePath(workspace, path.resolve(cwd, bare));
      if (rel && fileState(workspace, rel)) out.add(rel);
    }
  }
  return out;
}

/** A file's identity and content stamp (inode, size, mtime, ctime), or "" when it is not there. */
function fileState(workspace: string, rel: string): string {
  try {
    const s = lstatSync(absPath(workspace, rel), { bigint: true });
    return `${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`;
  } catch {
    return "";
  }
}

/** The snapshots after calls, per workspace, one at a time. */
const finishing = new Map<string, Promise<unknown>>();

/**
 * The calls of a turn run together: each records the files after it, and moves its thread there,
 * one after another, so a later record holds every earlier one's files and the thread never
 * moves back to an older one.
 */
function inTurn<T>(workspace: string, work: () => Promise<T>): Promise<T> {
  const done = (finishing.get(workspace) ?? Promise.resolve()).then(work);
  finishing.set(
    workspace,
    done.catch(() => undefined),
  );
  return done;
}

/** What time travel did: the files it put back, and those it kept because someone else changed them since. */
export interface TimeTravel {
  /** The snapshot of the checkpoint travelled to. */
  snapshot: string;
  restored: string[];
  /** This thread's files that another thread or the person changed since: kept as they are. */
  kept: string[];
}

/**
 * Time travel: when a run resumes a checkpoint whose files differ from those the thread last
 * left (Studio forking from an earlier step, the SDK's checkpoint_id), the files this thread
 * changed since that checkpoint are put back to its snapshot, as undo puts back a turn's
 * (turn-back.ts). Files another thread or the person changed since are kept and named; the
 * files as they were are snapshotted first, so nothing is lost.
 */
export async function syncWorkspaceToCheckpoint(
  input: Omit<SnapshotStepInput, "calls" | "messages"> & { messages: readonly BaseMessage[] },
): Promise<TimeTravel | undefined> {
  const target = workspaceAt(input.messages, input.snapshots);
  if (!target || !input.threadId) return undefined;
  const store = storeFor(input.workspace);
  if (!store) return undefined;
  try {
    const current = await store.threadSnapshot(input.threadId);
    if (!current || current === target) return undefined;
    const mine = await store.threadChangesSince(input.threadId, target);
    if (!mine) {
      input.notice(
        `Time travel: this thread's record of the files it changed does not go back to this checkpoint (a thread of an earlier version, or more than ${MAX_THREAD_LOG} file changes ago), so no file was restored.`,
      );
      return { snapshot: target, restored: [], kept: [] };
    }
    const { restore, conflicts } = await planTurnBack(store, current, target, mine);
    const wanted = restore.map((c) => c.path).filter((p) => !conflicts.includes(p));
    // What a link or a file in the place of a folder kept from being put back is kept, and said so.
    const blocked = await store.restore(target, wanted);
    const restored = wanted.filter((p) => !blocked.includes(p));
    conflicts.push(...blocked);
    await store.setThreadSnapshot(input.threadId, target, restored);
    const parts = [
      restored.length > 0
        ? `restored ${restored.length} file(s) to this checkpoint's snapshot: ${restored.join(", ")}`
        : "",
      conflicts.length > 0
        ? `kept ${conflicts.length} file(s) this thread changed that another thread or you changed since: ${conflicts.join(", ")}`
        : "",
    ].filter(Boolean);
    if (parts.length > 0) input.notice(`Time travel: ${parts.join("; ")}.`);
    return { snapshot: target, restored, kept: conflicts };
  } catch (err) {
    warn(input.workspace, err, input.notice);
    return undefined;
  }
}

/** The thread's latest snapshot (what time travel compares against); undefined without one or when snapshots fail. */
export async function snapshotStoreRef(workspace: string, threadId: string): Promise<string | undefined> {
  const store = storeFor(workspace);
  if (!store) return undefined;
  try {
    return (await store.threadSnapshot(threadId)) ?? undefined;
  } catch {
    return undefined;
  }
}
