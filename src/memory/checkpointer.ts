import path from "node:path";
import { MemorySaver, type BaseCheckpointSaver } from "@langchain/langgraph";
import { CompactSqliteSaver } from "./compact-saver.js";
import { ensureStateDir } from "./state-dir.js";

export const STATE_DB_FILE = "state.sqlite";

/** The SQLite checkpointer at `<workspace>/.mini-cursor/state.sqlite` (linear in thread length). */
export function createSqliteCheckpointer(workspace: string): CompactSqliteSaver {
  const file = path.join(ensureStateDir(workspace), STATE_DB_FILE);
  return CompactSqliteSaver.open(file);
}

/** In-memory checkpointer for tests and throwaway runs. */
export function createMemoryCheckpointer(): BaseCheckpointSaver {
  return new MemorySaver();
}
