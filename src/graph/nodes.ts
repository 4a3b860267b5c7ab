import { RemoveMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { interrupt, REMOVE_ALL_MESSAGES, type LangGraphRunnableConfig } from "@langchain/langgraph";
import { ToolNode } from "@langchain/langgraph/prebuilt";
import { checkRepeats, loopGuardReport, loopStopResults, withLoopNote } from "../policy/loop-guard.js";
import { compactBeforeTurn, takeModelTurn } from "../agent/model-turn.js";
import { reviewToolCalls } from "../policy/review.js";
import { boundModel, type AgentRuntime } from "../agent/runtime.js";
import { lastAIMessage, stepsSinceLastRequest, unrunnableCallResults } from "../agent/turn.js";
import { snapshotBeforeTools, syncWorkspaceToCheckpoint } from "../agent/snapshot-step.js";
import { accessOf, runScheduled } from "../agent/tool-schedule.js";
import { journalEnded, journalStarted } from "../agent/tool-journal-step.js";
import { todosFromResults } from "../tools/todos.js";
import { providerNoteEvent } from "../provider/events.js";
import { threadOf } from "../tools/read-tracker.js";
import { runOption, type RuntimeSource } from "./run-config.js";
import type { NodeSignal } from "./node-signals.js";
import type { AgentStateType, AgentStateUpdate } from "./state.js";
import { normalizeResponse } from "./studio-secret.js";

/**
 * The graph's nodes, one behaviour each (graph.ts wires them):
 *   start_step    starts a step (the `step` event) with no stop reason yet
 *   restore_files gives back a resumed earlier checkpoint's files (time travel)
 *   summarise     summarises older turns near the context budget
 *   agent      one model turn
 *   guard      the loop guard's stop: the repeated calls get "not run" results, the run ends
 *   approve    asks (interrupt) about the calls that need a person; declined calls get results
 *   tools      snapshots the workspace around file-changing calls, runs the calls that have no
 *              result yet (ToolNode), adds the loop guard's note, keeps the write_todos list
 *   step_limit records that the run used its steps
 */

type Signal = (signal: NodeSignal) => void;
const signalOf =
  (config: LangGraphRunnableConfig): Signal =>
  (signal) =>
    config.writer?.(signal);

/** What the snapshot hooks need from a node: the workspace, the thread, the conversation, a way to tell the trace. */
function snapshotContext(runtime: AgentRuntime, state: AgentStateType, config: LangGraphRunnableConfig, step: number) {
  return {
    workspace: runtime.workspace ?? process.cwd(),
    threadId: threadOf(config) ?? "",
    messages: state.messages,
    notice: (message: string) => signalOf(config)({ kind: "provider", event: { type: "notice", step, message } }),
  };
}

export function createNodes(source: RuntimeSource) {
  const toolNodes = new WeakMap<AgentRuntime, ToolNode>();
  const toolNodeFor = (runtime: AgentRuntime) => {
    let node = toolNodes.get(runtime);
    if (!node) toolNodes.set(runtime, (node = new ToolNode(runtime.tools, { handleToolErrors: true })));
    return node;
  };

  return {
    /** Starts a step: the `step` event, and no stop reason yet (a resumed thread may carry the last run's). */
    start_step(state: AgentStateType, config: LangGraphRunnableConfig): AgentStateUpdate {
      signalOf(config)({ kind: "step", step: stepsSinceLastRequest(state.messages) + 1 });
      return { stopReason: null };
    },

    /** Time travel (issue 21): a run resumed from an earlier checkpoint first gets that checkpoint's files back. */
    async restore_files(state: AgentStateType, config: LangGraphRunnableConfig): Promise<AgentStateUpdate> {
      const { runtime } = source(config);
      const step = stepsSinceLastRequest(state.messages) + 1;
      await syncWorkspaceToCheckpoint({ ...snapshotContext(runtime, state, config, step), snapshots: state.snapshots });
      return {};
    },

    /** Near the context budget, summarises older turns (the `compaction` event); otherwise changes nothing. */
    async summarise(state: AgentStateType, config: LangGraphRunnableConfig): Promise<AgentStateUpdate> {
      const { runtime } = source(config);
      const step = stepsSinceLastRequest(state.messages) + 1;
      const done = await compactBeforeTurn(
        {
          systemPrompt: runtime.systemPrompt(runOption(source(config).config, "approval", runtime.approval)),
          history: state.messages,
          contextTokens: runtime.contextTokens,
          summaryModel: runtime.model,
          modelName: runtime.modelName,
          prices: runtime.prices,
          tools: runtime.tools,
          onNotice: (message) => signalOf(config)({ kind: "provider", event: { type: "notice", step, message } }),
        },
        config,
      );
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
      const { message, usage } = await takeModelTurn(
        boundModel(runtime),
        {
          systemPrompt: runtime.systemPrompt(runOption(source(config).config, "approval", runtime.approval)),
          history: state.messages,
          contextTokens: runtime.contextTokens,
          workspace: runtime.workspace,
          modelName: runtime.modelName,
          prices: runtime.prices,
          onProviderNote: (note) => signal({ kind: "provider", event: providerNoteEvent(note, step) }),
          tools: runtime.tools,
        },
        config,
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
      const { declined, alwaysAdded } = await reviewToolCalls({
        calls: last.tool_calls ?? [],
        answered: new Set(unrunnableCallResults(last, runtime.tools).map((m) => m.tool_call_id)),
        mode: runOption(run, "approval", runtime.approval),
        always: state.alwaysAllow,
        workspace: runtime.workspace,
        tools: runtime.tools,
        threadId: threadOf(config),
        configFiles: runtime.configFiles,
        // Pauses the run; the answer arrives with the resume (Command({ resume })).
        ask: (request) => (codes ? codes.ask(request) : normalizeResponse(interrupt(request))),
      });
      codes?.settle();
      return { messages: declined, alwaysAllow: alwaysAdded };
    },

    async tools(state: AgentStateType, config: LangGraphRunnableConfig): Promise<AgentStateUpdate> {
      const { runtime } = source(config);
      const last = lastAIMessage(state.messages);
      const unrunnable = last ? unrunnableCallResults(last, runtime.tools) : [];
      // Issue 21: the workspace is snapshotted around the tools, for /undo and time travel.
      const snapshot = await snapshotBeforeTools({
        ...snapshotContext(runtime, state, config, stepsSinceLastRequest(state.messages)),
        calls: last?.tool_calls ?? [],
        tools: runtime.tools,
        snapshots: state.snapshots,
      });
      // ToolNode runs the calls that have no result yet (declined ones got theirs in approve), one
      // call per invocation, so calls on the same path run in the model's order (agent/tool-schedule.ts).
      const messages = [...state.messages, ...unrunnable];
      const answered = new Set(
        messages.flatMap((m) => (m.getType() === "tool" ? [(m as ToolMessage).tool_call_id] : [])),
      );
      const pending = (last?.tool_calls ?? []).filter((c) => !answered.has(c.id!));
      // The write-ahead journal: the calls are on disk as started before they run, and each
      // one's result as it ends (the step's checkpoint comes only after all of them).
      const threadId = threadOf(config) ?? "";
      const journal = runtime.journal;
      await journalStarted({ journal, threadId, messages: state.messages, calls: pending, before: snapshot.before });
      const node = toolNodeFor(runtime);
      const outputs = await runScheduled(
        pending,
        (call) => accessOf(call, runtime.tools, runtime.workspace),
        async (call) => {
          const out = (
            (await node.invoke({ ...state, messages, lg_tool_call: call }, config)) as { messages: BaseMessage[] }
          ).messages;
          await journalEnded(journal, threadId, out);
          return out;
        },
      );
      const snapshots = await snapshot.finish();
      let results = [...unrunnable, ...outputs.flat()];
      // The loop guard: from the third identical turn in a row, the model is told it is repeating itself.
      const check = checkRepeats(state.messages);
      if (check.action === "note" && results.every((m) => ToolMessage.isInstance(m))) {
        const step = stepsSinceLastRequest(state.messages);
        signalOf(config)({ kind: "loop_guard", ...loopGuardReport(check, step, "note") });
        results = withLoopNote(results as ToolMessage[], check);
      }
      // The one place the graph's todo list changes: a successful write_todos result carries it.
      const todos = todosFromResults(results);
      return todos ? { messages: results, snapshots, todos } : { messages: results, snapshots };
    },

    step_limit(): AgentStateUpdate {
      return { stopReason: "max_steps" };
    },
  };
}

export type GraphNodes = ReturnType<typeof createNodes>;
