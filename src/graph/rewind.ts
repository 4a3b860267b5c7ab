import { RemoveMessage, type BaseMessage } from "@langchain/core/messages";
import { REMOVE_ALL_MESSAGES } from "@langchain/langgraph";
import type { WorkspaceSnapshots } from "../agent/snapshot-step.js";
import { messagesBefore, type ThreadHistory } from "../agent/thread-history.js";
import type { AgentGraph } from "./graph.js";

/**
 * /undo and /rewind on the graph's checkpoints: the thread is cut back with `updateState`, which
 * writes a new checkpoint whose conversation ends before the undone request (the older
 * checkpoints stay, so Studio still shows the undone turns in the thread's history).
 */
export function graphThreadHistory(graph: AgentGraph): ThreadHistory {
  const read = async (threadId: string) => {
    const state = await graph.getState({ configurable: { thread_id: threadId } });
    const values = (state.values ?? {}) as { messages?: BaseMessage[]; snapshots?: WorkspaceSnapshots };
    return { messages: values.messages ?? [], snapshots: values.snapshots ?? {} };
  };
  return {
    tracksWorkspace: true,
    read,
    async rewind(threadId, requestId) {
      const { messages } = await read(threadId);
      const kept = messagesBefore(messages, requestId);
      // As the agent node: the conversation then ends with a finished turn, so nothing is left to run.
      await graph.updateState(
        { configurable: { thread_id: threadId } },
        { messages: [new RemoveMessage({ id: REMOVE_ALL_MESSAGES }), ...kept] },
        "agent",
      );
    },
  };
}
