import { Worker } from "node:worker_threads";

/**
 * The snapshot watcher's hard-link sweep (snapshot-watch.ts) in a worker thread: every file of
 * the given folders lstat'ed, the regular files with more than one link returned. On the main
 * thread, even in 2 ms slices, its ~150,000 system calls beside the first snapshot of a
 * 100,000-file workspace made a one-file edit step that ran meanwhile cost 170–240 ms instead of
 * 74 (issue 30's row). Synchronous calls in a thread of their own: one lstat through the thread
 * pool costs tens of times one made directly, and the main thread is not involved.
 *
 * The script is plain JavaScript that needs nothing but Node's own modules, given to the worker
 * as text: it then runs the same from the sources (tsx, Jest) and from the CLI's bundle, which
 * has no separate file for a worker to load.
 */
const SWEEP_SCRIPT = `
const { parentPort, workerData } = require("node:worker_threads");
const { lstatSync, readdirSync } = require("node:fs");
const path = require("node:path");
const { root, dirs, limit, skipSource, skipFlags } = workerData;
const skip = new RegExp(skipSource, skipFlags);
const found = [];
let over = false;
sweep: for (const rel of dirs) {
  let entries;
  try {
    entries = readdirSync(rel ? path.join(root, rel) : root, { withFileTypes: true });
  } catch {
    continue; // gone meanwhile: the folder's own event says so
  }
  for (const entry of entries) {
    // A hard link's other names are files too; a symlink or folder is never one.
    if (!entry.isFile() || skip.test(entry.name)) continue;
    const child = rel ? rel + "/" + entry.name : entry.name;
    let st;
    try {
      st = lstatSync(path.join(root, child), { throwIfNoEntry: false });
    } catch {
      continue; // may not be looked at (EACCES): nor can a scan read it
    }
    if (!st || !st.isFile() || st.nlink < 2) continue;
    found.push(child);
    if (found.length > limit) {
      over = true;
      break sweep;
    }
  }
}
parentPort.postMessage({ found, over });
`;

export interface LinkSweepResult {
  /** Workspace-relative paths ("/"-separated) of regular files with more than one link. */
  found: string[];
  /** More than `limit` were found; `found` holds the first limit + 1. */
  over: boolean;
}

export interface LinkSweep {
  /** The worker's answer; rejects when it failed or was stopped. */
  result: Promise<LinkSweepResult>;
  /** Ends the worker (a later scan's sweep stands, or the watcher closed). */
  stop(): void;
}

/**
 * Sweeps `dirs` (workspace-relative, "" for the root) of `root` in a worker thread. Names that
 * `skip` matches are left out. The worker does not keep the process alive.
 */
export function sweepLinks(root: string, dirs: string[], limit: number, skip: RegExp): LinkSweep {
  const worker = new Worker(SWEEP_SCRIPT, {
    eval: true,
    workerData: { root, dirs, limit, skipSource: skip.source, skipFlags: skip.flags },
    // Its own output would land in the middle of the terminal's; it has nothing to say.
    stdout: true,
    stderr: true,
  });
  worker.unref();
  let stopped = false;
  const result = new Promise<LinkSweepResult>((resolve, reject) => {
    worker.once("message", (message: LinkSweepResult) => {
      resolve(message);
      void worker.terminate();
    });
    worker.once("error", reject);
    worker.once("exit", (code) =>
      reject(new Error(stopped ? "stopped" : `the sweep's worker thread ended with code ${code} before answering`)),
    );
  });
  return {
    result,
    stop() {
      stopped = true;
      void worker.terminate();
    },
  };
}
