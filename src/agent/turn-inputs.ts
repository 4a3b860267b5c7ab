import { HumanMessage, type BaseMessage } from "@langchain/core/messages";
import { randomUUID } from "node:crypto";
import type { ApprovalMode } from "../contracts/modes.js";
import { withRequestNote } from "../policy/plan-mode.js";
import type { ProviderNote } from "../provider/message.js";
import type { CompactionInput, ModelTurnInput } from "./model-turn.js";
import type { AgentRuntime } from "./runtime.js";
import { autoCompactHooks } from "./task-hooks.js";

/**
 * What a turn is built from, written once for both engines: the user's request as it is saved,
 * the system prompt with the workspace's rules (runtime.systemPrompt, for the run's approval
 * mode), what the summary is made from, and what the model call gets. The graph's summarise and
 * agent nodes and the loop's think phase call these and nothing else.
 */

/** The request as the conversation keeps it: with its mode's note, and an id snapshots are kept under. */
export function requestMessage(task: string, note: string | undefined): HumanMessage {
  return new HumanMessage({ content: withRequestNote(task, note), id: randomUUID() });
}

/** What compactBeforeTurn needs to summarise older turns near the context budget (the tool schemas count too). */
export function summaryInput(
  runtime: AgentRuntime,
  mode: ApprovalMode,
  history: readonly BaseMessage[],
  onNotice: (text: string) => void,
): CompactionInput {
  return {
    systemPrompt: runtime.systemPrompt(mode),
    history,
    contextTokens: runtime.contextTokens,
    summaryModel: runtime.model,
    modelName: runtime.modelName,
    prices: runtime.prices,
    tools: runtime.tools,
    onNotice,
    workspace: runtime.workspace,
    ...(runtime.hooks ? { beforeCompact: (config) => autoCompactHooks(runtime, mode, config) } : {}),
  };
}

/** What takeModelTurn needs for one model call. */
export function modelTurnInput(
  runtime: AgentRuntime,
  mode: ApprovalMode,
  history: readonly BaseMessage[],
  onProviderNote: (note: ProviderNote) => void,
): ModelTurnInput {
  return {
    systemPrompt: runtime.systemPrompt(mode),
    history,
    contextTokens: runtime.contextTokens,
    workspace: runtime.workspace,
    modelName: runtime.modelName,
    prices: runtime.prices,
    onProviderNote,
    tools: runtime.tools,
  };
}
