import { Annotation, MessagesAnnotation } from "@langchain/langgraph";
import { mergeSnapshots, type WorkspaceSnapshots } from "../agent/snapshot-step.js";
import type { Todo } from "../agent/todos.js";

/**
 * The graph's state. Everything else the agent needs (settings, tools) is configuration,
 * not state, so a thread can be resumed under a different model or approval mode.
 */
export const AgentState = Annotation.Root({
  /**
   * The conversation without the system prompt (it is rebuilt each call from the workspace and
   * date): user requests, model turns with their tool calls, and one tool result per call.
   */
  ...MessagesAnnotation.spec,
  /**
   * Approvals answered with "always" in this thread, as keys from `alwaysKey` (a tool name, or
   * `execute_command:<rule>`, the exact command prefix shown, e.g. `git log -5`). Appended, never removed.
   */
  alwaysAllow: Annotation<string[]>({
    reducer: (current, update) => [...new Set([...current, ...update])],
    default: () => [],
  }),
  /**
   * Workspace snapshots (commit ids in the shadow repository under `.mini-cursor/snapshots`)
   * per request, keyed by the id of its user message: the files before its first
   * file-changing step and after its latest. /undo restores a turn from them; resuming an
   * earlier checkpoint brings the files back to that checkpoint's (agent/snapshot-step.ts).
   */
  snapshots: Annotation<WorkspaceSnapshots>({
    reducer: mergeSnapshots,
    default: () => ({}),
  }),
  /**
   * The model's todo list (write_todos, agent/todos.ts): the whole list as the model last wrote
   * it. Replaced, never merged, by the tools node when a write_todos call succeeds.
   */
  todos: Annotation<Todo[]>({
    reducer: (_current, update) => update,
    default: () => [],
  }),
});

export type AgentStateType = typeof AgentState.State;
export type AgentStateUpdate = typeof AgentState.Update;
