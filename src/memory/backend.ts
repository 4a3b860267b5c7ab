import path from "node:path";
import type { BaseCheckpointSaver } from "@langchain/langgraph";
import type { LoopMemory } from "./loop-threads.js";
import { redactCredentials } from "../credential-shapes.js";
import { SQLITE_CHECKPOINTER } from "../contracts/run-choices.js";
import { createSqliteCheckpointer } from "./checkpointer.js";
import { guardSaver } from "./guard-saver.js";
import { describeStateProblem, POSTGRES_CONNECT_TIMEOUT_MS, StateError } from "./state-errors.js";
import { lockGate } from "./lock-gate.js";
import { fileThreadLocker, type ThreadLocker } from "./thread-lock.js";
import { fileThreadStore, type ThreadStore } from "./thread-store.js";
import { fileToolJournal, type ToolJournal } from "./tool-journal.js";

/**
 * Where a session's memory lives, as the settings say: the embedded SQLite file and JSON files
 * in the state folder (default), or one PostgreSQL database holding the graph's checkpoints,
 * the loop's threads, the thread index and the tool journal (MINI_CURSOR_CHECKPOINTER /
 * --checkpointer). The pg driver is loaded only for the latter.
 */

export interface MemoryBackend {
  threads: ThreadStore;
  /** The graph's checkpointer, opened on the first call. */
  checkpointer(): BaseCheckpointSaver;
  /** The loop's threads; undefined keeps the loop's JSON files. */
  loopMemory?: LoopMemory;
  /** One writer per thread: file locks, or advisory locks in PostgreSQL. */
  locker: ThreadLocker;
  /** The write-ahead journal of tool calls (tool-journal.ts). */
  journal: ToolJournal;
  /** Releases the database handle or connections. */
  close(): Promise<void>;
}

/** Connections one CLI process keeps open to PostgreSQL (a turn uses one at a time). */
export const POSTGRES_POOL_SIZE = 4;

/** The database could not be reached or set up: says where, without the password, and what to check. */
export class MemoryUnavailableError extends StateError {
  override name = "MemoryUnavailableError";
  constructor(url: string, cause: unknown) {
    super(
      describeStateProblem(cause, { url })?.message ??
        `cannot use the PostgreSQL checkpointer at ${redactCredentials(url)}: ${(cause as Error)?.message ?? cause}. ` +
          "Check that the server is running and that MINI_CURSOR_CHECKPOINTER (or --checkpointer) is right; unset it to keep threads in the workspace (SQLite).",
      "UNAVAILABLE",
    );
  }
}

/** The embedded default: state.sqlite and JSON files in the workspace's state folder (outside it). */
export function openSqliteMemory(workspace: string): MemoryBackend {
  let saver: ReturnType<typeof createSqliteCheckpointer> | undefined;
  return {
    threads: fileThreadStore(workspace),
    checkpointer: () => (saver ??= createSqliteCheckpointer(workspace)),
    locker: fileThreadLocker(workspace),
    journal: fileToolJournal(workspace),
    async close() {
      saver?.db.close();
    },
  };
}

/** How a slow start of the memory is said: after `noticeMs`, `onWait` once with what it waits for. */
export interface MemoryWaits {
  noticeMs: number;
  onWait: (text: string) => void;
}

async function postgresMemory(url: string, workspace: string, waits?: MemoryWaits): Promise<MemoryBackend> {
  const [{ default: pg }, { CompactPostgresSaver, checkLostTables }, threadTables, { postgresThreadLocker }] =
    await Promise.all([
      import("pg"),
      import("./postgres-saver.js"),
      import("./postgres-threads.js"),
      import("./postgres-lock.js"),
    ]);
  const pool = new pg.Pool({
    connectionString: url,
    max: POSTGRES_POOL_SIZE,
    connectionTimeoutMillis: POSTGRES_CONNECT_TIMEOUT_MS,
  });
  // An idle connection the server drops must not crash the process; the next query reports it.
  pool.on("error", () => undefined);
  // Nor one that drops while checked out (a server stopped mid-query): the query itself fails,
  // and that failure is what gets reported (state-errors.ts).
  pool.on("connect", (client) => client.on("error", () => undefined));
  // Nothing of a thread is written once its lock's connection has ended (lock-gate.ts).
  const gate = lockGate(postgresThreadLocker(pg, url));
  const saver = guardSaver(
    new CompactPostgresSaver(pool, threadTables.createThreadTables, url, threadTables.THREAD_TABLES),
    { url },
    gate.check,
  );
  const unavailable = (err: unknown): never => {
    throw err instanceof StateError ? err : new MemoryUnavailableError(url, err);
  };
  // A database this version never stamped with its format (mini_cursor_format gone, or made before
  // it) is checked here: any table of ours there means mini-cursor used it, and then LangGraph's
  // tables must be too; the saver's setup would otherwise make them again, empty, in silence.
  let tablesChecked = false;
  const ready = async () => {
    if (!tablesChecked) await checkLostTables(pool, url, threadTables.THREAD_TABLES).catch(unavailable);
    tablesChecked = true;
    await saver.setup().catch(unavailable);
  };
  // Fail before a model request, not at the first save; a slow answer is said (issue 26: no silent waits).
  const notice =
    waits &&
    setTimeout(
      () =>
        waits.onWait(
          `Waiting for the PostgreSQL database at ${redactCredentials(url)} to answer (at most ${POSTGRES_CONNECT_TIMEOUT_MS / 1000} s)…`,
        ),
      waits.noticeMs,
    );
  try {
    await ready();
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw err;
  } finally {
    clearTimeout(notice);
  }
  const guarded = <T extends object>(target: T, writes: string[] = []): T => guardAll(target, url, gate.check, writes);
  return {
    threads: guarded(threadTables.postgresThreadStore(pool, path.basename(workspace), ready), ["begin", "record"]),
    checkpointer: () => saver,
    loopMemory: guarded(threadTables.postgresLoopMemory(pool, ready), ["save"]),
    locker: guarded(gate.locker),
    journal: guarded(threadTables.postgresToolJournal(pool, ready), ["start", "end", "clear"]),
    close: () => pool.end(),
  };
}

/**
 * Every method of `target` with its database errors said as what they are (state-errors.ts);
 * the `writes` (whose first argument is the thread id) pass `check` first.
 */
function guardAll<T extends object>(
  target: T,
  url: string,
  check: (threadId: unknown) => void,
  writes: readonly string[],
): T {
  const out = {} as Record<string, unknown>;
  for (const [name, fn] of Object.entries(target)) {
    out[name] =
      typeof fn === "function"
        ? async (...args: unknown[]) => {
            if (writes.includes(name)) check(args[0]);
            try {
              return await (fn as (...a: unknown[]) => unknown).apply(target, args);
            } catch (err) {
              throw describeStateProblem(err, { url }) ?? err;
            }
          }
        : fn;
  }
  return out as T;
}

export function openMemory(
  settings: { workspace: string; checkpointer: string },
  waits?: MemoryWaits,
): Promise<MemoryBackend> {
  if (settings.checkpointer === SQLITE_CHECKPOINTER) return Promise.resolve(openSqliteMemory(settings.workspace));
  return postgresMemory(settings.checkpointer, settings.workspace, waits);
}
