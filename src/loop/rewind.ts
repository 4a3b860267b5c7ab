import { messagesBefore, type ThreadHistory } from "../agent/thread-history.js";
import type { LoopThread } from "./memory.js";

/** /undo and /rewind on the loop's own thread store: the saved conversation is cut back. */
export function loopThreadHistory(memory: { load(threadId: string): LoopThread; save(threadId: string, thread: LoopThread): void }): ThreadHistory {
  return {
    tracksWorkspace: false,
    async read(threadId) {
      const thread = memory.load(threadId);
      return { messages: thread.messages, snapshots: thread.snapshots ?? {} };
    },
    async rewind(threadId, requestId) {
      const thread = memory.load(threadId);
      memory.save(threadId, { ...thread, messages: messagesBefore(thread.messages, requestId) });
    },
  };
}
