import { HumanMessage, ToolMessage, type AIMessage, type BaseMessage } from "@langchain/core/messages";
import type { CallbackManager } from "@langchain/core/callbacks/manager";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { createRunTally, type Engine, type RunMeta, type RunRequest, type RunSummary } from "../agent/engine.js";
import type { EventSink } from "../agent/events.js";
import { describeModelError, type ModelSettings } from "../models/model.js";
import { stateAbort } from "../memory/state-errors.js";
import { checkRepeats, loopGuardReport, loopStopResults, withLoopNote } from "../policy/loop-guard.js";
import { addUsage, compactBeforeTurn, takeModelTurn } from "../agent/model-turn.js";
import { reviewToolCalls } from "../policy/review.js";
import { boundModel, type AgentRuntime } from "../agent/runtime.js";
import { todosFromResults } from "../tools/todos.js";
import { withRequestNote } from "../policy/plan-mode.js";
import { mergeSnapshots, snapshotBeforeTools } from "../agent/snapshot-step.js";
import { accessOf, runScheduled } from "../agent/tool-schedule.js";
import { journalEnded, journalStarted } from "../agent/tool-journal-step.js";
import { recoverInterruptedCalls } from "../agent/crash-recovery.js";
import { randomUUID } from "node:crypto";
import { providerNoteEvent } from "../provider/events.js";
import { ToolTimer, toolResultEvent } from "../agent/timing.js";
import { interruptionMessages, messageText, unrunnableCallResults } from "../agent/turn.js";
import { withParentCallbacks } from "../agent/trace-parent.js";
import { loadLoopThread, saveLoopThread, type LoopMemory } from "../memory/loop-threads.js";

/**
 * The hand-rolled ReAct loop of the seed article — think, act on every tool call, observe,
 * repeat up to the step limit — with the same runtime (model, tools, prompt, limits), approval
 * decision and events as the graph, so the two can be compared honestly.
 */

export interface LoopOptions {
  runtime: AgentRuntime;
  meta: RunMeta;
  modelSettings: ModelSettings;
  /** Where threads live; defaults to JSON files in the workspace's state folder; PostgreSQL or memory (tests) otherwise. */
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
  const { runtime } = options;
  const memory = options.memory ?? fileMemory(runtime.workspace);
  const bound = boundModel(runtime);
  const toolsByName = new Map(runtime.tools.map((t) => [t.name, t]));

