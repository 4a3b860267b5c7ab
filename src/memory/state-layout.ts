/**
 * Names in a workspace's state folder and the index's limits, shared by the stores that write
 * them and by rebuild-threads.ts, which reads them back when the index is damaged (and which
 * the stores import, so it cannot import them).
 */

/** The graph's checkpoints (SQLite). */
export const STATE_DB_FILE = "state.sqlite";
/** The loop's memory: one JSON file per thread, rewritten after every step. */
export const LOOP_THREADS_DIR = "loop-threads";
/** Longest first request kept in the thread index. */
export const MAX_TITLE_CHARS = 120;

/** A thread id (which comes from users) as one safe file name. */
export const safeFileName = (threadId: string): string => threadId.replace(/[^A-Za-z0-9._-]/g, "_");
