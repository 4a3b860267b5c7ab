import { existsSync } from "node:fs";
import path from "node:path";
import { SQLITE_CHECKPOINTER } from "../contracts/run-choices.js";
import type { MemoryBackend } from "./backend.js";
import { STATE_DB_FILE } from "./state-layout.js";
import { loopThreadFile } from "./loop-threads.js";
import { stateDirPath } from "./state-dir.js";
import { lostHistoryError } from "./state-errors.js";
import { THREADS_FILE, type ThreadInfo } from "./threads.js";

/**
 * A thread the index says ran steps must have a saved history: a graph thread a checkpoint, a
 * loop thread its file. A state file replaced, emptied or moved aside while threads.json (or
 * the database's index) still lists the thread is said at open, never continued as an empty
 * conversation under the old id. (A thread whose run was killed before its first step was
 * recorded has no steps in the index, and resumes as it is; both engines save the request before
 * their first step.)
 */
export async function checkThreadHistory(
  memory: MemoryBackend,
  thread: ThreadInfo | undefined,
  settings: { workspace: string; checkpointer: string },
): Promise<void> {
  if (!thread || !(thread.steps > 0)) return;
  const sqlite = settings.checkpointer === SQLITE_CHECKPOINTER;
  const index = sqlite ? THREADS_FILE : "the thread index";
  if (thread.engine === "graph") {
    const tuple = await memory.checkpointer().getTuple({ configurable: { thread_id: thread.id, checkpoint_ns: "" } });
    if (tuple) return;
    const where = sqlite
      ? { file: path.join(stateDirPath(settings.workspace), STATE_DB_FILE) }
      : { url: settings.checkpointer };
    throw lostHistoryError(where, thread, index);
  }
  // A loop thread's file is its history: gone, the history is lost; there but empty, it was
  // undone to its start (app/undo.ts), which is no loss. (In PostgreSQL an undone thread's row
  // and a deleted one read the same, so only the file is checked.)
  if (thread.engine === "loop" && sqlite) {
    const file = loopThreadFile(settings.workspace, thread.id);
    if (!existsSync(file)) throw lostHistoryError({ file }, thread, index);
  }
}
