import { AIMessage, SystemMessage, type BaseMessage } from "@langchain/core/messages";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { convertToOpenAITool } from "@langchain/core/utils/function_calling";
import { CHARS_PER_TOKEN, estimateTokens, estimateTotalTokens } from "../models/tokens.js";
import { lastIndex, requestTokenCap } from "./budget.js";

/**
 * One measure of a request's size, used both to decide when to compact and to size what a
 * compaction keeps (issue 30: a trigger that counted the provider's tokens and a tail sized by a
 * bare character estimate disagreed, so compaction ran at every step). The measure is the
 * estimate of everything a request carries, the fixed part (system prompt and tool schemas)
 * included, times a scale learnt from the provider's own count when it gave one.
 */

/** Marks a summary in `response_metadata`, with the number of model turns it stands for. */
export const SUMMARY_KEY = "mini_cursor_summary";

/**
 * The scale never goes below 1 (an estimate over the provider's count only compacts early) and
 * never above this (a provider that counts absurdly must not make every step compact).
 */
const MAX_SCALE = 4;

export interface SummaryMarker {
  /** Model turns the summary stands for. */
  steps?: number;
  /**
   * Messages after the summary that are older than it (the verbatim tail): their provider
   * counts covered the conversation before the compaction, so they say nothing about this one.
   */
  kept?: number;
}

export function summaryMarker(message: BaseMessage): SummaryMarker | undefined {
  return (message.response_metadata as Record<string, unknown> | undefined)?.[SUMMARY_KEY] as SummaryMarker | undefined;
}

function schemaChars(tool: StructuredToolInterface): number {
  try {
    return JSON.stringify(convertToOpenAITool(tool)).length;
  } catch {
    // A schema the converter does not know: its name and description still go out.
    return tool.name.length + tool.description.length;
  }
}

/** Tokens of the tool schemas as the provider is sent them (JSON), estimated; cached per tool list. */
const schemaTokens = new WeakMap<readonly StructuredToolInterface[], number>();
export function toolSchemaTokens(tools: readonly StructuredToolInterface[] | undefined): number {
  if (!tools || tools.length === 0) return 0;
  let tokens = schemaTokens.get(tools);
  if (tokens === undefined) {
    const chars = tools.reduce((n, tool) => n + schemaChars(tool), 0);
    tokens = Math.ceil(chars / CHARS_PER_TOKEN);
    schemaTokens.set(tools, tokens);
  }
  return tokens;
}

/** What every request carries whatever the conversation: the system prompt and the tool schemas. */
export function fixedTokens(systemPrompt: string, tools?: readonly StructuredToolInterface[]): number {
  return estimateTokens(new SystemMessage(systemPrompt)) + toolSchemaTokens(tools);
}

/** Index of the first message whose provider count describes the conversation as it now is. */
function firstCurrentIndex(history: readonly BaseMessage[]): number {
  for (let i = history.length - 1; i >= 0; i--) {
    const marker = summaryMarker(history[i]!);
    // A summary written before the tail was counted leaves its whole tail out.
    if (marker) return marker.kept === undefined ? history.length : i + 1 + marker.kept;
  }
  return 0;
}

/**
 * What a request is sent of a history: the same messages, or fewer characters of them (the big
 * tool results the model has read, offloaded to disk: context/compaction.ts offloadLargeResults).
 */
export type SentView = (history: readonly BaseMessage[]) => readonly BaseMessage[];
const asIs: SentView = (history) => history;

/**
 * How much the provider's tokens exceed the estimate: the latest response counted since the last
 * compaction, against the estimate of what that request carried, as `view` sent it (1 when
 * there is none).
 */
export function providerScale(
  fixed: number,
  history: readonly BaseMessage[],
  view: SentView = asIs,
): { scale: number; estimated: boolean } {
  const from = firstCurrentIndex(history);
  for (let i = history.length - 1; i >= from; i--) {
    const m = history[i]!;
    const usage = AIMessage.isInstance(m) ? m.usage_metadata : undefined;
    if (usage && usage.input_tokens > 0) {
      const estimate = fixed + estimateTotalTokens(view(history.slice(0, i))) + estimateTotalTokens([m]);
      const scale = (usage.input_tokens + usage.output_tokens) / Math.max(1, estimate);
      return { scale: Math.min(MAX_SCALE, Math.max(1, scale)), estimated: false };
    }
  }
  return { scale: 1, estimated: true };
}

export interface ContextSize {
  /** The whole request the history would make, fixed part included, in the measure's tokens. */
  tokens: number;
  /** The fixed part alone (system prompt and tool schemas), in the same measure. */
  fixed: number;
  /** The latest request alone, as it is sent (cut to its share of the budget), in the same measure. */
  request: number;
  /** Multiplier from estimated to measured tokens. */
  scale: number;
  /** True when no provider count could be used. */
  estimated: boolean;
}

/** A user's request (not a summary). */
export const isRequest = (m: BaseMessage) => m.getType() === "human" && !summaryMarker(m);

/**
 * The size of the request `history` would make with this system prompt and these tools, as
 * `view` sends it (issue 30's probe: measured with the big results the request no longer
 * carries, every step compacted). A latest request over its share of the budget counts as what
 * is sent of it (its head and tail).
 */
export function measureContext(
  systemPrompt: string,
  history: readonly BaseMessage[],
  tools?: readonly StructuredToolInterface[],
  budgetTokens = Number.POSITIVE_INFINITY,
  view: SentView = asIs,
): ContextSize {
  const fixed = fixedTokens(systemPrompt, tools);
  const { scale, estimated } = providerScale(fixed, history, view);
  const at = lastIndex(history, isRequest);
  const whole = at >= 0 ? estimateTokens(history[at]!) : 0;
  const request = Math.min(whole, requestTokenCap(budgetTokens, fixed));
  const messages = estimateTotalTokens(view(history)) - whole + request;
  return {
    tokens: Math.ceil(scale * (fixed + messages)),
    fixed: Math.ceil(scale * fixed),
    request: Math.ceil(scale * request),
    scale,
    estimated,
  };
}

/** Above this share of the budget the fixed part alone leaves a compaction no room to work in. */
export const OVERHEAD_WARN_SHARE = 0.5;
const warned = new WeakSet<readonly StructuredToolInterface[]>();

/**
 * A note, the first time a tool set is measured, when the system prompt and the tool schemas
 * alone take more than half the budget (or all of it): the conversation then gets little or no
 * room and compaction cannot bring requests under half the budget.
 */
export function overheadNotice(
  systemPrompt: string,
  tools: readonly StructuredToolInterface[] | undefined,
  budgetTokens: number,
): string | undefined {
  if (!tools || warned.has(tools)) return undefined;
  warned.add(tools);
  const fixed = fixedTokens(systemPrompt, tools);
  if (fixed < budgetTokens * OVERHEAD_WARN_SHARE) return undefined;
  const share = Math.round((fixed / budgetTokens) * 100);
  return (
    `The system prompt and the schemas of ${tools.length} tools alone come to about ${fixed} tokens, ${share}% of the ` +
    `context budget of ${budgetTokens} tokens (MINI_CURSOR_CONTEXT_TOKENS)` +
    (fixed >= budgetTokens ? ", more than all of it" : "") +
    `: the conversation gets little room and compaction cannot bring a request under half the budget. ` +
    `Set MINI_CURSOR_CONTEXT_TOKENS to the model's real context window, or connect fewer MCP servers.`
  );
}
