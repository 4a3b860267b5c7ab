import { listThreads, recordRun, type ThreadInfo } from "./threads.js";

/**
 * The thread index as the CLI uses it, wherever it lives: threads.json in the workspace (the
 * embedded default) or a table in PostgreSQL shared by every machine using that database.
 */
export interface ThreadStore {
  /** Saved threads, most recently updated first. */
  list(): Promise<ThreadInfo[]>;
  /** Records a run on a thread (creating the entry on its first run). */
  record(id: string, engine: string, request: string, steps: number): Promise<ThreadInfo>;
}

export function fileThreadStore(workspace: string): ThreadStore {
  return {
    list: async () => listThreads(workspace),
    record: async (id, engine, request, steps) => recordRun(workspace, id, engine, request, steps),
  };
}

export async function findThreadIn(store: ThreadStore, id: string): Promise<ThreadInfo | undefined> {
  return (await store.list()).find((t) => t.id === id);
}

export async function latestThreadIn(store: ThreadStore, engine?: string): Promise<ThreadInfo | undefined> {
  return (await store.list()).find((t) => !engine || t.engine === engine);
}
