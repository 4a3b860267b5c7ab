import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";
import {
  mapChatMessagesToStoredMessages,
  mapStoredMessagesToChatMessages,
  type BaseMessage,
  type StoredMessage,
} from "@langchain/core/messages";
import type { Todo } from "../tools/todos.js";
import { ensureStateDir } from "../memory/state-dir.js";
import type { WorkspaceSnapshots } from "../agent/snapshot-step.js";

/** The loop's memory: one JSON file per thread, rewritten after every step. */
export const LOOP_THREADS_DIR = "loop-threads";

export interface LoopThread {
  messages: BaseMessage[];
  /** Approvals answered "always" in this thread (keys from `alwaysKey`). */
  alwaysAllow: string[];
  /** Workspace snapshots per request (agent/snapshot-step.ts), for /undo. */
  snapshots?: WorkspaceSnapshots;
  /** The model's todo list (write_todos), as the graph keeps it in its `todos` state field. */
  todos?: Todo[];
}

interface StoredThread {
  messages: StoredMessage[];
  alwaysAllow: string[];
  snapshots?: WorkspaceSnapshots;
  todos?: Todo[];
}

function threadFile(workspace: string, threadId: string): string {
  // Thread ids come from users; keep them to one safe file name.
  const safe = threadId.replace(/[^A-Za-z0-9._-]/g, "_");
  return path.join(ensureStateDir(workspace), LOOP_THREADS_DIR, `${safe}.json`);
}

export function loadLoopThread(workspace: string, threadId: string): LoopThread {
  try {
    const stored = JSON.parse(readFileSync(threadFile(workspace, threadId), "utf8")) as StoredThread;
    return {
      messages: mapStoredMessagesToChatMessages(stored.messages),
      alwaysAllow: stored.alwaysAllow ?? [],
      snapshots: stored.snapshots ?? {},
      todos: stored.todos ?? [],
    };
  } catch {
    return { messages: [], alwaysAllow: [] };
  }
}

/** Written to a temporary file and renamed, so a crash never leaves half a thread. */
export function saveLoopThread(workspace: string, threadId: string, thread: LoopThread): void {
  const file = threadFile(workspace, threadId);
  mkdirSync(path.dirname(file), { recursive: true });
  const data: StoredThread = {
    messages: mapChatMessagesToStoredMessages(thread.messages),
    alwaysAllow: thread.alwaysAllow,
    snapshots: thread.snapshots,
    todos: thread.todos ?? [],
  };
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(data));
  renameSync(tmp, file);
}
