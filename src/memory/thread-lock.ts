import { unlinkSync, writeFileSync } from "node:fs";
import { readRegularTextSync } from "../regular-file.js";
import { hostname } from "node:os";
import path from "node:path";
import { processStartTime } from "../process-life.js";
import { ensureStateSubdir } from "./state-dir.js";
import { openSqliteFile, type SqliteDatabase } from "./sqlite-driver.js";
import { safeFileName } from "./state-layout.js";

/**
 * One writer per thread. A process continuing a thread holds a lock that the operating system
 * (or the database server) releases when the process dies, however it dies: for the workspace's
 * files an exclusive SQLite transaction on a small lock file (a POSIX record lock underneath,
 * gone with its process, so a pid that was reused later can never hold it), for PostgreSQL a
 * session advisory lock on a dedicated connection (postgres-lock.ts). Each thread has its own
 * lock, so threads of one workspace never wait for each other.
 */

/** Subfolder of the state folder with one lock file per thread that is or was open. */
export const LOCKS_SUBDIR = "locks";
/** How often a process waiting for a thread (--wait-for-thread) asks again. */
export const THREAD_LOCK_POLL_MS = 250;

/** Who holds a thread: written by the holder beside its lock, for the sentence that names it. */
export interface ThreadHolder {
  pid: number;
  host: string;
  /** ISO time the holder took the thread. */
  since: string;
  /** The holder's start time in clock ticks since boot (/proc/<pid>/stat), so a reused pid is not taken for it. */
  start?: string;
}

export interface ThreadLock {
  readonly threadId: string;
  release(): Promise<void>;
  /**
   * Locks that can end under a live holder (PostgreSQL's, when its connection ends) say so:
   * `listener` is told once, with the error that says what happened; returns the unsubscribe.
   */
  onLost?(listener: (err: Error) => void): () => void;
  /** The error `onLost` told, once the lock is lost. */
  lost?(): Error | undefined;
}

export type LockAttempt = { lock: ThreadLock } | { busy: ThreadHolder | undefined };

export interface ThreadLocker {
  /** Takes the thread's lock now, or says who holds it (undefined when that is not known yet). */
  tryLock(threadId: string): Promise<LockAttempt>;
}

export function thisHolder(): ThreadHolder {
  return { pid: process.pid, host: hostname(), since: new Date().toISOString(), start: processStartTime(process.pid) };
}

/**
 * Whether a holder named in the holder file still runs here (same pid and start time; one that
 * exited and was not reaped yet, a zombie, does not: process-life.ts). A second check beside the
 * record lock: POSIX drops a process's record locks when any descriptor of the file is closed in
 * it, so a lock could vanish under a live holder.
 */
function holderAlive(holder: ThreadHolder | undefined): boolean {
  if (!holder?.start || holder.pid === process.pid || holder.host !== hostname()) return false;
  return processStartTime(holder.pid) === holder.start;
}

export function describeHolder(holder: ThreadHolder | undefined): string {
  if (!holder) return "another mini-cursor process";
  const where = holder.host && holder.host !== hostname() ? ` on ${holder.host}` : "";
  const since = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d/.test(holder.since)
    ? `, since ${holder.since.slice(0, 19).replace("T", " ")} UTC`
    : "";
  return `another mini-cursor (pid ${holder.pid}${where}${since})`;
}

/** A second process asked for a thread another one is writing: refused at once, saying which. */
export class ThreadBusyError extends Error {
  override name = "ThreadBusyError";
  constructor(
    readonly threadId: string,
    readonly holder: ThreadHolder | undefined,
  ) {
    super(
      `thread ${threadId} is being continued by ${describeHolder(holder)}. One process writes a thread at a time, so nothing was run. ` +
        "Wait until that run ends (or stop it), pass --wait-for-thread to wait here until it is free, or leave out --thread/--continue to start a new thread.",
    );
  }
}

export interface AcquireOptions {
  /** Wait until the thread is free instead of refusing (--wait-for-thread). */
  wait: boolean;
  /** Told once when waiting starts. */
  onWait?: (text: string) => void;
  signal?: AbortSignal;
}

/** The thread's lock, waiting for it when asked; otherwise a ThreadBusyError naming the holder. */
export async function acquireThreadLock(
  locker: ThreadLocker,
  threadId: string,
  options: AcquireOptions,
): Promise<ThreadLock> {
  let told = false;
  for (;;) {
    const attempt = await locker.tryLock(threadId);
    if ("lock" in attempt) return attempt.lock;
    if (!options.wait || options.signal?.aborted) throw new ThreadBusyError(threadId, attempt.busy);
    if (!told)
      options.onWait?.(
        `Waiting for thread ${threadId}: it is being continued by ${describeHolder(attempt.busy)}; this run starts when that one ends (--wait-for-thread).`,
      );
    told = true;
    await new Promise((resolve) => setTimeout(resolve, THREAD_LOCK_POLL_MS));
  }
}

function readHolder(file: string): ThreadHolder | undefined {
  try {
    const data = JSON.parse(readRegularTextSync(file)) as Partial<ThreadHolder>;
    if (typeof data.pid !== "number") return undefined;
    return {
      pid: data.pid,
      host: String(data.host ?? ""),
      since: String(data.since ?? ""),
      ...(data.start ? { start: String(data.start) } : {}),
    };
  } catch {
    return undefined;
  }
}

const isBusy = (err: unknown) => /^SQLITE_(BUSY|LOCKED)/.test(String((err as { code?: unknown }).code ?? ""));

/** Locks in `<state folder>/locks/`: `<thread>.lock` (the SQLite lock) and `<thread>.holder.json`. */
export function fileThreadLocker(workspace: string): ThreadLocker {
  return {
    async tryLock(threadId) {
      const dir = ensureStateSubdir(workspace, LOCKS_SUBDIR);
      const lockFile = path.join(dir, `${safeFileName(threadId)}.lock`);
      const holderFile = path.join(dir, `${safeFileName(threadId)}.holder.json`);
      // No busy timeout: a held lock answers at once, and waiting is ours to show.
      const db: SqliteDatabase = openSqliteFile(lockFile, { timeout: 0 });
      try {
        // The rollback journal in memory: taking the lock writes no file beside it.
        db.pragma("journal_mode = MEMORY");
        db.exec("BEGIN EXCLUSIVE");
      } catch (err) {
        db.close();
        if (isBusy(err)) return { busy: readHolder(holderFile) };
        throw err;
      }
      const previous = readHolder(holderFile);
      if (holderAlive(previous)) {
        db.exec("ROLLBACK");
        db.close();
        return { busy: previous };
      }
      const me = thisHolder();
      try {
        writeFileSync(holderFile, JSON.stringify(me));
      } catch {
        // Only the sentence naming the holder needs it (a full disk, say); the lock holds without it.
      }
      let released = false;
      return {
        lock: {
          threadId,
          async release() {
            if (released) return;
            released = true;
            if (readHolder(holderFile)?.pid === me.pid) {
              try {
                unlinkSync(holderFile);
              } catch {
                // already gone: nothing to tidy
              }
            }
            try {
              db.exec("ROLLBACK");
            } finally {
              db.close();
            }
          },
        },
      };
    },
  };
}
