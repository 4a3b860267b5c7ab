import path from "node:path";
import { MemorySaver, type BaseCheckpointSaver } from "@langchain/langgraph";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { ensureStateDir } from "./state-dir.js";

export const STATE_DB_FILE = "state.sqlite";

/** The SQLite checkpointer at `<workspace>/.mini-cursor/state.sqlite`. */
export function createSqliteCheckpointer(workspace: string): SqliteSaver {
  const file = path.join(ensureStateDir(workspace), STATE_DB_FILE);
  return SqliteSaver.fromConnString(file);
}

/** In-memory checkpointer for tests and throwaway runs. */
export function createMemoryCheckpointer(): BaseCheckpointSaver {
  return new MemorySaver();
}
