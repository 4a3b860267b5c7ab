import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { HumanMessage, ToolMessage, type AIMessage, type BaseMessage } from "@langchain/core/messages";
import type { CallbackManager } from "@langchain/core/callbacks/manager";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { approvalScope, classifyCall, deniedMessage, notRunResult, refusedMessage } from "../agent/approval.js";
import { createRunTally, type Engine, type RunMeta, type RunRequest, type RunSummary } from "../agent/engine.js";
import type { EventSink } from "../agent/events.js";
import { describeModelError, type ModelSettings } from "../agent/model.js";
import type { PriceTable } from "../agent/cost.js";
import { checkRepeats, loopNote, loopStopMessage, loopStopResults, withLoopNote } from "../agent/loop-guard.js";
import { takeModelTurn } from "../agent/model-turn.js";
import { withParentCallbacks } from "../agent/trace-parent.js";
import { providerNoteEvent } from "../provider/events.js";
import { previewToolCall } from "../tools/preview.js";
import { ToolTimer, toolResultEvent } from "../agent/timing.js";
import { interruptionMessages, invalidCallResults, messageText, unknownToolResults } from "../agent/turn.js";
import type { ApprovalMode } from "../settings.js";
import { loadLoopThread, saveLoopThread, type LoopMemory } from "./memory.js";

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
  /** The model's name for its price (undefined for the offline model: no cost). */
  modelName?: string;
  /** Price overrides (MINI_CURSOR_PRICES). */
  prices?: PriceTable;
  /** Where threads live; defaults to JSON files under `.mini-cursor/`; PostgreSQL or memory (tests) otherwise. */
  memory?: LoopMemory;
}

function fileMemory(workspace: string): LoopMemory {
  return {
    load: (threadId) => loadLoopThread(workspace, threadId),
    save: (threadId, thread) => saveLoopThread(workspace, threadId, thread),
  };
}

/** Runs one tool call; failures become results, as ToolNode does in the graph. */
async function invokeTool(
  tool: StructuredToolInterface,
  call: NonNullable<AIMessage["tool_calls"]>[number],
  signal: AbortSignal | undefined,
  timer: ToolTimer,
  threadId: string,
  parent: CallbackManager | undefined,
): Promise<ToolMessage> {
  try {
    // The thread id, as the graph passes it: edit_file checks the file was read in this thread.
    const config = { signal, callbacks: withParentCallbacks(parent, [timer]), configurable: { thread_id: threadId } };
    const output: unknown = await tool.invoke({ ...call, type: "tool_call" }, config);
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
  for (const result of results) emit(toolResultEvent(result, step, timer));
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
      const thread = await memory.load(request.threadId);
      const messages: BaseMessage[] = thread.messages;
      const save = async () => memory.save(request.threadId, { messages, alwaysAllow: thread.alwaysAllow });
      const timer = new ToolTimer();
      messages.push(new HumanMessage(request.task));
      await save();
      try {
        for (let step = 1; step <= maxSteps; step++) {
          // THINK
          emit({ type: "step", step });
          const onToken = { handleLLMNewToken: (token: string) => token && emit({ type: "token", step, text: token }) };
          const { message, usage, compaction } = await takeModelTurn(
            bound,
            {
              systemPrompt: options.systemPrompt(),
              history: messages,
              contextTokens: options.contextTokens,
              workspace: options.workspace,
              summaryModel: options.model,
              modelName: options.modelName,
              prices: options.prices,
              onCompaction: ({ tokensBefore, tokensAfter, summarised }) =>
                emit({ type: "compaction", step, tokensBefore, tokensAfter, summarised }),
              onProviderNote: (note) => emit(providerNoteEvent(note, step)),
              tools: options.tools,
            },
            { signal, callbacks: withParentCallbacks(request.callbacks, [onToken]) },
          );
          // Compacted: the summary and the recent turns replace the saved conversation.
          if (compaction) messages.splice(0, messages.length, ...compaction.history);
          messages.push(message);
          await save();
          emit({ type: "usage", step, usage });
          const calls = message.tool_calls ?? [];
          if (calls.length === 0) {
            emit({ type: "final", text: messageText(message) });
            return tally.finish("done");
          }
          // The loop guard: a fifth identical turn in a row is not run, and the run ends here.
          const guard = checkRepeats(messages);
          if (guard.action === "stop") {
            emit({ type: "loop_guard", step, action: "stop", tool: guard.call?.name ?? "", repeats: guard.repeats, message: loopStopMessage(guard) });
            for (const call of calls) emit({ type: "tool_call", step, id: call.id!, name: call.name, args: call.args });
            const stopped = loopStopResults(message, guard);
            messages.push(...stopped);
            await save();
            emitResults(stopped, step, emit, timer);
            return tally.finish("loop_guard");
          }
          for (const call of calls) emit({ type: "tool_call", step, id: call.id!, name: call.name, args: call.args });

          // ACT: answer malformed and unknown calls, ask where needed, run the rest concurrently.
          const answered: ToolMessage[] = [...invalidCallResults(message), ...unknownToolResults(message, toolNames)];
          const skip = new Set(answered.map((m) => m.tool_call_id));
          for (const call of calls) {
            if (skip.has(call.id!)) continue;
            const decision = await classifyCall(call, mode, thread.alwaysAllow, { workspace: options.workspace });
            if (decision.action === "run") continue;
            if (decision.action === "deny") {
              // Denied by the project rules: refused without asking.
              answered.push(notRunResult(call, refusedMessage(call.name, decision.reason!)));
              skip.add(call.id!);
              continue;
            }
            const preview = await previewToolCall(options.tools, call, request.threadId);
            const approvalRequest = { toolCallId: call.id!, tool: call.name, args: call.args, reason: decision.reason!, ...approvalScope(decision), ...(preview ? { preview } : {}) };
            const response = await request.approver(approvalRequest);
            emit({ type: "approval", request: approvalRequest, response });
            if (signal?.aborted) throw new Error("aborted");
            if ((response.decision === "always" || response.decision === "always-project") && !decision.alwaysAsks) thread.alwaysAllow.push(...decision.alwaysKeys);
            if (response.decision === "deny") {
              answered.push(notRunResult(call, deniedMessage(call.name, response, { reason: decision.reason, alwaysAsks: decision.alwaysAsks, mode })));
              skip.add(call.id!);
            }
          }
          emitResults(answered, step, emit, timer);
          const runnable = calls.filter((c) => !skip.has(c.id!));
          let results = await Promise.all(runnable.map((c) => invokeTool(toolsByName.get(c.name)!, c, signal, timer, request.threadId, request.callbacks)));
          if (signal?.aborted) throw new Error("aborted");
          // The loop guard: from the third identical turn in a row, the model is told it is repeating itself.
          if (guard.action === "note" && results.length > 0) {
            emit({ type: "loop_guard", step, action: "note", tool: guard.call?.name ?? "", repeats: guard.repeats, message: loopNote(guard) });
            results = withLoopNote(results, guard);
          }
          emitResults(results, step, emit, timer);

          // OBSERVE: results in the order of the calls, as the graph's ToolNode leaves them.
          const byId = new Map([...answered, ...results].map((m) => [m.tool_call_id, m]));
          for (const call of calls) messages.push(byId.get(call.id!)!);
          await save();
        }
        return tally.finish("max_steps");
      } catch (err) {
        if (signal?.aborted) {
          messages.push(...interruptionMessages(messages));
          await save();
          return tally.finish("interrupted");
        }
        emit({ type: "error", message: describeModelError(err, options.modelSettings), stack: (err as Error)?.stack });
        return tally.finish("error");
      }
    },
  };
}
