import type { SnapshotChange, SnapshotStore } from "../snapshots/store.js";

/**
 * Taking a thread's files back, the one way `/undo`, `/rewind`, `--undo` (app/undo.ts) and
 * Studio's time travel (snapshot-step.ts) do it: only the paths this thread changed going from
 * snapshot `from` to where it is, put back as they are in snapshot `to`; a path someone else (another
 * thread, the person) changed since `from` is a conflict, which the caller keeps or overwrites.
 */
export interface TurnBack {
  /** The workspace now (snapshotted first, so nothing is lost whatever is restored). */
  current: string;
  /** What putting the thread's paths back changes, going from `from` to `to`. */
  restore: SnapshotChange[];
  /** Paths of `restore` that changed since `from` (by another thread or by hand). */
  conflicts: string[];
}

export async function planTurnBack(
  store: SnapshotStore,
  from: string,
  to: string,
  paths: readonly string[] | undefined,
): Promise<TurnBack> {
  const current = await store.take();
  const restore = await store.changes(from, to, paths);
  const restorePaths = restore.map((c) => c.path);
  const changedSince = new Set((await store.changes(from, current, restorePaths)).map((c) => c.path));
  return { current, restore, conflicts: restorePaths.filter((p) => changedSince.has(p)) };
}
