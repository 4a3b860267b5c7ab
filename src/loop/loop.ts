import type { ToolMessage, BaseMessage } from "@langchain/core/messages";
import { createRunTally, type Engine, type RunMeta, type RunRequest, type RunSummary } from "../agent/engine.js";
import { describeModelError, type ModelSettings } from "../models/model.js";
import { stateAbort } from "../memory/state-errors.js";
import { checkRepeats, loopGuardReport, loopStopResults } from "../guard/repeats.js";
import { addUsage, compactBeforeTurn, takeModelTurn } from "../agent/model-turn.js";
import { boundModel, type AgentRuntime } from "../agent/runtime.js";
import { currentRequest, mergeSnapshots, type WorkspaceSnapshots } from "../agent/snapshot-step.js";
import { runLoopTaskCalls } from "./subagents.js";
import { latestWorkspaceSnapshot } from "../agent/subagents.js";
import { dispatchCalls } from "../agent/dispatch.js";
import { guardedTools } from "../agent/guards.js";
import { turnOf } from "../agent/tool-journal-step.js";
import { resultOf } from "../guard/guard.js";
import { linkedAbort } from "../provider/linked-abort.js";
import { HOOK_STOP, hookStopResults } from "../guard/hooks.js";
import { conversationOf } from "../tools/read-tracker.js";
import type { EventSignal } from "../contracts/events.js";
import type { Todo } from "../contracts/tools.js";
import { cancelledTurn, recoverInterruptedCalls, type StopCause } from "../agent/crash-recovery.js";
import { modelTurnInput, requestMessage, summaryInput } from "../agent/turn-inputs.js";
import { reviewTurn } from "../agent/dispatch.js";
import { providerNoteEvent } from "../provider/events.js";
import { ToolTimer, toolResultEvent } from "../agent/timing.js";
import { messageText } from "../agent/turn.js";
import { tokenHandler, withParentCallbacks } from "../agent/trace-parent.js";
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

