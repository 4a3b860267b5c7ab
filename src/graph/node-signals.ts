import type { TurnUsage } from "../agent/model-turn.js";
import type { ProviderEvent } from "../provider/events.js";

/** Custom stream events the nodes write (`config.writer`), turned into AgentEvents by engine.ts. */
export type NodeSignal =
  /** The compact node starts every step. */
  | { kind: "step"; step: number }
  /** The model's text as it streams, when the run asks for it (`configurable.tokens`: the CLI's engine). */
  | { kind: "token"; step: number; text: string }
  | { kind: "usage"; step: number; input: number; output: number; estimated: boolean; cost?: number }
  /** The compact node summarised older turns; `usage` is the summary request's, reported with the step's. */
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
  | { kind: "provider"; event: ProviderEvent };
