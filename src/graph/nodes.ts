import { RemoveMessage } from "@langchain/core/messages";
import { interrupt, REMOVE_ALL_MESSAGES, type LangGraphRunnableConfig } from "@langchain/langgraph";
import { checkRepeats, loopGuardReport, loopStopResults } from "../policy/loop-guard.js";
import { compactBeforeTurn, takeModelTurn } from "../agent/model-turn.js";
import { boundModel, type AgentRuntime } from "../agent/runtime.js";
import { lastAIMessage, stepsSinceLastRequest } from "../agent/turn.js";
import { syncWorkspaceToCheckpoint } from "../agent/snapshot-step.js";
import { modelTurnInput, summaryInput } from "../agent/turn-inputs.js";
import { reviewTurn, runToolStep } from "../agent/tool-step.js";
import { providerNoteEvent } from "../provider/events.js";
import { withCallbacks } from "../agent/trace-parent.js";
import { threadOf } from "../tools/read-tracker.js";
import { runOption, type RuntimeSource } from "./run-config.js";
import type { NodeSignal } from "./node-signals.js";
import type { AgentStateType, AgentStateUpdate } from "./state.js";

/**
 * The graph's nodes, one behaviour each (graph.ts wires them):
 *   start_step    starts a step (the `step` event) with no stop reason yet
 *   restore_files gives back a resumed earlier checkpoint's files (time travel)
 *   summarise     summarises older turns near the context budget
 *   agent      one model turn
 *   guard      the loop guard's stop: the repeated calls get "not run" results, the run ends
 *   approve    asks (interrupt) about the calls that need a person; declined calls get results,
 *              edited calls their arguments (state.edits)
 *   tools      snapshots the workspace around file-changing calls, runs the calls that have no
 *              result yet, adds the loop guard's note, keeps the write_todos list
 * The approve and tools halves are agent/tool-step.ts, the turn's inputs agent/turn-inputs.ts:
 * the loop engine runs the same functions.
 *   step_limit records that the run used its steps
 */

type Signal = (signal: NodeSignal) => void;
const signalOf =
  (config: LangGraphRunnableConfig): Signal =>
  (signal) =>
    config.writer?.(signal);

/** A line for the trace (a `notice` event). */
const noticeOf = (config: LangGraphRunnableConfig, step: number) => (message: string) =>
  signalOf(config)({ kind: "provider", event: { type: "notice", step, message } });

/** What the snapshot hooks need from a node: the workspace, the thread, the conversation, a way to tell the trace. */
function snapshotContext(runtime: AgentRuntime, state: AgentStateType, config: LangGraphRunnableConfig, step: number) {
  return {
    workspace: runtime.workspace ?? process.cwd(),
    threadId: threadOf(config) ?? "",
    messages: state.messages,
    notice: noticeOf(config, step),
  };
}

