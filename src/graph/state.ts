import { Annotation, MessagesAnnotation } from "@langchain/langgraph";
import { mergeSnapshots, type WorkspaceSnapshots } from "../agent/snapshot-step.js";
import type { Todo } from "../tools/todos.js";

/**
 * Why the graph ended a run, kept in state so Studio shows it and the stream engine reports it:
 * done (the model answered), loop_guard (the guard node stopped a repeated call), max_steps (the
 * step_limit node). Reset by the compact node at the start of every step.
 */
export type GraphStopReason = "done" | "loop_guard" | "max_steps";

/**
 * The graph's state, every field in one place. Everything else the agent needs (settings,
 * tools) is configuration, not state, so a thread can be resumed under a different model or
 * approval mode. A new field: add it here with its reducer and say who writes it.
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
   * The model's todo list (write_todos, tools/todos.ts): the whole list as the model last wrote
   * it. Replaced, never merged, by the tools node when a write_todos call succeeds.
   */
  todos: Annotation<Todo[]>({
    reducer: (_current, update) => update,
    default: () => [],
  }),
  /** Why the latest run ended (null while it runs). Written by compact (reset), agent, guard and step_limit. */
  stopReason: Annotation<GraphStopReason | null>({
    reducer: (_current, update) => update,
    default: () => null,
  }),
});

export type AgentStateType = typeof AgentState.State;
export type AgentStateUpdate = typeof AgentState.Update;
