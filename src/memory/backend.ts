import path from "node:path";
import type { BaseCheckpointSaver } from "@langchain/langgraph";
import type { LoopMemory } from "./loop-threads.js";
import { redactUrlPassword, SQLITE_CHECKPOINTER } from "../settings.js";
import { createSqliteCheckpointer } from "./checkpointer.js";
import { fileThreadStore, type ThreadStore } from "./thread-store.js";

/**
 * Where a session's memory lives, as the settings say: the embedded SQLite file and JSON files
 * in the workspace (default), or one PostgreSQL database holding the graph's checkpoints, the
 * loop's threads and the thread index (MINI_CURSOR_CHECKPOINTER / --checkpointer). The pg
 * driver is loaded only for the latter.
 */

export interface MemoryBackend {
  threads: ThreadStore;
  /** The graph's checkpointer, opened on the first call. */
  checkpointer(): BaseCheckpointSaver;
  /** The loop's threads; undefined keeps the loop's JSON files. */
  loopMemory?: LoopMemory;
  /** Releases the database handle or connections. */
  close(): Promise<void>;
}

/** Connections one CLI process keeps open to PostgreSQL (a turn uses one at a time). */
export const POSTGRES_POOL_SIZE = 4;

/** The database could not be reached or set up: says where, without the password, and what to check. */
export class MemoryUnavailableError extends Error {
  override name = "MemoryUnavailableError";
  constructor(url: string, cause: unknown) {
    super(
      `cannot use the PostgreSQL checkpointer at ${redactUrlPassword(url)}: ${(cause as Error)?.message ?? cause}. ` +
        "Check that the server is running and that MINI_CURSOR_CHECKPOINTER (or --checkpointer) is right; unset it to keep threads in the workspace (SQLite).",
    );
  }
}

/** The embedded default: state.sqlite and JSON files in the workspace's state folder (outside it). */
export function openSqliteMemory(workspace: string): MemoryBackend {
  let saver: ReturnType<typeof createSqliteCheckpointer> | undefined;
  return {
    threads: fileThreadStore(workspace),
    checkpointer: () => (saver ??= createSqliteCheckpointer(workspace)),
    async close() {
      saver?.db.close();
    },
  };
}

async function postgresMemory(url: string, workspace: string): Promise<MemoryBackend> {
  const [{ default: pg }, { CompactPostgresSaver }, { createThreadTables, postgresLoopMemory, postgresThreadStore }] =
    await Promise.all([import("pg"), import("./postgres-saver.js"), import("./postgres-threads.js")]);
  const pool = new pg.Pool({ connectionString: url, max: POSTGRES_POOL_SIZE });
  // An idle connection the server drops must not crash the process; the next query reports it.
  pool.on("error", () => undefined);
  const saver = new CompactPostgresSaver(pool, createThreadTables);
  const ready = () =>
    saver.setup().catch((err: unknown) => {
      throw new MemoryUnavailableError(url, err);
    });
  // Fail before a model request, not at the first save.
  try {
    await ready();
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw err;
  }
  return {
    threads: postgresThreadStore(pool, path.basename(workspace), ready),
    checkpointer: () => saver,
    loopMemory: postgresLoopMemory(pool, ready),
    close: () => pool.end(),
  };
}

export function openMemory(settings: { workspace: string; checkpointer: string }): Promise<MemoryBackend> {
  if (settings.checkpointer === SQLITE_CHECKPOINTER) return Promise.resolve(openSqliteMemory(settings.workspace));
  return postgresMemory(settings.checkpointer, settings.workspace);
}
