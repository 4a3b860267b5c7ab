import type { ThreadLocker } from "./thread-lock.js";

/**
 * Never write a thread after losing its lock. A PostgreSQL advisory lock ends with its
 * connection (postgres-lock.ts); from then on another process may be writing the thread, so
 * every write of that thread (checkpoints, the thread index, the journal, the loop's thread) is
 * refused with the error that says what happened. Taking the thread's lock again opens the gate.
 */
export interface LockGate {
  /** The locker whose locks the gate watches. */
  readonly locker: ThreadLocker;
  /** Throws the lost lock's error when `threadId`'s lock was lost. */
  check(threadId: unknown): void;
}

export function lockGate(inner: ThreadLocker): LockGate {
  const lost = new Map<string, Error>();
  return {
    locker: {
      async tryLock(threadId) {
        const attempt = await inner.tryLock(threadId);
        if ("lock" in attempt) {
          lost.delete(threadId);
          attempt.lock.onLost?.((err) => lost.set(threadId, err));
        }
        return attempt;
      },
    },
    check(threadId) {
      const err = typeof threadId === "string" ? lost.get(threadId) : undefined;
      if (err) throw err;
    },
  };
}

/** The thread id a checkpointer write names in its config (`configurable.thread_id`). */
export function configThread(config: unknown): unknown {
  return (config as { configurable?: { thread_id?: unknown } } | undefined)?.configurable?.thread_id;
}
