import { SystemMessage, type AIMessage, type BaseMessage } from "@langchain/core/messages";
import type { BaseLanguageModelInput } from "@langchain/core/language_models/base";
import type { Runnable, RunnableConfig } from "@langchain/core/runnables";
import {
  COMPACT_AT,
  compactHistory,
  compactionCanHelp,
  offloadLargeResults,
  offloadLimits,
  type Compaction,
} from "../context/compaction.js";
import { fitToBudget, estimateTokens } from "../context/budget.js";
import { fixedTokens, measureContext, OVERHEAD_WARN_SHARE, overheadNotice } from "../context/context-size.js";
import { costOf, priceFor, type PriceTable } from "../models/cost.js";
import { callModelWithRetry, usageOf, type UsageCount } from "../models/invoke.js";
import { normalizeToolCalls } from "./turn.js";
import { offeredTools, type ProviderNote } from "../provider/message.js";
import type { StructuredToolInterface } from "@langchain/core/tools";

type ChatRunnable = Runnable<BaseLanguageModelInput, AIMessage | BaseMessage>;

export interface ModelTurnInput {
  systemPrompt: string;
  /** The conversation without the system prompt (for a model turn, already compacted when it had to be). */
  history: readonly BaseMessage[];
  contextTokens: number;
  /** Workspace root: big tool results the model has read are kept there instead of in the context (nor measured). */
  workspace?: string;
  /** Model name for the price when the response does not name one (undefined: no cost). */
  modelName?: string;
  /** Price overrides (MINI_CURSOR_PRICES). */
  prices?: PriceTable;
  /** Told what the provider layer noticed (thinking, dropped parameters, recovered calls), for the trace. */
  onProviderNote?: (note: ProviderNote) => void;
  /** The tools offered with every request: their schemas are measured, and calls written as text recovered. */
  tools?: readonly StructuredToolInterface[];
}

/** What compaction needs: the conversation, the prompt it is sent with, the budget. */
export interface CompactionInput extends Omit<ModelTurnInput, "onProviderNote"> {
  /** The model without tools, which writes the summary. */
  summaryModel: ChatRunnable;
  /** Told once per tool set when the fixed part alone leaves the conversation no room. */
  onNotice?: (text: string) => void;
  /** Runs right before the summary is written (the person's PreCompact hooks, trigger "auto"). */
  beforeCompact?: (config?: RunnableConfig) => Promise<void>;
}

/** Tokens of a turn and, for a model with a known price, what they cost in USD. */
export type TurnUsage = UsageCount & { cost?: number };

export interface ModelTurn {
  message: AIMessage;
  usage: TurnUsage;
}

/** A compaction done before a turn, with what its summary request cost. */
export interface TurnCompaction {
  compaction: Compaction;
  usage: TurnUsage;
}

/** The USD cost of one response, when its model's price is known. */
function costOfResponse(
  response: AIMessage,
  usage: UsageCount,
  input: Pick<ModelTurnInput, "modelName" | "prices">,
): number | undefined {
  const named = (response.response_metadata as { model_name?: unknown } | undefined)?.model_name;
  const price = priceFor(typeof named === "string" && input.modelName ? named : input.modelName, input.prices);
  if (!price) return undefined;
  const cached = response.usage_metadata?.input_token_details?.cache_read;
  return costOf({ input: usage.input, output: usage.output, cachedInput: usage.estimated ? 0 : cached }, price);
}

export function addUsage(a: TurnUsage, b: TurnUsage): TurnUsage {
  const cost = a.cost === undefined && b.cost === undefined ? undefined : (a.cost ?? 0) + (b.cost ?? 0);
  return {
    input: a.input + b.input,
    output: a.output + b.output,
    estimated: a.estimated || b.estimated,
    ...(cost === undefined ? {} : { cost }),
  };
}

const toldCannotHelp = new WeakSet<readonly StructuredToolInterface[]>();

