import type { TurnUsage } from "../agent/model-turn.js";
import type { ProviderEvent } from "../provider/events.js";
import type { EventSignal } from "../contracts/events.js";

/**
 * Custom stream events the nodes write (`config.writer`), turned into AgentEvents by engine.ts.
 * `at` is the namespace of the graph that wrote it ("" the parent's, `subagent:<task>` a
 * sub-agent's): LangGraph's writer finds the namespace from the context it is called in, which a
 * token written from the model's callbacks has lost, so the nodes say it themselves.
 */
export type NodeSignal = NodeSignalBody & { at?: string };

type NodeSignalBody =
  /** start_step starts every step. */
  | { kind: "step"; step: number }
  /** The model's text as it streams, when the run asks for it (`configurable.tokens`: the CLI's engine). */
  | { kind: "token"; step: number; text: string }
  | { kind: "usage"; step: number; input: number; output: number; estimated: boolean; cost?: number }
  /** summarise summarised older turns; `usage` is the summary request's, reported with the step's. */
  | {
      kind: "compaction";
      step: number;
      tokensBefore: number;
      tokensAfter: number;
      summarised: number;
      usage: TurnUsage;
    }
  | { kind: "loop_guard"; step: number; action: "note" | "stop"; tool: string; repeats: number; message: string }
  /** The subagent node starts a task call's sub-agent in namespace `ns` (its events come from there). */
  | { kind: "subagent"; callId: string; type: string; ns: string }
  /** Thinking and notices from the provider layer, passed on as they are. */
  | { kind: "provider"; event: ProviderEvent }
  /** What a guard tells the trace (a notice, the loop guard's note), passed on as it is. */
  | EventSignal;