  return {
    name: "loop",
    async run(request: RunRequest): Promise<RunSummary> {
      // The mode in force, so the tally knows a plan-mode run (its refusals are no failure).
      const tally = createRunTally(options.meta, { ...request, approval: request.approval ?? runtime.approval });
      const { emit } = tally;
      const signal = request.signal;
      const maxSteps = request.maxSteps ?? runtime.maxSteps;
      const mode = request.approval ?? runtime.approval;
      const thread = await memory.load(request.threadId);
      const messages: BaseMessage[] = thread.messages;
      const save = async () =>
        memory.save(request.threadId, {
          messages,
          alwaysAllow: thread.alwaysAllow,
          snapshots: thread.snapshots,
          todos: thread.todos ?? [],
        });
      const timer = new ToolTimer();
      // A run killed mid-step left calls without results: closed first, as the journal says.
      const recovered = await recoverInterruptedCalls({
        journal: runtime.journal,
        threadId: request.threadId,
        workspace: runtime.workspace,
        messages,
        timeTravelThread: "",
      });
      if (recovered.note) emit({ type: "notice", step: 0, message: recovered.note });
      messages.push(...recovered.results);
      thread.snapshots = mergeSnapshots(thread.snapshots ?? {}, recovered.snapshots);
      // An id names the request, as the graph's reducer gives one: snapshots are kept per request.
      messages.push(new HumanMessage({ content: withRequestNote(request.task, request.note), id: randomUUID() }));
      await save();
      try {
        for (let step = 1; step <= maxSteps; step++) {
          // THINK
          emit({ type: "step", step });
          const onToken = { handleLLMNewToken: (token: string) => token && emit({ type: "token", step, text: token }) };
          const systemPrompt = runtime.systemPrompt(mode);
          const compacted = await compactBeforeTurn(
            {
              systemPrompt,
              history: messages,
              contextTokens: runtime.contextTokens,
              summaryModel: runtime.model,
              modelName: runtime.modelName,
              prices: runtime.prices,
              tools: runtime.tools,
              onNotice: (message) => emit({ type: "notice", step, message }),
            },
            { signal, callbacks: withParentCallbacks(request.callbacks, []) },
          );
          if (compacted) {
            const { tokensBefore, tokensAfter, summarised, history } = compacted.compaction;
            emit({ type: "compaction", step, tokensBefore, tokensAfter, summarised });
            // Compacted: the summary and the recent turns replace the saved conversation.
            messages.splice(0, messages.length, ...history);
          }
          const turn = await takeModelTurn(
            bound,
            {
              systemPrompt,
              history: messages,
              contextTokens: runtime.contextTokens,
              workspace: runtime.workspace,
              modelName: runtime.modelName,
              prices: runtime.prices,
              onProviderNote: (note) => emit(providerNoteEvent(note, step)),
              tools: runtime.tools,
            },
            { signal, callbacks: withParentCallbacks(request.callbacks, [onToken]) },
          );
          const { message } = turn;
          messages.push(message);
          await save();
          emit({ type: "usage", step, usage: compacted ? addUsage(turn.usage, compacted.usage) : turn.usage });
          const calls = message.tool_calls ?? [];
          if (calls.length === 0) {
            emit({ type: "final", text: messageText(message) });
            return tally.finish("done");
          }
          // The loop guard: a fifth identical turn in a row is not run, and the run ends here.
          const guard = checkRepeats(messages);
          if (guard.action === "stop") {
            emit({ type: "loop_guard", ...loopGuardReport(guard, step, "stop") });
            for (const call of calls) emit({ type: "tool_call", step, id: call.id!, name: call.name, args: call.args });
            const stopped = loopStopResults(message, guard);
            messages.push(...stopped);
            await save();
            emitResults(stopped, step, emit, timer);
            return tally.finish("loop_guard");
          }
          for (const call of calls) emit({ type: "tool_call", step, id: call.id!, name: call.name, args: call.args });

          // ACT: answer malformed and unknown calls, ask where needed, run the rest (at once where they touch different paths).
          const answered: ToolMessage[] = unrunnableCallResults(message, runtime.tools);
          const review = await reviewToolCalls({
            calls,
            answered: new Set(answered.map((m) => m.tool_call_id)),
            mode,
            always: thread.alwaysAllow,
            workspace: runtime.workspace,
            tools: runtime.tools,
            threadId: request.threadId,
            configFiles: runtime.configFiles,
            ask: async (approvalRequest) => {
              const response = await request.approver(approvalRequest);
              emit({ type: "approval", request: approvalRequest, response });
              if (signal?.aborted) throw new Error("aborted");
              return response;
            },
          });
          thread.alwaysAllow.push(...review.alwaysAdded);
          answered.push(...review.declined);
          const skip = new Set(answered.map((m) => m.tool_call_id));
          emitResults(answered, step, emit, timer);
          const runnable = calls.filter((c) => !skip.has(c.id!));
          // Issue 21: the workspace is snapshotted around the tools, for /undo.
          const notice = (text: string) => emit({ type: "notice", step, message: text });
          // No thread id: the loop's threads never travel in time, so they keep no ref (their ids may equal a graph thread's).
          const snapshot = await snapshotBeforeTools({
            workspace: runtime.workspace,
            threadId: "",
            messages,
            calls: runnable,
            tools: runtime.tools,
            notice,
          });
          // The write-ahead journal: the calls are on disk as started before they run, each result as it ends.
          await journalStarted({
            journal: runtime.journal,
            threadId: request.threadId,
            messages,
            calls: runnable,
            before: snapshot.before,
          });
          // Calls on the same path run in the model's order, the others at once (agent/tool-schedule.ts).
          let results = await runScheduled(
            runnable,
            (c) => accessOf(c, runtime.tools, runtime.workspace),
            async (c) => {
              const result = await invokeTool(
                toolsByName.get(c.name)!,
                c,
                signal,
                timer,
                request.threadId,
                request.callbacks,
              );
              await journalEnded(runtime.journal, request.threadId, [result]);
              return result;
            },
          );
          thread.snapshots = mergeSnapshots(thread.snapshots ?? {}, await snapshot.finish());
          if (signal?.aborted) throw new Error("aborted");
          // The loop guard: from the third identical turn in a row, the model is told it is repeating itself.
          if (guard.action === "note" && results.length > 0) {
            emit({ type: "loop_guard", ...loopGuardReport(guard, step, "note") });
            results = withLoopNote(results, guard);
          }
          emitResults(results, step, emit, timer);

          // OBSERVE: results in the order of the calls, as the graph's ToolNode leaves them.
          const byId = new Map([...answered, ...results].map((m) => [m.tool_call_id, m]));
          for (const call of calls) messages.push(byId.get(call.id!)!);
          // The one place the loop's todo list changes, as the graph's tools node does it.
          const todos = todosFromResults(results);
          if (todos) {
            thread.todos = todos;
            emit({ type: "todos", step, todos });
          }
          await save();
        }
        return tally.finish("max_steps");
      } catch (err) {
        const failed = stateAbort(signal);
        if (signal?.aborted && !failed) {
          messages.push(...interruptionMessages(messages));
          await save();
          return tally.finish("interrupted");
        }
        const cause = (failed ?? err) as Error;
        emit({ type: "error", message: describeModelError(cause, options.modelSettings), stack: cause?.stack });
        return tally.finish("error");
      }
    },
  };
}
