/**
 * The AgentEvent stream: both engines emit it, and the terminal trace, the JSON Lines output,
 * the comparison and the benchmark read nothing else.
 */

export interface TokenUsage {
  input: number;
  output: number;
  /** True when the provider sent no usage and we estimated from characters. */
  estimated: boolean;
  /** US dollars, for models with a known price (see models/cost.ts); absent otherwise. */
  cost?: number;
}

/**
 * approve: this call only. always: this call, and later calls with the same command prefix for
 * the rest of this session (kept in the thread's state). always-project: as always, and the
 * allow rules shown in the request are saved for the project (the terminal front end saves them).
 * edit: this call with the person's arguments (`args`) instead of the model's; the edited call
 * is checked again like any other (policy/review.ts) and may be asked about again.
 */
export type ApprovalDecision = "approve" | "deny" | "always" | "always-project" | "edit";

/** Which sub-agent asks: the `task` call that started it, its agent type and the description the model gave the task. */
export interface SubagentAsker {
  callId: string;
  type: string;
  description: string;
}

/** What an approval question carries: the tool, its arguments and why it asks. */
export interface ApprovalRequest {
  toolCallId: string;
  tool: string;
  args: Record<string, unknown>;
  reason: string;
  /** What the call would change (a unified diff for edit_file and write_file), for the person deciding. */
  preview?: string;
  /** Under Studio: how to answer so the approval counts (the resume must carry the server's code). */
  approveWith?: string;
  /** True when the call asks every time (dangerous, unreadable, an ask rule): no "always" is offered. */
  asksEveryTime?: boolean;
  /** For commands: the exact allow rules an "always" answer covers (and "always-project" saves). */
  alwaysRules?: string[];
  /** The call shown is the person's edit of the model's call, asked about again (it asks in every mode). */
  edited?: true;
  /** Why the person's last edit was not used (not JSON, does not fit the tool): asked again. */
  editError?: string;
  /** That edit's arguments, so an editor can start from them rather than from the call. */
  editDraft?: Record<string, unknown>;
  /**
   * A sub-agent's call: which one asks, as the trace labels it (`type: description`, the
   * description the model gave). Set by the engine that runs it (agent/subagents.ts `askedAs`).
   */
  askedBy?: string;
  /** A sub-agent's call: the task call that started it (its id), its agent type and the task's description. */
  subagent?: SubagentAsker;
}

export interface ApprovalResponse {
  decision: ApprovalDecision;
  feedback?: string;
  /** Nobody could be asked (no terminal): the call is not run, and the model is told what would allow it. */
  unattended?: boolean;
  /** With decision "edit": the call's arguments as the person wrote them (all of them, not a patch). */
  args?: Record<string, unknown>;
}

import type { Todo } from "./tools.js";

/**
 * not_run: the run ended without running anything it asked for (every call declined or refused);
 * hook_stop: a hook of the person's answered `continue: false` around a call (Claude Code's stop).
 */
export type StopReason = "done" | "max_steps" | "interrupted" | "error" | "loop_guard" | "not_run" | "hook_stop";

/**
 * Every event, with `subagent` set on those a sub-agent emitted (the `task` tool): the id of the
 * task call that started it, so the trace and `--json` readers can tell parallel sub-agents apart.
 */
export type AgentEvent = AgentEventBody & { subagent?: string };

export type AgentEventBody =
  | {
      type: "run_start";
      engine: string;
      threadId: string;
      model: string;
      provider: string;
      workspace: string;
      task: string;
    }
  | { type: "step"; step: number }
  | { type: "token"; step: number; text: string }
  | { type: "tool_call"; step: number; id: string; name: string; args: Record<string, unknown> }
  | { type: "tool_output"; id: string; stream: "stdout" | "stderr"; text: string }
  | {
      type: "tool_result";
      step: number;
      id: string;
      name: string;
      status: "success" | "error";
      content: string;
      durationMs: number;
      /** The unified diff of a file edit, for the trace (the model gets `content` only). */
      diff?: string;
      /** The call was not run: declined, refused by a rule, or nobody could be asked. */
      notRun?: boolean;
      /** A command's exit code when it failed (null: it could not start). */
      exitCode?: number | null;
      /** The person edited the call before it ran: the arguments that ran (the tool_call event has the model's). */
      editedArgs?: Record<string, unknown>;
    }
  | { type: "approval"; request: ApprovalRequest; response: ApprovalResponse }
  /** A hook the person configured ran before (`before`) or after (`after`) a call, or on another event (Claude Code's name): what it came to (guard/hooks.ts). */
  | {
      type: "hook";
      id: string;
      tool: string;
      event:
        | "before"
        | "after"
        | "UserPromptSubmit"
        | "Stop"
        | "SubagentStop"
        | "SessionStart"
        | "SessionEnd"
        | "PreCompact"
        | "Notification";
      /** The hook's name, else its command. */
      hook: string;
      outcome: "passed" | "blocked" | "failed" | "timed_out" | "did_not_start" | "cancelled";
      exitCode?: number | null;
      durationMs: number;
      /** Its stderr (or why it did not start), cut. */
      message?: string;
    }
  /** The model's todo list changed (write_todos): the whole list as it now stands. */
  | { type: "todos"; step: number; todos: Todo[] }
  | { type: "usage"; step: number; usage: TokenUsage }
  | {
      /** Older turns were summarised to stay within the context budget. */
      type: "compaction";
      step: number;
      tokensBefore: number;
      tokensAfter: number;
      /** Messages the summary replaced. */
      summarised: number;
    }
  | {
      /** The model repeated one call: a note to it at the third time, the run stopped at the fifth. */
      type: "loop_guard";
      step: number;
      action: "note" | "stop";
      tool: string;
      repeats: number;
      message: string;
    }
  /** The model's thinking (reasoning_content, <think> blocks): for the trace, never the answer. */
  | { type: "thinking"; step: number; text: string }
  /** Something the provider layer did that the user should know (a parameter dropped, a call recovered from text). */
  | {
      type: "notice";
      step: number;
      message: string;
      /** What the run is waiting for right now (a slow provider, a retry): spinner text on a terminal. */
      wait?: true;
    }
  | { type: "final"; text: string }
  | { type: "error"; message: string; stack?: string }
  | {
      type: "run_end";
      reason: StopReason;
      steps: number;
      toolCalls: number;
      usage: TokenUsage;
      durationMs: number;
    };

export type EventSink = (event: AgentEvent) => void;

/** Asks whoever runs the agent (a person, a policy) about one tool call. */
export type Approver = (request: ApprovalRequest) => Promise<ApprovalResponse>;

/**
 * An event written to LangGraph's custom stream (`config.writer`) by a guard (guard/): the graph
 * engine passes it on as it is, and the loop, which hands its calls a writer of its own, too.
 */
export interface EventSignal {
  kind: "event";
  event: AgentEvent;
}
