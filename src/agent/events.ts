/**
 * The AgentEvent stream: both engines emit it, and the terminal trace, the JSON Lines output,
 * the comparison and the benchmark read nothing else.
 */

export interface TokenUsage {
  input: number;
  output: number;
  /** True when the provider sent no usage and we estimated from characters. */
  estimated: boolean;
  /** US dollars, for models with a known price (see agent/cost.ts); absent otherwise. */
  cost?: number;
}

export type ApprovalDecision = "approve" | "deny" | "always";

/** What an approval question carries: the tool, its arguments and why it asks. */
export interface ApprovalRequest {
  toolCallId: string;
  tool: string;
  args: Record<string, unknown>;
  reason: string;
  /** What the call would change (a unified diff for edit_file and write_file), for the person deciding. */
  preview?: string;
}

export interface ApprovalResponse {
  decision: ApprovalDecision;
  feedback?: string;
}

export type StopReason = "done" | "max_steps" | "interrupted" | "error" | "loop_guard";

export type AgentEvent =
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
    }
  | { type: "approval"; request: ApprovalRequest; response: ApprovalResponse }
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
  | { type: "notice"; step: number; message: string }
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

export type AgentEventType = AgentEvent["type"];

/** Where engines send events. */
export type EventSink = (event: AgentEvent) => void;

/** Asks whoever runs the agent (a person, a policy) about one tool call. */
export type Approver = (request: ApprovalRequest) => Promise<ApprovalResponse>;
