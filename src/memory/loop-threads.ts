import { mkdirSync } from "node:fs";
import { isRefusedFile, MAX_STATE_FILE_BYTES, readRegularTextSync, refusalReason } from "../regular-file.js";
import path from "node:path";
import {
  mapChatMessagesToStoredMessages,
  mapStoredMessagesToChatMessages,
  type BaseMessage,
  type StoredMessage,
} from "@langchain/core/messages";
import type { Todo } from "../contracts/tools.js";
import { stateDirFor, writeFileReplacing } from "./state-dir.js";
import { LOOP_THREADS_DIR, safeFileName } from "./state-layout.js";
import { faultPoint } from "./fault-point.js";
import { StateError, stateProblem } from "./state-errors.js";
import { shellQuote } from "../shell-quote.js";
import type { WorkspaceSnapshots } from "../contracts/snapshots.js";

export interface LoopThread {
  messages: BaseMessage[];
  /** Approvals answered "always" in this thread (keys from `alwaysKey`). */
  alwaysAllow: string[];
  /** Workspace snapshots per request (agent/snapshot-step.ts), for /undo. */
  snapshots?: WorkspaceSnapshots;
  /** The model's todo list (write_todos), as the graph keeps it in its `todos` state field. */
  todos?: Todo[];
}

/** Where the loop keeps its threads: JSON files here, a table in PostgreSQL (memory/postgres-*.ts). */
export interface LoopMemory {
  load(threadId: string): LoopThread | Promise<LoopThread>;
  save(threadId: string, thread: LoopThread): void | Promise<void>;
}

export interface StoredThread {
  messages: StoredMessage[];
  alwaysAllow: string[];
  snapshots?: WorkspaceSnapshots;
  todos?: Todo[];
}

/** The file of a loop thread (the state folder is made ready). */
export function loopThreadFile(workspace: string, threadId: string): string {
  return path.join(stateDirFor(workspace), LOOP_THREADS_DIR, `${safeFileName(threadId)}.json`);
}

/** A thread as JSON (files and database rows hold the same shape). */
export function storeLoopThread(thread: LoopThread): StoredThread {
  return {
    messages: mapChatMessagesToStoredMessages(thread.messages),
    alwaysAllow: thread.alwaysAllow,
    snapshots: thread.snapshots,
    todos: thread.todos ?? [],
  };
}

export function restoreLoopThread(stored: StoredThread): LoopThread {
  return {
    messages: mapStoredMessagesToChatMessages(stored.messages),
    alwaysAllow: stored.alwaysAllow ?? [],
    snapshots: stored.snapshots ?? {},
    todos: stored.todos ?? [],
  };
}

export function loadLoopThread(workspace: string, threadId: string): LoopThread {
  const file = loopThreadFile(workspace, threadId);
  let text: string;
  try {
    text = readRegularTextSync(file, { maxBytes: MAX_STATE_FILE_BYTES });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return { messages: [], alwaysAllow: [] };
    if (isRefusedFile(err))
      throw new StateError(
        `${file} was not read: ${refusalReason(err)}, so thread ${threadId} cannot be read. Move it aside to start this thread over (mv ${shellQuote(file)} ${shellQuote(`${file}.damaged`)}), or continue another thread.`,
        "THREAD_DAMAGED",
      );
    throw stateProblem(err, { file });
  }
  try {
    return restoreLoopThread(JSON.parse(text) as StoredThread);
  } catch (err) {
    // Never an empty history in its place: the next save would overwrite the thread.
    throw new StateError(
      `${file} is damaged (${(err as Error).message}), so thread ${threadId} cannot be read. Move it aside to start this thread over (mv ${shellQuote(file)} ${shellQuote(`${file}.damaged`)}), or continue another thread.`,
      "THREAD_DAMAGED",
    );
  }
}

/** Written to a temporary file and renamed, so a crash never leaves half a thread. */
export function saveLoopThread(workspace: string, threadId: string, thread: LoopThread): void {
  let file = `${LOOP_THREADS_DIR}/${threadId}.json`;
  try {
    file = loopThreadFile(workspace, threadId);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileReplacing(file, JSON.stringify(storeLoopThread(thread)), () => faultPoint("thread-save"));
  } catch (err) {
    throw stateProblem(err, { file });
  }
}
