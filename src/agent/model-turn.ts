import { SystemMessage, type AIMessage, type BaseMessage } from "@langchain/core/messages";
import type { BaseLanguageModelInput } from "@langchain/core/language_models/base";
import type { Runnable, RunnableConfig } from "@langchain/core/runnables";
import { fitToBudget } from "./context.js";
import { callModelWithRetry, usageOf, type UsageCount } from "./invoke.js";
import { normalizeToolCalls } from "./turn.js";

export interface ModelTurnInput {
  systemPrompt: string;
  /** The conversation without the system prompt. */
  history: readonly BaseMessage[];
  contextTokens: number;
}

/**
 * One "think" step, the same for both engines: the system prompt, the history fitted into the
 * budget, the model call (with broken-stream retries), malformed tool calls made answerable.
 */
export async function takeModelTurn(
  model: Runnable<BaseLanguageModelInput, AIMessage | BaseMessage>,
  input: ModelTurnInput,
  config?: RunnableConfig,
): Promise<{ message: AIMessage; usage: UsageCount }> {
  const sent: BaseMessage[] = [new SystemMessage(input.systemPrompt), ...fitToBudget(input.history, input.contextTokens)];
  const response = await callModelWithRetry(model, sent, config);
  return { message: normalizeToolCalls(response), usage: usageOf(response, sent) };
}
