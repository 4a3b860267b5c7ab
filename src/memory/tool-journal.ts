import { renameSync, unlinkSync, writeFileSync } from "node:fs";
import { MAX_STATE_FILE_BYTES, readRegularTextSync } from "../regular-file.js";
import { open, rename, unlink } from "node:fs/promises";
import path from "node:path";
import { ensureStateSubdir } from "./state-dir.js";
import { stateProblem } from "./state-errors.js";
import { safeFileName } from "./state-layout.js";

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
  /** A `task` call whose sub-agent's tools change no file: nothing on disk to look for. */
  readOnly?: boolean;
  /** A `task` call's LangGraph task (its checkpoint namespace): the same task resumed has the same one. */
  ns?: string;
  /** The call's result, once it ended (before the step's checkpoint was written). */
  result?: JournalResult;
}

/**
 * How a journal write reaches the disk. Durable (the default) survives a power cut: the file and
 * its folder are flushed. Not durable, it is still written and renamed into place, so a killed
 * process leaves it for the next run (the page cache outlives the process); only a power cut may
 * lose it. That is enough for a turn whose calls all only look (kind read): they leave nothing on
 * disk to tell about, and their step skips the two flushes of each write (BENCHMARKS.md).
 */
export interface JournalWrite {
  durable?: boolean;
}

export interface ToolJournal {
  /** The step's calls are about to run: replaces the thread's journal, on disk before it returns. */
  start(threadId: string, entries: JournalEntry[], options?: JournalWrite): Promise<void>;
  /** The calls ended with these results (by call id), on disk when it resolves; one write for them all. */
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

/**
 * Written to a temporary file, flushed, renamed and the folder flushed: there after a power cut too.
 * Asynchronous, so the fsyncs do not hold up the event loop: the other calls of a step go on
 * (a command's output is read, the next one starts) and their ends gather for the next write.
 * Not durable, there is no flush to wait for: the small file is written and renamed at once,
 * which costs less than the four trips through the thread pool an asynchronous write takes. The
 * old file is removed first: renaming over an existing file makes ext4 start writing the new
 * one's data to disk then and there (its `auto_da_alloc` safeguard), a few milliseconds a write
 * on a busy disk, the very flush this write does without. A process killed between the two
 * leaves no journal: the next run then tells the model the turn's calls were not run, which of
 * calls that only look is true of their effects.
 */
async function writeDurably(file: string, text: string, durable = true): Promise<void> {
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    if (!durable) {
      writeFileSync(tmp, text, { mode: 0o600 });
      try {
        unlinkSync(file);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
      }
      renameSync(tmp, file);
      return;
    }
    const handle = await open(tmp, "w", 0o600);
    try {
      await handle.writeFile(text);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(tmp, file);
  } catch (err) {
    await unlink(tmp).catch(() => undefined); // never made, or already renamed
    throw err;
  }
  const dir = await open(path.dirname(file), "r");
  try {
    await dir.sync();
  } finally {
    await dir.close();
  }
}

export function fileToolJournal(workspace: string): ToolJournal {
  return toolJournalIn(() => ensureStateSubdir(workspace, JOURNAL_SUBDIR));
}

/**
 * The file journal in the folder `folder()` names (made ready by it on each use): the workspace's
 * journal folder, or a throwaway one for the first step's rehearsal (agent/rehearsal.ts).
 */
export function toolJournalIn(folder: () => string): ToolJournal {
  const fileOf = (threadId: string) => path.join(folder(), `${safeFileName(threadId)}.json`);
  const read = (threadId: string): JournalEntry[] => {
    try {
      const data = JSON.parse(readRegularTextSync(fileOf(threadId), { maxBytes: MAX_STATE_FILE_BYTES })) as unknown;
      return Array.isArray(data) ? (data as JournalEntry[]) : [];
    } catch {
      return [];
    }
  };
  // One change at a time, in the order asked: a write still in flight (a straggler of a cancelled
  // step) never meets the next one's temporary file or outlives a clear.
  let last: Promise<unknown> = Promise.resolve();
  const inTurn = <T>(change: () => T | Promise<T>): Promise<T> => {
    const done = last.then(change);
    last = done.catch(() => undefined);
    return done;
  };
  // A failure names the journal file (a full disk, say), as every state error does: the write of
  // a file's bytes carries no path, and unnamed it would read as the model provider's.
  const write = async (threadId: string, text: () => string, durable?: boolean) => {
    const file = fileOf(threadId);
    try {
      await writeDurably(file, text(), durable);
    } catch (err) {
      throw stateProblem(err, { file });
    }
  };
  return {
    start: (threadId, entries, options) =>
      inTurn(() => write(threadId, () => JSON.stringify(entries), options?.durable)),
    end: (threadId, results) =>
      inTurn(() => write(threadId, () => JSON.stringify(withResults(read(threadId), results)))),
    read: async (threadId) => read(threadId),
    clear: (threadId) =>
      inTurn(() => {
        try {
          unlinkSync(fileOf(threadId));
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw stateProblem(err, { file: fileOf(threadId) });
        }
      }),
  };
}