export function createLoopEngine(options: LoopOptions): Engine {
  const { runtime } = options;
  const memory = options.memory ?? fileMemory(runtime.workspace);
  const bound = boundModel(runtime);
  const tools = new Map(guardedTools(runtime).map((t) => [t.name, t]));

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
      /** Results join the conversation and the trace. */
      const observe = (results: ToolMessage[], step: number) => {
        messages.push(...results);
        for (const result of results) emit(toolResultEvent(result, step, timer));
      };
      // What the calls run with: the thread (and a sub-agent's conversation in it), and no time
      // travel: the loop's threads keep no snapshot ref (their ids may equal a graph thread's).
      const callsConfigurable = {
        thread_id: request.threadId,
        timeTravel: false,
        // The mode in force, for the hooks' `permission_mode` and the judging of a call a hook changed.
        approval: mode,
        ...(request.conversation ? { conversation: request.conversation } : {}),
      };
      const keep = (snapshots: WorkspaceSnapshots) => {
        thread.snapshots = mergeSnapshots(thread.snapshots ?? {}, snapshots);
      };
      const recover = (cause?: StopCause) =>
        recoverInterruptedCalls({
          journal: runtime.journal,
          threadId: request.threadId,
          workspace: runtime.workspace,
          messages,
          timeTravelThread: "",
          cause,
        });
      // A run killed mid-step left calls without results: closed first, as the journal says.
      const recovered = await recover();
      if (recovered.note) emit({ type: "notice", step: 0, message: recovered.note });
      messages.push(...recovered.results);
      keep(recovered.snapshots);
      // An id names the request, as the graph's reducer gives one: snapshots are kept per request.
      messages.push(requestMessage(request.task, request.note));
      await save();
      try {
        for (let step = 1; step <= maxSteps; step++) {
          // THINK
          emit({ type: "step", step });
          const onToken = tokenHandler((token) => token && emit({ type: "token", step, text: token }));
          const compacted = await compactBeforeTurn(
            summaryInput(runtime, mode, messages, (message) => emit({ type: "notice", step, message })),
            {
              signal,
              callbacks: withParentCallbacks(request.callbacks, []),
              // The thread, as the graph's config names it: the PreCompact hooks' session_id.
              configurable: { thread_id: request.threadId },
            },
          );
          if (compacted) {
            const { tokensBefore, tokensAfter, summarised, history } = compacted.compaction;
            emit({ type: "compaction", step, tokensBefore, tokensAfter, summarised });
            // Compacted: the summary and the recent turns replace the saved conversation.
            messages.splice(0, messages.length, ...history);
          }
          const turn = await takeModelTurn(
            bound,
            modelTurnInput(runtime, mode, messages, (note) => emit(providerNoteEvent(note, step))),
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
          if (guard.action === "stop") emit({ type: "loop_guard", ...loopGuardReport(guard, step, "stop") });
          for (const call of calls) emit({ type: "tool_call", step, id: call.id!, name: call.name, args: call.args });
          if (guard.action === "stop") {
            const stopped = loopStopResults(message, guard);
            observe(stopped, step);
            await save();
            return tally.finish("loop_guard");
          }

          // ACT. Approval as the graph's approve node decides it (agent/review-turn.ts): calls that
          // cannot run and those declined get their results; the person's edits are kept.
          const review = await reviewTurn({
            runtime,
            message,
            mode,
            always: thread.alwaysAllow,
            conversation: conversationOf({ configurable: callsConfigurable }),
            // The loop's approver is the front end in this process (the terminal prompt): no
            // outside party answers here, so Studio's one-time code has nothing to check.
            ask: async (approvalRequest) => {
              const response = await request.approver(approvalRequest);
              emit({ type: "approval", request: approvalRequest, response });
              if (signal?.aborted) throw new Error("aborted");
              return response;
            },
          });
          thread.alwaysAllow.push(...review.alwaysAdded);
          observe(review.results, step);
          await save();
          // Every call at once, each inside its guards: the same guarded tools the graph's ToolNode
          // runs (order, snapshots, hooks, journal, notes). What ToolNode does for the graph is
          // written here: the parallel run, the results in the model's order, and the state each
          // call leaves applied to the thread (a thrown error is the call's result in the guard).
          // A throw ends the run (a stop, the journal's disk full): as LangGraph's runner does, the
          // turn's other calls are stopped and waited for before the run ends.
          const turnStop = linkedAbort([signal]);
          let firstFailure: { reason: unknown } | undefined;
          const settled = await Promise.allSettled(
            dispatchCalls(runtime, messages, review.calls, message.tool_calls ?? [])
              .map(async ({ call, dispatch }) =>
                resultOf(
                  await tools.get(call.name)!.invoke(
                    { ...call, type: "tool_call" },
                    {
                      signal: turnStop.signal,
                      callbacks: withParentCallbacks(request.callbacks, [timer]),
                      // The thread id, as the graph passes it: edit_file checks the file was read in this conversation.
                      configurable: callsConfigurable,
                      state: dispatch,
                      writer: (chunk: unknown) => {
                        const sent = chunk as EventSignal;
                        if (sent?.kind === "event") emit(sent.event);
                      },
                    },
                  ),
                ),
              )
              .map((running) =>
                running.catch((err: unknown) => {
                  firstFailure ??= { reason: err };
                  turnStop.abort(err);
                  throw err;
                }),
              ),
          );
          turnStop.dispose();
          if (firstFailure) throw firstFailure.reason;
          if (signal?.aborted) throw new Error("aborted");
          const outputs = settled.map((s) => (s as PromiseFulfilledResult<ReturnType<typeof resultOf>>).value);
          const results = outputs.map((o) => o.result);
          // OBSERVE.
          observe(results, step);
          for (const { update } of outputs) {
            if (update.snapshots) keep(update.snapshots as WorkspaceSnapshots);
            if (update.todos) thread.todos = update.todos as Todo[];
          }
          // The one place the loop's todo list changes, as the graph's reducer does it.
          if (outputs.some((o) => o.update.todos)) emit({ type: "todos", step, todos: thread.todos ?? [] });
          // A hook answered `continue: false` around a call: the run ends here, its task calls unstarted (as step_done).
          if (outputs.some((o) => o.update.stopReason === HOOK_STOP)) {
            observe(hookStopResults(review.tasks), step);
            await save();
            return tally.finish(HOOK_STOP);
          }
          // The turn's task calls, after its other calls as in the graph: each a sub-agent, all at once.
          if (review.tasks.length > 0) {
            await save();
            const tasks = await runLoopTaskCalls({
              runtime,
              calls: review.tasks,
              createEngine: (sub, memory) => createLoopEngine({ ...options, runtime: sub, memory }),
              threadId: request.threadId,
              turn: turnOf(messages),
              mode,
              maxSteps,
              approver: request.approver,
              emit,
              signal,
              callbacks: request.callbacks,
            });
            keep(tasks.snapshots);
            // As the graph's step_done: the request's entry ends at the files as the sub-agents left them.
            if (Object.keys(tasks.snapshots).length > 0)
              keep(await latestWorkspaceSnapshot(runtime, currentRequest(messages), thread.snapshots ?? {}));
            observe(tasks.results, step);
            if (tasks.stop) {
              await save();
              return tally.finish(HOOK_STOP);
            }
          }
          await save();
        }
        return tally.finish("max_steps");
      } catch (err) {
        const failed = stateAbort(signal);
        if (signal?.aborted && !failed) {
          // Closed from the journal where it knows more: a finished call's result, what a cut-off sub-agent changed.
          const known = await recover("cancelled").catch(() => ({ results: [], snapshots: {} }));
          messages.push(...cancelledTurn(messages, known));
          keep(known.snapshots);
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