export function createNodes(source: RuntimeSource) {
  return {
    /** Starts a step: the `step` event, and no stop reason yet (a resumed thread may carry the last run's). */
    start_step(state: AgentStateType, config: LangGraphRunnableConfig): AgentStateUpdate {
      signalOf(config)({ kind: "step", step: stepsSinceLastRequest(state.messages) + 1 });
      return { stopReason: null, edits: {} };
    },

    /** Time travel (issue 21): a run resumed from an earlier checkpoint first gets that checkpoint's files back. */
    async restore_files(state: AgentStateType, config: LangGraphRunnableConfig): Promise<AgentStateUpdate> {
      const { runtime } = source(config);
      // A sub-agent never travels: its parent's checkpoints hold the thread's files (graph/subagent.ts).
      if (runtime.subagent) return { restoredFiles: [], keptFiles: [] };
      const step = stepsSinceLastRequest(state.messages) + 1;
      const travel = await syncWorkspaceToCheckpoint({
        ...snapshotContext(runtime, state, config, step),
        snapshots: state.snapshots,
      });
      // In state, so Studio's view of this node shows which files came back, and which of this
      // thread's files it kept because another thread or the person changed them since (the trace's notice says both).
      return { restoredFiles: travel?.restored ?? [], keptFiles: travel?.kept ?? [] };
    },

    /** Near the context budget, summarises older turns (the `compaction` event); otherwise changes nothing. */
    async summarise(state: AgentStateType, config: LangGraphRunnableConfig): Promise<AgentStateUpdate> {
      const { runtime } = source(config);
      const step = stepsSinceLastRequest(state.messages) + 1;
      const mode = runOption(source(config).config, "approval", runtime.approval);
      const done = await compactBeforeTurn(summaryInput(runtime, mode, state.messages, noticeOf(config, step)), config);
      if (!done) return {};
      const { tokensBefore, tokensAfter, summarised, history } = done.compaction;
      signalOf(config)({ kind: "compaction", step, tokensBefore, tokensAfter, summarised, usage: done.usage });
      // The saved conversation becomes the compacted one: clear it, then add it back.
      return { messages: [new RemoveMessage({ id: REMOVE_ALL_MESSAGES }), ...history] };
    },

    async agent(state: AgentStateType, config: LangGraphRunnableConfig): Promise<AgentStateUpdate> {
      const { runtime } = source(config);
      const signal = signalOf(config);
      const step = stepsSinceLastRequest(state.messages) + 1;
      const mode = runOption(source(config).config, "approval", runtime.approval);
      const tokens = runOption(source(config).config, "tokens", false);
      const onToken = { handleLLMNewToken: (text: string) => text && signal({ kind: "token", step, text }) };
      const { message, usage } = await takeModelTurn(
        boundModel(runtime),
        modelTurnInput(runtime, mode, state.messages, (note) =>
          signal({ kind: "provider", event: providerNoteEvent(note, step) }),
        ),
        tokens ? withCallbacks(config, [onToken]) : config,
      );
      signal({ kind: "usage", step, ...usage });
      // An answer without tool calls ends the run (routeAfterAgent).
      return { messages: [message], ...(message.tool_calls?.length ? {} : { stopReason: "done" as const }) };
    },

    guard(state: AgentStateType, config: LangGraphRunnableConfig): AgentStateUpdate {
      const last = lastAIMessage(state.messages)!;
      const check = checkRepeats(state.messages);
      const step = stepsSinceLastRequest(state.messages);
      signalOf(config)({ kind: "loop_guard", ...loopGuardReport(check, step, "stop") });
      return { messages: loopStopResults(last, check), stopReason: "loop_guard" };
    },

    async approve(state: AgentStateType, config: LangGraphRunnableConfig): Promise<AgentStateUpdate> {
      const { runtime, config: run } = source(config);
      const last = lastAIMessage(state.messages);
      if (!last) return {};
      // Under Studio an approval needs this interrupt's one-time code (studio-secret.ts).
      const codes = runtime.studioApprovals?.session(threadOf(config) ?? "");
      const { declined, alwaysAdded, edits } = await reviewTurn({
        runtime,
        message: last,
        mode: runOption(run, "approval", runtime.approval),
        always: state.alwaysAllow,
        threadId: threadOf(config),
        // Pauses the run; the answer arrives with the resume (Command({ resume })).
        ask: (request) => (codes ? codes.ask(request) : interrupt(request)),
      });
      codes?.settle();
      return { messages: declined, alwaysAllow: alwaysAdded, edits };
    },

    async tools(state: AgentStateType, config: LangGraphRunnableConfig): Promise<AgentStateUpdate> {
      const { runtime } = source(config);
      const last = lastAIMessage(state.messages);
      if (!last) return {};
      const step = stepsSinceLastRequest(state.messages);
      const threadId = threadOf(config) ?? "";
      const { results, snapshots, todos, loopNote } = await runToolStep({
        runtime,
        message: last,
        messages: state.messages,
        threadId,
        timeTravelThread: threadId,
        // A sub-agent's steps record the thread's files but never travel (its parent's restore_files does).
        snapshots: runtime.subagent ? undefined : state.snapshots,
        step,
        // Each call runs in this node's config: its cancellation, callbacks (the trace, the timer) and thread.
        configFor: () => config,
        notice: noticeOf(config, step),
        edits: state.edits,
      });
      if (loopNote) signalOf(config)({ kind: "loop_guard", ...loopNote });
      // The one place the graph's todo list changes: a successful write_todos result carries it.
      return todos ? { messages: results, snapshots, todos } : { messages: results, snapshots };
    },

    step_limit(): AgentStateUpdate {
      return { stopReason: "max_steps" };
    },
  };
}

export type GraphNodes = ReturnType<typeof createNodes>;
