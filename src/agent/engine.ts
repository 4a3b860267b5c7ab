import type { CallbackManager } from "@langchain/core/callbacks/manager";
import type { AgentEvent, Approver, EventSink, StopReason, TokenUsage } from "../contracts/events.js";
import type { ApprovalMode } from "../contracts/modes.js";

/** One task on one thread, as both engines take it. */
export interface RunRequest {
  task: string;
  threadId: string;
  approver: Approver;
  emit: EventSink;
  signal?: AbortSignal;
  approval?: ApprovalMode;
  maxSteps?: number;
  /** mini-cursor's note sent after the task in the same request (plan mode's rules); run_start shows the task alone. */
  note?: string;
  /** The traced turn's callbacks (LangSmith): the run's model and tool calls nest under them. */
  callbacks?: CallbackManager;
  /** A sub-agent's conversation within the thread (its task call's id): what it reads is its own. */
  conversation?: string;
}

/** Facts about the run for the run_start event. */
export interface RunMeta {
  engine: string;
  model: string;
  provider: string;
  workspace: string;
}

export interface RunSummary {
  reason: StopReason;
  steps: number;
  toolCalls: number;
  usage: TokenUsage;
  durationMs: number;
  finalText?: string;
  error?: string;
}

export interface Engine {
  readonly name: "graph" | "loop";
  run(request: RunRequest): Promise<RunSummary>;
}

/** Counts what a run did from its events, so every engine reports the same way. */
export function createRunTally(meta: RunMeta, request: RunRequest) {
  const started = Date.now();
  const summary: RunSummary = {
    reason: "done",
    steps: 0,
    toolCalls: 0,
    usage: { input: 0, output: 0, estimated: false },
    durationMs: 0,
  };
  const ran = new Set<string>();
  const notRun = new Set<string>();
  const addTokens = (usage: TokenUsage) => {
    summary.usage.input += usage.input;
    summary.usage.output += usage.output;
    summary.usage.estimated ||= usage.estimated;
    if (usage.cost !== undefined) summary.usage.cost = (summary.usage.cost ?? 0) + usage.cost;
  };
  const emit = (event: AgentEvent) => {
    if (event.type === "usage") addTokens(event.usage);
    // A sub-agent's events count only for their tokens: its steps, calls and answer are its own,
    // and its task call is the parent's call (ran or not).
    if (!event.subagent) {
      if (event.type === "step") summary.steps = Math.max(summary.steps, event.step);
      if (event.type === "tool_call") summary.toolCalls++;
      if (event.type === "tool_result") (event.notRun ? notRun : ran).add(event.id);
      if (event.type === "final") summary.finalText = event.text;
      if (event.type === "error") summary.error = event.message;
    }
    request.emit(event);
  };
  emit({ type: "run_start", ...meta, threadId: request.threadId, task: request.task });
  return {
    emit,
    summary,
    finish(stop: StopReason): RunSummary {
      // A run whose every requested action was declined did not do the task: not a success.
      // In plan mode refusals are the mode at work, and the plan is the result.
      const planning = request.approval === "plan";
      const reason: StopReason = stop === "done" && notRun.size > 0 && ran.size === 0 && !planning ? "not_run" : stop;
      summary.reason = reason;
      summary.durationMs = Date.now() - started;
      request.emit({
        type: "run_end",
        reason,
        steps: summary.steps,
        toolCalls: summary.toolCalls,
        usage: { ...summary.usage },
        durationMs: summary.durationMs,
      });
      return summary;
    },
  };
}
