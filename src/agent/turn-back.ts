import { lstatSync, readdirSync } from "node:fs";
import path from "node:path";
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

/** Entries of a folder looked at for someone else's files before a file takes its place. */
const MAX_FOLDER_ENTRIES = 10_000;

/** Whether the folder at `abs` (workspace path `rel`) holds anything but `ours`, ignored files included. */
function holdsOthers(
  abs: string,
  rel: string,
  ours: ReadonlySet<string>,
  budget = { left: MAX_FOLDER_ENTRIES },
): boolean {
  let names: string[];
  try {
    names = readdirSync(abs);
  } catch {
    return false;
  }
  for (const name of names) {
    if (--budget.left < 0) return true; // too big to look through: kept, not guessed at
    const childRel = `${rel}/${name}`;
    const childAbs = path.join(abs, name);
    const st = lstatSync(childAbs, { throwIfNoEntry: false });
    if (st?.isDirectory() ? holdsOthers(childAbs, childRel, ours, budget) : !ours.has(childRel)) return true;
  }
  return false;
}

/** "a/b/c.txt" → ["a", "a/b"]. */
const foldersAbove = (rel: string): string[] =>
  rel
    .split("/")
    .slice(0, -1)
    .map((_, i, parts) => parts.slice(0, i + 1).join("/"));

export async function planTurnBack(
  store: SnapshotStore,
  from: string,
  to: string,
  paths: readonly string[] | undefined,
): Promise<TurnBack> {
  const current = await store.take();
  const restore = await store.changes(from, to, paths);
  const restorePaths = restore.map((c) => c.path);
  const ours = new Set(restorePaths);
  // The folders above each path too: a file someone put where a restored file needs a folder.
  const parents = restorePaths.flatMap(foldersAbove);
  const since = (await store.changes(from, current, [...new Set([...restorePaths, ...parents])])).map((c) => c.path);
  const changedSince = new Set(since);
  const conflicts = restorePaths.filter(
    (p) =>
      changedSince.has(p) ||
      // Where a restored file goes, a folder holding files this thread did not make, ignored ones
      // included (git's checkout would delete the whole folder), or someone's file in place of a folder above it.
      holdsOthers(path.join(store.workspace, p), p, ours) ||
      foldersAbove(p).some((q) => changedSince.has(q) && !ours.has(q)),
  );
  return { current, restore, conflicts };
}
