import type { BaseMessage } from "@langchain/core/messages";
import { MessagesZodMeta, type Messages } from "@langchain/langgraph";
import { withLangGraph } from "@langchain/langgraph/zod";
// zod's v3 API: its JSON schema export shows `messages` as an array instead of failing on the custom type.
import { z } from "zod/v3";
import { mergeSnapshots, type WorkspaceSnapshots } from "../agent/snapshot-step.js";
import { TODO_STATUSES, type Todo } from "../contracts/tools.js";
import { APPROVAL_MODES, type ApprovalMode } from "../contracts/modes.js";

/**
 * Why the graph ended a run, kept in state so Studio shows it and the stream engine reports it:
 * done (the model answered), loop_guard (the guard node stopped a repeated call), max_steps (the
 * step_limit node), hook_stop (a hook answered `continue: false` around a call: its guard writes
 * it with the call's result, and step_done ends the run). Reset by start_step at every step.
 */
export const GRAPH_STOP_REASONS = ["done", "loop_guard", "max_steps", "hook_stop"] as const;
export type GraphStopReason = (typeof GRAPH_STOP_REASONS)[number];

/** A field each update replaces, `initial` until the first. */
const replaced = <T>(initial: () => T) => ({ reducer: { fn: (_current: T, update: T) => update }, default: initial });

/**
 * The graph's state, every field in one place. Everything else the agent needs (settings,
 * tools) is configuration, not state, so a thread can be resumed under a different model or
 * approval mode. A new field: add it here with its reducer and say who writes it.
 *
 * A zod schema rather than an Annotation: the LangGraph dev server reads a zod state's JSON
 * schema at run time, where for an Annotation it type-checks the graph's sources first (13 to
 * 60 s before Studio can open the graph; BENCHMARKS.md).
 */
export const AgentState = z.object({
  /**
   * The conversation without the system prompt (it is rebuilt each call from the workspace and
   * date): user requests, model turns with their tool calls, and one tool result per call.
   */
  messages: withLangGraph(
    z
      .custom<BaseMessage[]>()
      .describe(
        "The conversation without the system prompt: user requests, model turns with their tool calls, and one tool result per call.",
      ),
    MessagesZodMeta,
  ),
  /**
   * Approvals answered with "always" in this thread, as keys from `alwaysKey` (a tool name, or
   * `execute_command:<rule>`, the exact command prefix shown, e.g. `git log -5`). Appended, never removed.
   */
  alwaysAllow: withLangGraph(
    z
      .array(z.string())
      .describe(
        'Approvals answered with "always" in this thread (a tool name, or execute_command:<command prefix>). Appended, never removed.',
      ),
    {
      reducer: { fn: (current: string[], update: string[]) => [...new Set([...current, ...update])] },
      default: () => [],
    },
  ),
  /**
   * Workspace snapshots (commit ids in the shadow repository in the workspace's state folder)
   * per request, keyed by the id of its user message: the files before its first
   * file-changing step and after its latest. /undo restores a turn from them; resuming an
   * earlier checkpoint brings the files back to that checkpoint's (agent/snapshot-step.ts).
   */
  snapshots: withLangGraph(
    z
      .record(
        z.object({
          before: z.string(),
          after: z.string(),
          startedAt: z.number(),
          paths: z.array(z.string()).optional(),
          unheld: z.array(z.string()).optional(),
          error: z.string().optional(),
        }),
      )
      .describe(
        "Workspace snapshots per request (shadow git commits before and after its file-changing steps), for /undo and time travel.",
      ),
    {
      reducer: { fn: (current: WorkspaceSnapshots, update: WorkspaceSnapshots) => mergeSnapshots(current, update) },
      default: () => ({}),
    },
  ),
  /**
   * The model's todo list (write_todos, tools/todos.ts): the whole list as the model last wrote
   * it. Replaced, never merged, by the tools node when a write_todos call succeeds.
   */
  todos: withLangGraph(
    z
      .array(z.object({ content: z.string(), status: z.enum(TODO_STATUSES) }))
      .describe("The model's todo list (write_todos), as it last wrote it."),
    replaced<Todo[]>(() => []),
  ),
  /**
   * The files the restore_files node brought back to this checkpoint's snapshot in the latest
   * step (time travel: a run resumed from an earlier checkpoint), so Studio shows when and which;
   * empty when the files already matched. Replaced at every step.
   */
  restoredFiles: withLangGraph(
    z
      .array(z.string())
      .describe(
        "Files restore_files brought back to this checkpoint's snapshot in the latest step (time travel); empty when none.",
      ),
    replaced<string[]>(() => []),
  ),
  /**
   * The files this thread changed since that checkpoint which restore_files kept as they are,
   * because another thread or the person changed them since (as undo would not overwrite them).
   * Replaced at every step.
   */
  keptFiles: withLangGraph(
    z
      .array(z.string())
      .describe(
        "Files time travel kept in the latest step: this thread changed them since the checkpoint, but another thread or the person changed them since too.",
      ),
    replaced<string[]>(() => []),
  ),
  /**
   * The approval mode the latest model turn ran in, under Studio (null in the CLI, whose questions
   * only its own terminal answers). approve judges that turn's calls in it, or in the run's mode
   * when that is stricter: a resume (anyone's, over Studio's API) can narrow the mode a question
   * was asked in, never loosen it. Written by agent.
   */
  turnApproval: withLangGraph(
    z
      .enum(APPROVAL_MODES)
      .nullable()
      .describe(
        "The approval mode the latest model turn ran in; its calls are judged in it (or in a stricter run's mode) when a run resumes.",
      ),
    replaced<ApprovalMode | null>(() => null),
  ),
  /** Why the latest run ended (null while it runs). Written by start_step (reset), agent, repeat_stop, step_limit and the hooks guard. */
  stopReason: withLangGraph(
    z
      .enum(GRAPH_STOP_REASONS)
      .nullable()
      .describe("Why the latest run ended: done, loop_guard, max_steps or hook_stop (null while it runs)."),
    replaced<GraphStopReason | null>(() => null),
  ),
});

export type AgentStateType = z.infer<typeof AgentState>;
/** What a node returns: any of the fields, its messages as the messages reducer takes them. */
export type AgentStateUpdate = Partial<Omit<AgentStateType, "messages"> & { messages: Messages }>;
