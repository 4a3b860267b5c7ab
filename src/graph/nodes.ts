import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { RemoveMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { interrupt, REMOVE_ALL_MESSAGES, type LangGraphRunnableConfig } from "@langchain/langgraph";
import { ToolNode } from "@langchain/langgraph/prebuilt";
import { approvalScope, classifyCall, deniedMessage, notRunResult, refusedMessage } from "../agent/approval.js";
import type { ApprovalRequest, ApprovalResponse } from "../agent/events.js";
import type { PriceTable } from "../agent/cost.js";
import { checkRepeats, loopNote, loopStopMessage, loopStopResults, withLoopNote } from "../agent/loop-guard.js";
import { takeModelTurn } from "../agent/model-turn.js";
import { providerNoteEvent, type ProviderEvent } from "../provider/events.js";
import { previewToolCall } from "../tools/preview.js";
import { threadOf } from "../tools/read-tracker.js";
import { invalidCallResults, lastAIMessage, stepsSinceLastRequest, unknownToolResults } from "../agent/turn.js";
import type { ApprovalMode } from "../settings.js";
import { sameSecret, STUDIO_APPROVE_WITH, STUDIO_SECRET_MISSING } from "./studio-secret.js";
import type { AgentStateType, AgentStateUpdate } from "./state.js";

/** What the nodes need besides state: fixed when the graph is built, overridable per run. */
export interface AgentRuntime {
  model: BaseChatModel;
  tools: StructuredToolInterface[];
  systemPrompt: () => string;
  approval: ApprovalMode;
  maxSteps: number;
  contextTokens: number;
  /** Workspace root: commands are judged against it and its rules files (default: the current directory). */
  workspace?: string;
  /** The model's name for its price (undefined for the offline model: no cost). */
  modelName?: string;
  /** Price overrides (MINI_CURSOR_PRICES). */
  prices?: PriceTable;
  /**
   * Under Studio: a resume approves only when it carries this code (`secret`), which the dev
   * server prints to its terminal and keeps out of every command's reach (graph/studio-secret.ts).
   */
  approvalSecret?: string;
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
  | { kind: "usage"; step: number; input: number; output: number; estimated: boolean; cost?: number }
  /** The agent node replaced the conversation: `replaced` re-sent messages lead its update, not new ones. */
  | { kind: "compaction"; step: number; tokensBefore: number; tokensAfter: number; summarised: number; replaced: number }
  | { kind: "loop_guard"; step: number; action: "note" | "stop"; tool: string; repeats: number; message: string }
  /** Thinking and notices from the provider layer, passed on as they are. */
  | { kind: "provider"; event: ProviderEvent };

export function createAgentNode(runtime: AgentRuntime) {
  const bound = runtime.model.bindTools?.(runtime.tools) ?? runtime.model;
  return async function agent(state: AgentStateType, config: LangGraphRunnableConfig): Promise<AgentStateUpdate> {
    const step = stepsSinceLastRequest(state.messages) + 1;
    config.writer?.({ kind: "step", step } satisfies NodeSignal);
    const { message, usage, compaction } = await takeModelTurn(
      bound,
      {
        systemPrompt: runtime.systemPrompt(),
        history: state.messages,
        contextTokens: runtime.contextTokens,
        workspace: runtime.workspace,
        summaryModel: runtime.model,
        modelName: runtime.modelName,
        prices: runtime.prices,
        onCompaction: ({ tokensBefore, tokensAfter, summarised, history }) => {
          // `replaced`: the clearing marker and the compacted history lead this node's update.
          const replaced = history.length + 1;
          config.writer?.({ kind: "compaction", step, tokensBefore, tokensAfter, summarised, replaced } satisfies NodeSignal);
        },
        onProviderNote: (note) => config.writer?.({ kind: "provider", event: providerNoteEvent(note, step) } satisfies NodeSignal),
        tools: runtime.tools,
      },
      config,
    );
    config.writer?.({ kind: "usage", step, ...usage } satisfies NodeSignal);
    const messages: BaseMessage[] = [];
    let history = state.messages;
    if (compaction) {
      // The saved conversation becomes the compacted one: clear it, then add it back.
      messages.push(new RemoveMessage({ id: REMOVE_ALL_MESSAGES }), ...compaction.history);
      history = compaction.history;
    }
    messages.push(message);
    // The loop guard: a fifth identical turn in a row is not run, and the run ends here.
    const guard = checkRepeats([...history, message]);
    if (guard.action === "stop") {
      const signal = { kind: "loop_guard", step, action: "stop", tool: guard.call?.name ?? "", repeats: guard.repeats, message: loopStopMessage(guard) } as const;
      config.writer?.(signal satisfies NodeSignal);
      messages.push(...loopStopResults(message, guard));
    }
    return { messages };
  };
}

function normalizeResponse(value: unknown, secret?: string): ApprovalResponse {
  const v = (value ?? {}) as Partial<ApprovalResponse> & { secret?: unknown };
  const decision = v.decision === "approve" || v.decision === "always" || v.decision === "always-project" ? v.decision : "deny";
  if (decision !== "deny" && secret !== undefined && !sameSecret(v.secret, secret)) {
    // Anything on this machine can call the dev server's API, a command the agent started too.
    return { decision: "deny", feedback: STUDIO_SECRET_MISSING };
  }
  const feedback = typeof v.feedback === "string" && v.feedback ? v.feedback : undefined;
  return { decision, feedback, ...(decision === "deny" && v.unattended === true ? { unattended: true } : {}) };
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
      const decision = await classifyCall(call, mode, always, { workspace: runtime.workspace ?? process.cwd(), tools: runtime.tools });
      if (decision.action === "run") continue;
      if (decision.action === "deny") {
        // Denied by the project rules: refused without asking.
        declined.push(notRunResult(call, refusedMessage(call.name, decision.reason!)));
        continue;
      }
      const request: ApprovalRequest = { toolCallId: call.id!, tool: call.name, args: call.args, reason: decision.reason!, ...approvalScope(decision) };
      const preview = await previewToolCall(runtime.tools, call, threadOf(config));
      if (preview) request.preview = preview;
      if (runtime.approvalSecret !== undefined) request.approveWith = STUDIO_APPROVE_WITH;
      const response = normalizeResponse(interrupt(request), runtime.approvalSecret);
      if (response.decision === "deny") {
        declined.push(notRunResult(call, deniedMessage(call.name, response, { reason: decision.reason, alwaysAsks: decision.alwaysAsks, mode })));
      } else if ((response.decision === "always" || response.decision === "always-project") && !decision.alwaysAsks) {
        always.push(...decision.alwaysKeys);
        added.push(...decision.alwaysKeys);
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
    let results = [...invalid, ...output.messages];
    // The loop guard: from the third identical turn in a row, the model is told it is repeating itself.
    const guard = checkRepeats(state.messages);
    if (guard.action === "note" && results.every((m) => ToolMessage.isInstance(m))) {
      const step = stepsSinceLastRequest(state.messages);
      config.writer?.({ kind: "loop_guard", step, action: "note", tool: guard.call?.name ?? "", repeats: guard.repeats, message: loopNote(guard) } satisfies NodeSignal);
      results = withLoopNote(results as ToolMessage[], guard);
    }
    return { messages: results };
  };
}

