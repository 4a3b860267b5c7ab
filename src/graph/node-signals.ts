import type { TurnUsage } from "../agent/model-turn.js";
import type { ProviderEvent } from "../provider/events.js";

/** Custom stream events the nodes write (`config.writer`), turned into AgentEvents by engine.ts. */
export type NodeSignal =
  /** The compact node starts every step. */
  | { kind: "step"; step: number }
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
  /** Thinking and notices from the provider layer, passed on as they are. */
  | { kind: "provider"; event: ProviderEvent };
