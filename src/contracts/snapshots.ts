/**
 * What a thread keeps of its files (agent/snapshot-step.ts takes the snapshots; the graph's state
 * and the loop's thread file, memory/loop-threads.ts, store them): a contract between the engines
 * and the memory below them, so it lives here, importing nothing.
 */

/** The files around one request: `before` its first file-changing step, `after` its latest. */
export interface TurnSnapshot {
  before: string;
  after: string;
  /** When the request's first file-changing step started (ms since epoch): later background processes belong to it. */
  startedAt: number;
  /**
   * The paths this thread's steps changed (workspace-relative, `/`-separated): what changed
   * across each step, narrowed to the paths a file tool named when every call of the step was
   * one. A file the step changed, deleted or made that is over the snapshot limit, so no snapshot
   * holds it, is listed as UNRECORDED + its path: undo names it instead of reporting success.
   * Absent in threads of earlier versions: undo then takes the whole before/after diff.
   */
  paths?: string[];
  /**
   * What a command deleted by name that no snapshot held (ignored by git, an empty folder): undo
   * names those still missing, as it names a file over the limit, instead of reporting success.
   */
  unheld?: string[];
  /** Set when a step's files could not be recorded (why): undo then says so instead of restoring part. */
  error?: string;
}

/** Per request (the id of its user message). */
export type WorkspaceSnapshots = Record<string, TurnSnapshot>;
