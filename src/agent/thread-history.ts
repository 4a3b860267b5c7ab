import type { BaseMessage } from "@langchain/core/messages";
import type { WorkspaceSnapshots } from "./snapshot-step.js";

/** What /undo and /rewind need from an engine's memory: read a thread, and cut it back. */
export interface ThreadHistory {
  /** True for the graph: its threads keep a ref to their files' latest snapshot, for time travel. */
  readonly tracksWorkspace: boolean;
  read(threadId: string): Promise<{ messages: BaseMessage[]; snapshots: WorkspaceSnapshots }>;
  /** Drops the request with this message id and everything after it. */
  rewind(threadId: string, requestId: string): Promise<void>;
}

/** The conversation before the request `requestId` (the whole of it when the id is not there). */
export function messagesBefore(messages: readonly BaseMessage[], requestId: string): BaseMessage[] {
  const at = messages.findIndex((m) => m.id === requestId);
  return at < 0 ? [...messages] : messages.slice(0, at);
}