/**
 * Said once per tool set when a compaction could not bring the request under the trigger (the
 * newest turn's results, the request and the fixed part alone come near it): the oldest turns
 * are then dropped instead of a summary being written at every step. Not said when the fixed
 * part alone was already the reason (overheadNotice).
 */
function cannotHelpNotice(
  systemPrompt: string,
  tools: readonly StructuredToolInterface[] | undefined,
  budgetTokens: number,
): string | undefined {
  const key = tools ?? NO_TOOLS;
  if (toldCannotHelp.has(key)) return undefined;
  toldCannotHelp.add(key);
  if (fixedTokens(systemPrompt, tools) >= budgetTokens * OVERHEAD_WARN_SHARE) return undefined;
  return (
    `The latest tool results, the request, the system prompt and the tools together come near the context budget of ` +
    `${budgetTokens} tokens (MINI_CURSOR_CONTEXT_TOKENS), so a summary of the older turns could not make room: ` +
    `the oldest turns are left out of the requests instead. Set MINI_CURSOR_CONTEXT_TOKENS to the model's real context window.`
  );
}
const NO_TOOLS: readonly StructuredToolInterface[] = [];

/**
 * The first part of every step, the same for both engines: near the context budget, older turns
 * are summarised. Undefined when the history fits (or nothing could be summarised); otherwise
 * the caller saves `compaction.history` in place of the old conversation.
 */
export async function compactBeforeTurn(
  input: CompactionInput,
  config?: RunnableConfig,
): Promise<TurnCompaction | undefined> {
  const notice = overheadNotice(input.systemPrompt, input.tools, input.contextTokens);
  if (notice) input.onNotice?.(notice);
  const { workspace } = input;
  // Measured as takeModelTurn sends it: a big result goes as its start and a pointer (offloadLimits).
  const limits = offloadLimits(input.contextTokens, fixedTokens(input.systemPrompt, input.tools));
  const view = workspace
    ? (history: readonly BaseMessage[]) => offloadLargeResults(history, workspace, limits)
    : undefined;
  const options = { systemPrompt: input.systemPrompt, budgetTokens: input.contextTokens, tools: input.tools, view };
  if (
    measureContext(input.systemPrompt, input.history, input.tools, input.contextTokens, view).tokens <=
    input.contextTokens * COMPACT_AT
  )
    return undefined;
  if (!compactionCanHelp(options, input.history)) {
    const told = cannotHelpNotice(input.systemPrompt, input.tools, input.contextTokens);
    if (told) input.onNotice?.(told);
    return undefined;
  }
  await input.beforeCompact?.(config);
  const compaction = await compactHistory(input.summaryModel, input.history, { ...options, config });
  if (!compaction) return undefined;
  const cost = costOfResponse(compaction.response, compaction.usage, input);
  return { compaction, usage: cost === undefined ? compaction.usage : { ...compaction.usage, cost } };
}

/**
 * One "think" step, the same for both engines: the system prompt, the history fitted into the
 * budget, the model call (with broken-stream retries), malformed tool calls made answerable.
 */
export async function takeModelTurn(
  model: ChatRunnable,
  input: ModelTurnInput,
  config?: RunnableConfig,
): Promise<ModelTurn> {
  const system = new SystemMessage(input.systemPrompt);
  const limits = offloadLimits(input.contextTokens, fixedTokens(input.systemPrompt, input.tools));
  const view = input.workspace ? offloadLargeResults(input.history, input.workspace, limits) : input.history;
  const sent: BaseMessage[] = [system, ...fitToBudget(view, input.contextTokens, estimateTokens(system))];
  const response = await callModelWithRetry(model, sent, config, {
    onProviderNote: input.onProviderNote,
    ...(input.tools ? { tools: offeredTools(input.tools) } : {}),
  });
  const counted = usageOf(response, sent);
  const cost = costOfResponse(response, counted, input);
  return { message: normalizeToolCalls(response), usage: cost === undefined ? counted : { ...counted, cost } };
}
