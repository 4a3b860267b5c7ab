import path from "node:path";
import { resolvePath, type Workspace } from "../workspace/paths.js";

/**
 * One lock per file for the tools that change files (edit_file, apply_patch, write_file): a
 * call reads the file, works out the new content and writes it while it holds the lock, so a
 * second call on the same file (another turn's, another thread's, Studio's) reads the first
 * one's result instead of the content both started from. Per process; files are keyed by
 * where they really are (symlinks resolved), so two spellings of one file share a lock.
 */

const queues = new Map<string, Promise<void>>();

async function acquire(key: string): Promise<() => void> {
  const before = queues.get(key) ?? Promise.resolve();
  let release!: () => void;
  const mine = new Promise<void>((resolve) => (release = resolve));
  const tail = before.then(() => mine);
  queues.set(key, tail);
  await before;
  return () => {
    release();
    if (queues.get(key) === tail) queues.delete(key);
  };
}

/** The key a path is locked under: where it really is, or where it would be when it cannot be resolved. */
async function keyOf(ws: Workspace, userPath: string): Promise<string> {
  try {
    return (await resolvePath(ws, userPath)).absolute;
  } catch {
    return path.resolve(ws.root, userPath);
  }
}

/** Runs `work` holding the locks of every path (taken in one order, so two calls cannot wait on each other). */
export async function withPathLocks<T>(
  ws: Workspace,
  userPaths: readonly string[],
  work: () => Promise<T>,
): Promise<T> {
  const keys = [...new Set(await Promise.all(userPaths.map((p) => keyOf(ws, p))))].sort();
  const releases: (() => void)[] = [];
  try {
    for (const key of keys) releases.push(await acquire(key));
    return await work();
  } finally {
    for (const release of releases.reverse()) release();
  }
}
