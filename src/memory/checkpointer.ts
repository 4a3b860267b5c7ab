import path from "node:path";
import { CompactSqliteSaver } from "./compact-saver.js";
import { guardSaver } from "./guard-saver.js";
import { stateDirFor } from "./state-dir.js";
import { STATE_DB_FILE } from "./state-layout.js";
import { missingTableError, STATE_FORMAT_VERSION, stateFormatError, stateProblem } from "./state-errors.js";

/** The tables a state file of this format has (LangGraph's two and our message store). */
export const SQLITE_TABLES = ["checkpoints", "writes", "message_store"] as const;
/** LangGraph's tables: every file mini-cursor ever made has them, whatever its format. */
const LANGGRAPH_TABLES = ["checkpoints", "writes"] as const;
/** `messages`: where a file written before the message store kept its messages. */
const EARLIER_TABLES = ["messages"] as const;

/** The table the file lacks although it holds threads of ours (undefined: none lacking, or a new file). */
function lostTable(tables: ReadonlySet<string>, version: number): string | undefined {
  if (version === STATE_FORMAT_VERSION) return SQLITE_TABLES.find((t) => !tables.has(t));
  // A file from before the format was stored (user_version 0): any of our tables in it means it
  // was ours, and then LangGraph's must be there; only the message store may come later.
  const ours = [...SQLITE_TABLES, ...EARLIER_TABLES].some((t) => tables.has(t));
  return ours ? LANGGRAPH_TABLES.find((t) => !tables.has(t)) : undefined;
}

/**
 * Checked when the file is opened, before any model request: a file from a newer version, or
 * one of ours that lost a table (whatever format it says, 0 included), is refused, never read as
 * an empty history; the format is then written, which also finds a read-only file or folder now
 * rather than at the first save.
 */
function checkFormat(saver: CompactSqliteSaver, file: string): void {
  const version = Number(saver.db.pragma("user_version", { simple: true }));
  if (version > STATE_FORMAT_VERSION) throw stateFormatError({ file }, version);
  const rows = saver.db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as Array<{ name: string }>;
  const missing = lostTable(new Set(rows.map((r) => r.name)), version);
  if (missing) throw missingTableError({ file }, missing);
  saver.prepare();
  saver.db.pragma(`user_version = ${STATE_FORMAT_VERSION}`);
}

/** The SQLite checkpointer at `<state folder>/state.sqlite` (linear in thread length). */
export function createSqliteCheckpointer(workspace: string): CompactSqliteSaver {
  let file = STATE_DB_FILE;
  let saver: CompactSqliteSaver | undefined;
  try {
    file = path.join(stateDirFor(workspace), STATE_DB_FILE);
    saver = CompactSqliteSaver.open(file);
    checkFormat(saver, file);
  } catch (err) {
    saver?.db.close();
    throw stateProblem(err, { file });
  }
  return guardSaver(saver, { file });
}
