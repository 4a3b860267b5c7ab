import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type { AgentRuntime } from "../agent/runtime.js";
import type { ApprovalMode } from "../settings.js";

/** One run's runtime, and its config with the per-run options (approval, maxSteps) settled in `configurable`. */
export interface ResolvedRun {
  runtime: AgentRuntime;
  config: LangGraphRunnableConfig;
}

/**
 * Where the nodes get their runtime: the CLI's graph has one fixed runtime; the Studio entry
 * (studio.ts) resolves one per run from the run's configuration. It should return the same
 * runtime object for the same model and workspace: what is derived from a runtime (the bound
 * model) is built once per runtime and kept.
 */
export type RuntimeSource = (config: LangGraphRunnableConfig) => ResolvedRun;

export function fixedRuntime(runtime: AgentRuntime): RuntimeSource {
  return (config) => ({ runtime, config });
}

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
 * What the routing reads of a run, beside the state: its approval mode (plan mode lets fewer
 * tools past approve), its tools (what each declares decides whether its turn passes approve)
 * and its step limit.
 */
export function runReaders(source: RuntimeSource) {
  return {
    approvalMode(config: LangGraphRunnableConfig): ApprovalMode {
      const { runtime, config: run } = source(config);
      return runOption(run, "approval", runtime.approval);
    },
    tools(config: LangGraphRunnableConfig) {
      return source(config).runtime.tools;
    },
    maxSteps(config: LangGraphRunnableConfig): number {
      const { runtime, config: run } = source(config);
      return runOption(run, "maxSteps", runtime.maxSteps);
    },
  };
}

/** Super-steps per agent step (start_step, restore_files, summarise, agent, approve, tools). */
export const SUPERSTEPS_PER_STEP = 6;
/** Super-steps beyond the steps: the final answer, a guard or step_limit node. */
export const RECURSION_SLACK = 10;

/** The recursion limit a run of `maxSteps` steps needs; the routing ends it at its own maxSteps well before. */
export function recursionLimitFor(maxSteps: number): number {
  return maxSteps * SUPERSTEPS_PER_STEP + RECURSION_SLACK;
}
