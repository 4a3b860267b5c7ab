import type pg from "pg";
import type { LoopMemory, LoopThread, StoredThread } from "./loop-threads.js";
import { restoreLoopThread, storeLoopThread } from "./loop-threads.js";
import type { ThreadStore } from "./thread-store.js";
import { withResults, type JournalEntry, type ToolJournal } from "./tool-journal.js";
import { MAX_TITLE_CHARS } from "./state-layout.js";
import type { ThreadInfo } from "./threads.js";

/**
 * The thread index and the loop engine's threads in PostgreSQL, so every machine using the
 * database sees and continues the same threads. The index is scoped by the workspace's folder
 * name (the same repository is checked out at different paths on different machines).
 */

export const THREADS_TABLE = "public.mini_cursor_threads";
export const LOOP_THREADS_TABLE = "public.mini_cursor_loop_threads";
export const TOOL_JOURNAL_TABLE = "public.mini_cursor_tool_journal";
/** The tables createThreadTables makes (checked at start with the checkpointer's). */
export const THREAD_TABLES = [THREADS_TABLE, LOOP_THREADS_TABLE, TOOL_JOURNAL_TABLE];

export async function createThreadTables(db: pg.Pool | pg.PoolClient): Promise<void> {
  await db.query(`CREATE TABLE IF NOT EXISTS ${THREADS_TABLE} (
  workspace TEXT NOT NULL,
  id TEXT NOT NULL,
  engine TEXT NOT NULL,
  first_request TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  steps INTEGER NOT NULL,
  runs INTEGER NOT NULL,
  PRIMARY KEY (workspace, id)
)`);
  await db.query(`CREATE TABLE IF NOT EXISTS ${LOOP_THREADS_TABLE} (
  thread_id TEXT PRIMARY KEY,
  data JSONB NOT NULL
)`);
  await db.query(`CREATE TABLE IF NOT EXISTS ${TOOL_JOURNAL_TABLE} (
  thread_id TEXT PRIMARY KEY,
  entries JSONB NOT NULL
)`);
}

interface ThreadRow {
  id: string;
  engine: string;
  first_request: string;
  created_at: string;
  updated_at: string;
  steps: number;
  runs: number;
}

const toInfo = (r: ThreadRow): ThreadInfo => ({
  id: r.id,
  engine: r.engine,
  firstRequest: r.first_request,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  steps: r.steps,
  runs: r.runs,
});

export function postgresThreadStore(db: pg.Pool, workspaceName: string, ready: () => Promise<void>): ThreadStore {
  return {
    async list() {
      await ready();
      const res = await db.query<ThreadRow>(
        `SELECT * FROM ${THREADS_TABLE} WHERE workspace = $1 ORDER BY updated_at DESC, id`,
        [workspaceName],
      );
      return res.rows.map(toInfo);
    },
    async begin(id, engine, request) {
      await ready();
      const now = new Date().toISOString();
      await db.query(
        `INSERT INTO ${THREADS_TABLE} (workspace, id, engine, first_request, created_at, updated_at, steps, runs)
VALUES ($1, $2, $3, $4, $5, $5, 0, 0) ON CONFLICT (workspace, id) DO NOTHING`,
        [workspaceName, id, engine, request.slice(0, MAX_TITLE_CHARS), now],
      );
    },
    async record(id, engine, request, steps) {
      await ready();
      const now = new Date().toISOString();
      // One statement, so two processes recording runs on one thread both count.
      const res = await db.query<ThreadRow>(
        `INSERT INTO ${THREADS_TABLE} AS t (workspace, id, engine, first_request, created_at, updated_at, steps, runs)
VALUES ($1, $2, $3, $4, $5, $5, $6, 1)
ON CONFLICT (workspace, id) DO UPDATE SET updated_at = EXCLUDED.updated_at, steps = t.steps + EXCLUDED.steps, runs = t.runs + 1
RETURNING *`,
        [workspaceName, id, engine, request.slice(0, MAX_TITLE_CHARS), now, steps],
      );
      return toInfo(res.rows[0]!);
    },
  };
}

export function postgresLoopMemory(db: pg.Pool, ready: () => Promise<void>): LoopMemory {
  return {
    async load(threadId): Promise<LoopThread> {
      await ready();
      const res = await db.query<{ data: StoredThread }>(
        `SELECT data FROM ${LOOP_THREADS_TABLE} WHERE thread_id = $1`,
        [threadId],
      );
      const row = res.rows[0];
      return row ? restoreLoopThread(row.data) : { messages: [], alwaysAllow: [] };
    },
    async save(threadId, thread) {
      await ready();
      await db.query(
        `INSERT INTO ${LOOP_THREADS_TABLE} (thread_id, data) VALUES ($1, $2) ON CONFLICT (thread_id) DO UPDATE SET data = EXCLUDED.data`,
        [threadId, JSON.stringify(storeLoopThread(thread))],
      );
    },
  };
}

/** The write-ahead journal of tool calls (tool-journal.ts) as one row per thread. */
export function postgresToolJournal(db: pg.Pool, ready: () => Promise<void>): ToolJournal {
  const read = async (threadId: string): Promise<JournalEntry[]> => {
    await ready();
    const res = await db.query<{ entries: JournalEntry[] }>(
      `SELECT entries FROM ${TOOL_JOURNAL_TABLE} WHERE thread_id = $1`,
      [threadId],
    );
    return res.rows[0]?.entries ?? [];
  };
  const write = async (threadId: string, entries: JournalEntry[]) => {
    await ready();
    await db.query(
      `INSERT INTO ${TOOL_JOURNAL_TABLE} (thread_id, entries) VALUES ($1, $2) ON CONFLICT (thread_id) DO UPDATE SET entries = EXCLUDED.entries`,
      [threadId, JSON.stringify(entries)],
    );
  };
  return {
    start: (threadId, entries) => write(threadId, entries),
    end: async (threadId, results) => write(threadId, withResults(await read(threadId), results)),
    read,
    async clear(threadId) {
      await ready();
      await db.query(`DELETE FROM ${TOOL_JOURNAL_TABLE} WHERE thread_id = $1`, [threadId]);
    },
  };
}
