import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type { AgentRuntime } from "../agent/runtime.js";
import type { ApprovalMode } from "../contracts/modes.js";

/** Per-run overrides read from `config.configurable` (the CLI and Studio set these). */
export interface RunConfigurable {
  approval?: ApprovalMode;
  maxSteps?: number;
  /** The agent node writes the model's tokens as `token` signals (the CLI's engine; Studio reads them in messages mode). */
  tokens?: boolean;
}

export function runOption<K extends keyof RunConfigurable>(
  config: LangGraphRunnableConfig | undefined,
  key: K,
  fallback: NonNullable<RunConfigurable[K]>,
): NonNullable<RunConfigurable[K]> {
  const value = (config?.configurable as RunConfigurable | undefined)?.[key];
  return (value ?? fallback) as NonNullable<RunConfigurable[K]>;
}

/**
 * A run's approval mode and step limit: as the run's config gives them (the CLI's engine sets
 * both), settled by the runtime where it must (`settleRun`: under Studio, what anyone can send
 * over the API is validated and never looser than the server's mode).
 */
export function runSettings(
  runtime: AgentRuntime,
  config: LangGraphRunnableConfig | undefined,
): { approval: ApprovalMode; maxSteps: number } {
  return (
    runtime.settleRun?.(config) ?? {
      approval: runOption(config, "approval", runtime.approval),
      maxSteps: runOption(config, "maxSteps", runtime.maxSteps),
    }
  );
}

/**
 * Super-steps per agent step at most: start_step, restore_files, summarise, agent, approve, tools,
 * step_done, and for a turn with task calls subagent and step_done again.
 */
export const SUPERSTEPS_PER_STEP = 9;
/** Super-steps beyond the steps: the final answer, a sub-agent round, a stop or step_limit node. */
export const RECURSION_SLACK = 10;

/** The recursion limit a run of `maxSteps` steps needs; the routing ends it at its own maxSteps well before. */
export function recursionLimitFor(maxSteps: number): number {
  return maxSteps * SUPERSTEPS_PER_STEP + RECURSION_SLACK;
}
