import path from "node:path";
import { MemorySaver, type BaseCheckpointSaver } from "@langchain/langgraph";
import { CompactSqliteSaver } from "./compact-saver.js";
import { ensureStateDir } from "./state-dir.js";
import { StateFileError } from "./state-file-error.js";

export const STATE_DB_FILE = "state.sqlite";
export { StateFileError };

/** The SQLite checkpointer at `<state folder>/state.sqlite` (memory/state-dir.ts; linear in thread length). */
export function createSqliteCheckpointer(workspace: string): CompactSqliteSaver {
  const file = path.join(ensureStateDir(workspace), STATE_DB_FILE);
  const saver = CompactSqliteSaver.open(file);
  // SQLite reads the file only at the first query: ask now, so a damaged file stops the run
  // before a model request, and before the thread index records a run that never happened.
  try {
    saver.db.prepare("SELECT count(*) FROM sqlite_master").get();
  } catch (err) {
    saver.db.close();
    throw new StateFileError(file, (err as Error).message);
  }
  return saver;
}

/** In-memory checkpointer for tests and throwaway runs. */
export function createMemoryCheckpointer(): BaseCheckpointSaver {
  return new MemorySaver();
}
