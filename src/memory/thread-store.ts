import path from "node:path";
import { stateDirPath } from "./state-dir.js";
import { guardState } from "./state-errors.js";
import { listThreads, recordRun, registerThread, THREADS_FILE, type ThreadInfo } from "./threads.js";

/**
 * The thread index as the CLI uses it, wherever it lives: threads.json in the workspace (the
 * embedded default) or a table in PostgreSQL shared by every machine using that database.
 */
export interface ThreadStore {
  /** Saved threads, most recently updated first. */
  list(): Promise<ThreadInfo[]>;
  /**
   * Puts a thread in the index before anything of it is shown or run (no run counted), so the
   * id the banner prints resumes even when the process is killed in its first run.
   */
  begin(id: string, engine: string, request: string): Promise<void>;
  /** Records a run on a thread (creating the entry on its first run). */
  record(id: string, engine: string, request: string, steps: number): Promise<ThreadInfo>;
}

export function fileThreadStore(workspace: string): ThreadStore {
  // Errors name the file they met (fs errors of an open carry its path; those of a write do not).
  const where = { file: path.join(stateDirPath(workspace), THREADS_FILE) };
  return {
    list: () => guardState(where, () => listThreads(workspace)),
    begin: (id, engine, request) => guardState(where, () => registerThread(workspace, id, engine, request)),
    record: (id, engine, request, steps) => guardState(where, () => recordRun(workspace, id, engine, request, steps)),
  };
}

export async function findThreadIn(store: ThreadStore, id: string): Promise<ThreadInfo | undefined> {
  return (await store.list()).find((t) => t.id === id);
}

export async function latestThreadIn(store: ThreadStore, engine?: string): Promise<ThreadInfo | undefined> {
  return (await store.list()).find((t) => !engine || t.engine === engine);
}
