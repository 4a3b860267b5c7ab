import { messagesBefore, type ThreadHistory } from "../agent/thread-history.js";
import type { LoopMemory } from "../memory/loop-threads.js";

/** /undo and /rewind on the loop's own thread store: the saved conversation is cut back. */
export function loopThreadHistory(memory: LoopMemory): ThreadHistory {
  return {
    tracksWorkspace: false,
    async read(threadId) {
      const thread = await memory.load(threadId);
      return { messages: thread.messages, snapshots: thread.snapshots ?? {} };
    },
    async rewind(threadId, requestId) {
      const thread = await memory.load(threadId);
      await memory.save(threadId, { ...thread, messages: messagesBefore(thread.messages, requestId) });
    },
  };
}
