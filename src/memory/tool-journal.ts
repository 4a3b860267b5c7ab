import { closeSync, fsyncSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } from "node:fs";
import path from "node:path";
import { ensureStateSubdir } from "./state-dir.js";

/**
 * The write-ahead journal of tool calls. A step's calls are recorded, durably, before they
 * run, and their results as soon as they end, because the step's checkpoint is written only
 * after all of them. A process killed in between leaves calls with no result in the thread
 * but with an entry here, so the next run can tell the model the truth: which calls started
 * (their effects may be on disk) and which never did. Each thread has its own journal, holding
 * only its latest step (every earlier step is checkpointed by the time a new one starts).
 */

export interface JournalResult {
  content: string;
  status: "success" | "error";
}

export interface JournalEntry {
  callId: string;
  name: string;
  /** The request (its user message id) whose step made the call. */
  request?: string;
  /** The workspace snapshot taken before the step's tools ran (none when snapshots are off). */
  before?: string;
  /** ISO time the call was recorded as started. */
  startedAt: string;
  /** The person edited the call at the approval question: the arguments it ran with (the thread keeps the model's). */
  editedArgs?: Record<string, unknown>;
  /** The call's result, once it ended (before the step's checkpoint was written). */
  result?: JournalResult;
}

export interface ToolJournal {
  /** The step's calls are about to run: replaces the thread's journal, on disk before it returns. */
  start(threadId: string, entries: JournalEntry[]): Promise<void>;
  /** The calls ended with these results (by call id). */
  end(threadId: string, results: ReadonlyMap<string, JournalResult>): Promise<void>;
  read(threadId: string): Promise<JournalEntry[]>;
  /** The step is in the thread (or was closed on resume): nothing left to recover. */
  clear(threadId: string): Promise<void>;
}

/** Subfolder of the state folder with one journal file per thread that has a step in flight. */
export const JOURNAL_SUBDIR = "journal";

export function withResults(entries: JournalEntry[], results: ReadonlyMap<string, JournalResult>): JournalEntry[] {
  return entries.map((e) => {
    const result = results.get(e.callId);
    return result ? { ...e, result } : e;
  });
}

/** Written to a temporary file, flushed, renamed and the folder flushed: there after a power cut too. */
function writeDurably(file: string, text: string): void {
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    const fd = openSync(tmp, "w", 0o600);
    try {
      writeSync(fd, text);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, file);
  } catch (err) {
    try {
      unlinkSync(tmp);
    } catch {
      // never made, or already renamed
    }
    throw err;
  }
  const dir = openSync(path.dirname(file), "r");
  try {
    fsyncSync(dir);
  } finally {
    closeSync(dir);
  }
}

export function fileToolJournal(workspace: string): ToolJournal {
  const fileOf = (threadId: string) =>
    path.join(ensureStateSubdir(workspace, JOURNAL_SUBDIR), `${threadId.replace(/[^A-Za-z0-9._-]/g, "_")}.json`);
  const read = (threadId: string): JournalEntry[] => {
    try {
      const data = JSON.parse(readFileSync(fileOf(threadId), "utf8")) as unknown;
      return Array.isArray(data) ? (data as JournalEntry[]) : [];
    } catch {
      return [];
    }
  };
  return {
    async start(threadId, entries) {
      writeDurably(fileOf(threadId), JSON.stringify(entries));
    },
    async end(threadId, results) {
      writeDurably(fileOf(threadId), JSON.stringify(withResults(read(threadId), results)));
    },
    read: async (threadId) => read(threadId),
    async clear(threadId) {
      try {
        unlinkSync(fileOf(threadId));
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
      }
    },
  };
}
