import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { HumanMessage, ToolMessage, type AIMessage, type BaseMessage } from "@langchain/core/messages";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { alwaysKey, approvalReason, deniedMessage } from "../agent/approval.js";
import { createRunTally, type Engine, type RunMeta, type RunRequest, type RunSummary } from "../agent/engine.js";
import type { EventSink } from "../agent/events.js";
import { describeModelError, type ModelSettings } from "../agent/model.js";
import { takeModelTurn } from "../agent/model-turn.js";
import { ToolTimer } from "../agent/timing.js";
import { interruptionMessages, invalidCallResults, messageText, unknownToolResults } from "../agent/turn.js";
import type { ApprovalMode } from "../settings.js";
import { loadLoopThread, saveLoopThread, type LoopThread } from "./memory.js";

/**
 * The hand-rolled ReAct loop of the seed article — think, act on every tool call, observe,
 * repeat up to the step limit — with the same model, tools, prompt, approvals, context budget
 * and events as the graph, so the two can be compared honestly.
 */

export interface LoopOptions {
  model: BaseChatModel;
  tools: StructuredToolInterface[];
  systemPrompt: () => string;
  workspace: string;
  approval: ApprovalMode;
  maxSteps: number;
  contextTokens: number;
  meta: RunMeta;
  modelSettings: ModelSettings;
  /** Where threads live; defaults to JSON files under `.mini-cursor/`. Tests may keep them in memory. */
  memory?: { load(threadId: string): LoopThread; save(threadId: string, thread: LoopThread): void };
}

function fileMemory(workspace: string) {
  return {
    load: (threadId: string) => loadLoopThread(workspace, threadId),
    save: (threadId: string, thread: LoopThread) => saveLoopThread(workspace, threadId, thread),
  };
}

/** Runs one tool call; failures become results, as ToolNode does in the graph. */
async function invokeTool(
  tool: StructuredToolInterface,
  call: NonNullable<AIMessage["tool_calls"]>[number],
  signal: AbortSignal | undefined,
  timer: ToolTimer,
): Promise<ToolMessage> {
  try {
    const output: unknown = await tool.invoke({ ...call, type: "tool_call" }, { signal, callbacks: [timer] });
    if (ToolMessage.isInstance(output)) return output;
    const content = typeof output === "string" ? output : JSON.stringify(output);
    return new ToolMessage({ tool_call_id: call.id!, name: call.name, status: "success", content });
  } catch (err) {
    if (signal?.aborted) throw err;
    return new ToolMessage({
      tool_call_id: call.id!,
      name: call.name,
      status: "error",
      content: `Error: ${(err as Error).message}\n Please fix your mistakes.`,
    });
  }
}

function emitResults(results: ToolMessage[], step: number, emit: EventSink, timer: ToolTimer): void {
  for (const result of results) {
    emit({
      type: "tool_result",
      step,
      id: result.tool_call_id,
      name: result.name ?? "",
      status: result.status === "error" ? "error" : "success",
      content: messageText(result),
      durationMs: timer.durationOf(result.tool_call_id),
    });
  }
}

export function createLoopEngine(options: LoopOptions): Engine {
  const memory = options.memory ?? fileMemory(options.workspace);
  const bound = options.model.bindTools?.(options.tools) ?? options.model;
  const toolsByName = new Map(options.tools.map((t) => [t.name, t]));
  const toolNames = options.tools.map((t) => t.name);

  return {
    name: "loop",
    async run(request: RunRequest): Promise<RunSummary> {
      const tally = createRunTally(options.meta, request);
      const { emit } = tally;
      const signal = request.signal;
      const maxSteps = request.maxSteps ?? options.maxSteps;
      const mode = request.approval ?? options.approval;
      const thread = memory.load(request.threadId);
      const messages: BaseMessage[] = thread.messages;
      const save = () => memory.save(request.threadId, { messages, alwaysAllow: thread.alwaysAllow });
      const timer = new ToolTimer();
      messages.push(new HumanMessage(request.task));
      save();
      try {
        for (let step = 1; step <= maxSteps; step++) {
          // THINK
          emit({ type: "step", step });
          const onToken = { handleLLMNewToken: (token: string) => token && emit({ type: "token", step, text: token }) };
          const { message, usage } = await takeModelTurn(
            bound,
            { systemPrompt: options.systemPrompt(), history: messages, contextTokens: options.contextTokens },
            { signal, callbacks: [onToken] },
          );
          messages.push(message);
          save();
          emit({ type: "usage", step, usage });
          const calls = message.tool_calls ?? [];
          if (calls.length === 0) {
            emit({ type: "final", text: messageText(message) });
            return tally.finish("done");
          }
          for (const call of calls) emit({ type: "tool_call", step, id: call.id!, name: call.name, args: call.args });

          // ACT: answer malformed and unknown calls, ask where needed, run the rest concurrently.
          const answered: ToolMessage[] = [...invalidCallResults(message), ...unknownToolResults(message, toolNames)];
          const skip = new Set(answered.map((m) => m.tool_call_id));
          for (const call of calls) {
            if (skip.has(call.id!)) continue;
            const reason = approvalReason(call, mode, thread.alwaysAllow);
            if (!reason) continue;
            const approvalRequest = { toolCallId: call.id!, tool: call.name, args: call.args, reason };
            const response = await request.approver(approvalRequest);
            emit({ type: "approval", request: approvalRequest, response });
            if (signal?.aborted) throw new Error("aborted");
            if (response.decision === "always") thread.alwaysAllow.push(alwaysKey(call));
            if (response.decision === "deny") {
              const denied = new ToolMessage({ tool_call_id: call.id!, name: call.name, status: "error", content: deniedMessage(call.name, response.feedback) });
              answered.push(denied);
              skip.add(call.id!);
            }
          }
          emitResults(answered, step, emit, timer);
          const runnable = calls.filter((c) => !skip.has(c.id!));
          const results = await Promise.all(runnable.map((c) => invokeTool(toolsByName.get(c.name)!, c, signal, timer)));
          if (signal?.aborted) throw new Error("aborted");
          emitResults(results, step, emit, timer);

          // OBSERVE: results in the order of the calls, as the graph's ToolNode leaves them.
          const byId = new Map([...answered, ...results].map((m) => [m.tool_call_id, m]));
          for (const call of calls) messages.push(byId.get(call.id!)!);
          save();
        }
        return tally.finish("max_steps");
      } catch (err) {
        if (signal?.aborted) {
          messages.push(...interruptionMessages(messages));
          save();
          return tally.finish("interrupted");
        }
        emit({ type: "error", message: describeModelError(err, options.modelSettings), stack: (err as Error)?.stack });
        return tally.finish("error");
      }
    },
  };
}
