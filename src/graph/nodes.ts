import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { ToolMessage, type BaseMessage } from "@langchain/core/messages";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { interrupt, type LangGraphRunnableConfig } from "@langchain/langgraph";
import { ToolNode } from "@langchain/langgraph/prebuilt";
import { alwaysKey, approvalReason, deniedMessage } from "../agent/approval.js";
import type { ApprovalRequest, ApprovalResponse } from "../agent/events.js";
import { takeModelTurn } from "../agent/model-turn.js";
import { invalidCallResults, lastAIMessage, stepsSinceLastRequest, unknownToolResults } from "../agent/turn.js";
import type { ApprovalMode } from "../settings.js";
import type { AgentStateType, AgentStateUpdate } from "./state.js";

/** What the nodes need besides state: fixed when the graph is built, overridable per run. */
export interface AgentRuntime {
  model: BaseChatModel;
  tools: StructuredToolInterface[];
  systemPrompt: () => string;
  approval: ApprovalMode;
  maxSteps: number;
  contextTokens: number;
}

/** Per-run overrides read from `config.configurable` (the CLI and Studio set these). */
export interface RunConfigurable {
  approval?: ApprovalMode;
  maxSteps?: number;
}

export function runOption<K extends keyof RunConfigurable>(
  config: LangGraphRunnableConfig | undefined,
  key: K,
  fallback: NonNullable<RunConfigurable[K]>,
): NonNullable<RunConfigurable[K]> {
  const value = (config?.configurable as RunConfigurable | undefined)?.[key];
  return (value ?? fallback) as NonNullable<RunConfigurable[K]>;
}

/** Custom stream events the nodes write, turned into AgentEvents by the stream adapter. */
export type NodeSignal =
  | { kind: "step"; step: number }
  | { kind: "usage"; step: number; input: number; output: number; estimated: boolean };

export function createAgentNode(runtime: AgentRuntime) {
  const bound = runtime.model.bindTools?.(runtime.tools) ?? runtime.model;
  return async function agent(state: AgentStateType, config: LangGraphRunnableConfig): Promise<AgentStateUpdate> {
    const step = stepsSinceLastRequest(state.messages) + 1;
    config.writer?.({ kind: "step", step } satisfies NodeSignal);
    const { message, usage } = await takeModelTurn(
      bound,
      { systemPrompt: runtime.systemPrompt(), history: state.messages, contextTokens: runtime.contextTokens },
      config,
    );
    config.writer?.({ kind: "usage", step, ...usage } satisfies NodeSignal);
    return { messages: [message] };
  };
}

function normalizeResponse(value: unknown): ApprovalResponse {
  const v = (value ?? {}) as Partial<ApprovalResponse>;
  const decision = v.decision === "approve" || v.decision === "always" ? v.decision : "deny";
  return { decision, feedback: typeof v.feedback === "string" && v.feedback ? v.feedback : undefined };
}

/**
 * Asks (through `interrupt()`) about every call that needs approval. Declined calls get a
 * tool result right here, and the tools node skips calls that already have one.
 */
export function createApproveNode(runtime: AgentRuntime) {
  return async function approve(state: AgentStateType, config: LangGraphRunnableConfig): Promise<AgentStateUpdate> {
    const last = lastAIMessage(state.messages);
    if (!last) return {};
    const mode = runOption(config, "approval", runtime.approval);
    const invalid = new Set((last.invalid_tool_calls ?? []).map((c) => c.id));
    const always = [...state.alwaysAllow];
    const added: string[] = [];
    const declined: ToolMessage[] = [];
    for (const call of last.tool_calls ?? []) {
      if (invalid.has(call.id)) continue;
      const reason = approvalReason(call, mode, always);
      if (!reason) continue;
      const request: ApprovalRequest = { toolCallId: call.id!, tool: call.name, args: call.args, reason };
      const response = normalizeResponse(interrupt(request));
      if (response.decision === "deny") {
        declined.push(
          new ToolMessage({ tool_call_id: call.id!, name: call.name, status: "error", content: deniedMessage(call.name, response.feedback) }),
        );
      } else if (response.decision === "always") {
        always.push(alwaysKey(call));
        added.push(alwaysKey(call));
      }
    }
    return { messages: declined, alwaysAllow: added };
  };
}

/** Runs the approved calls of the latest turn concurrently (ToolNode) after answering malformed ones. */
export function createToolsNode(runtime: AgentRuntime) {
  const toolNode = new ToolNode(runtime.tools, { handleToolErrors: true });
  return async function tools(state: AgentStateType, config: LangGraphRunnableConfig): Promise<AgentStateUpdate> {
    const last = lastAIMessage(state.messages);
    const invalid = last ? [...invalidCallResults(last), ...unknownToolResults(last, runtime.tools.map((t) => t.name))] : [];
    const input = { messages: [...state.messages, ...invalid] };
    const output = (await toolNode.invoke(input, config)) as { messages: BaseMessage[] };
    return { messages: [...invalid, ...output.messages] };
  };
}

