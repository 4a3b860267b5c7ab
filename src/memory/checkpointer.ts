import path from "node:path";
import { MemorySaver, type BaseCheckpointSaver } from "@langchain/langgraph";
import { CompactSqliteSaver } from "./compact-saver.js";
import { guardSaver } from "./guard-saver.js";
import { ensureStateDir } from "./state-dir.js";
import { StateFileError } from "./state-file-error.js";
import { missingTableError, STATE_FORMAT_VERSION, stateFormatError, stateProblem } from "./state-errors.js";

export const STATE_DB_FILE = "state.sqlite";
export { StateFileError };

/** The tables a state file of this format has (LangGraph's two and our message store). */
export const SQLITE_TABLES = ["checkpoints", "writes", "message_store"] as const;

/**
 * Checked when the file is opened, before any model request: a file from a newer version, or
 * one of ours that lost a table, is refused (not silently read as empty); the format is then
 * written, which also finds a read-only file or folder now rather than at the first save.
 */
function checkFormat(saver: CompactSqliteSaver, file: string): void {
  const version = Number(saver.db.pragma("user_version", { simple: true }));
  if (version > STATE_FORMAT_VERSION) throw stateFormatError({ file }, version);
  const rows = saver.db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as Array<{ name: string }>;
  const tables = new Set(rows.map((r) => r.name));
  if (version === STATE_FORMAT_VERSION) {
    const missing = SQLITE_TABLES.find((t) => !tables.has(t));
    if (missing) throw missingTableError({ file }, missing);
  }
  saver.prepare();
  saver.db.pragma(`user_version = ${STATE_FORMAT_VERSION}`);
}

/** The SQLite checkpointer at `<state folder>/state.sqlite` (linear in thread length). */
export function createSqliteCheckpointer(workspace: string): CompactSqliteSaver {
  let file = STATE_DB_FILE;
  let saver: CompactSqliteSaver | undefined;
  try {
    file = path.join(ensureStateDir(workspace), STATE_DB_FILE);
    saver = CompactSqliteSaver.open(file);
    checkFormat(saver, file);
  } catch (err) {
    saver?.db.close();
    throw stateProblem(err, { file });
  }
  return guardSaver(saver, { file });
}

/** In-memory checkpointer for tests and throwaway runs. */
export function createMemoryCheckpointer(): BaseCheckpointSaver {
  return new MemorySaver();
}
