import { AIMessage, RemoveMessage } from "@langchain/core/messages";
import { Command, END, interrupt, REMOVE_ALL_MESSAGES, type LangGraphRunnableConfig } from "@langchain/langgraph";
import { lastAIMessage, stepsSinceLastRequest } from "../contracts/conversation.js";
import { stricterApproval } from "../contracts/modes.js";
import { checkRepeats, loopGuardReport, loopStopResults } from "../guard/repeats.js";
import { HOOK_STOP, hookStopResults } from "../guard/hooks.js";
import { compactBeforeTurn, takeModelTurn } from "../agent/model-turn.js";
import { reviewTurn } from "../agent/dispatch.js";
import { boundModel, type AgentRuntime } from "../agent/runtime.js";
import { currentRequest, syncWorkspaceToCheckpoint } from "../agent/snapshot-step.js";
import { askedAs, latestThreadSnapshot, taskCalls } from "../agent/subagents.js";
import type { SubagentAsker } from "../contracts/events.js";
import { modelTurnInput, summaryInput } from "../agent/turn-inputs.js";
import { providerNoteEvent } from "../provider/events.js";
import { tokenHandler, withCallbacks } from "../agent/trace-parent.js";
import { conversationOf, threadOf } from "../tools/read-tracker.js";
import { dispatch, pendingCalls } from "./routing.js";
import { runOption, runSettings } from "./run-config.js";
import type { NodeSignal } from "./node-signals.js";
import type { AgentStateType, AgentStateUpdate } from "./state.js";

/**
 * The graph's own nodes, one behaviour each (graph.ts wires them with LangGraph's ToolNode, which
 * runs the calls):
 *   start_step    starts a step (the `step` event) with no stop reason yet
 *   restore_files gives back a resumed earlier checkpoint's files (time travel)
 *   summarise     summarises older turns near the context budget
 *   agent         one model turn
 *   repeat_stop   the loop guard's stop: the repeated calls get "not run" results, the run ends
 *   approve       answers the calls that cannot run, asks (interrupt) about those that need a
 *                 person, and sends the rest on: each call to the ToolNode, with the person's
 *                 arguments where they edited it, then the task calls to their sub-agents
 *   step_done     after a turn's calls: its sub-agents, else the next step (a hook's stop: the end)
 *   step_limit    records that the run used its steps
 */

type Signal = (signal: NodeSignal) => void;
/** The namespace of the graph a node runs in: its task's checkpoint namespace without the task itself. */
const graphNamespace = (config: LangGraphRunnableConfig): string =>
  String(config.configurable?.checkpoint_ns ?? "")
    .split("|")
    .slice(0, -1)
    .join("|");
const signalOf = (config: LangGraphRunnableConfig): Signal => {
  const at = graphNamespace(config);
  return (signal) => config.writer?.({ ...signal, at });
};

/** A line for the trace (a `notice` event). */
const noticeOf = (config: LangGraphRunnableConfig, step: number) => (message: string) =>
  signalOf(config)({ kind: "provider", event: { type: "notice", step, message } });

export function createNodes(runtime: AgentRuntime) {
  /**
   * Time travel (issue 21): a run resumed from an earlier checkpoint first gets that checkpoint's
   * files back. A sub-agent never travels: its parent's checkpoints hold the thread's files (graph/subagent.ts).
   */
  const travel = async (state: AgentStateType, config: LangGraphRunnableConfig, step: number) =>
    runtime.subagent
      ? undefined
      : syncWorkspaceToCheckpoint({
          workspace: runtime.workspace,
          threadId: threadOf(config) ?? "",
          messages: state.messages,
          notice: noticeOf(config, step),
          snapshots: state.snapshots,
        });
  return {
    /** Starts a step: the `step` event, and no stop reason yet (a resumed thread may carry the last run's). */
    start_step(state: AgentStateType, config: LangGraphRunnableConfig): AgentStateUpdate {
      signalOf(config)({ kind: "step", step: stepsSinceLastRequest(state.messages) + 1 });
      return { stopReason: null };
    },

    async restore_files(state: AgentStateType, config: LangGraphRunnableConfig): Promise<AgentStateUpdate> {
      const travelled = await travel(state, config, stepsSinceLastRequest(state.messages) + 1);
      // In state, so Studio's view of this node shows which files came back, and which of this
      // thread's files it kept because another thread or the person changed them since (the trace's notice says both).
      return { restoredFiles: travelled?.restored ?? [], keptFiles: travelled?.kept ?? [] };
    },

    /** Near the context budget, summarises older turns (the `compaction` event); otherwise changes nothing. */
    async summarise(state: AgentStateType, config: LangGraphRunnableConfig): Promise<AgentStateUpdate> {
      const step = stepsSinceLastRequest(state.messages) + 1;
      const { approval } = runSettings(runtime, config);
      const done = await compactBeforeTurn(
        summaryInput(runtime, approval, state.messages, noticeOf(config, step)),
        config,
      );
      if (!done) return {};
      const { tokensBefore, tokensAfter, summarised, history } = done.compaction;
      signalOf(config)({ kind: "compaction", step, tokensBefore, tokensAfter, summarised, usage: done.usage });
      // The saved conversation becomes the compacted one: clear it, then add it back.
      return { messages: [new RemoveMessage({ id: REMOVE_ALL_MESSAGES }), ...history] };
    },

    async agent(state: AgentStateType, config: LangGraphRunnableConfig): Promise<AgentStateUpdate> {
      const signal = signalOf(config);
      const step = stepsSinceLastRequest(state.messages) + 1;
      const { approval } = runSettings(runtime, config);
      const onToken = tokenHandler((text) => text && signal({ kind: "token", step, text }));
      const { message, usage } = await takeModelTurn(
        boundModel(runtime),
        modelTurnInput(runtime, approval, state.messages, (note) =>
          signal({ kind: "provider", event: providerNoteEvent(note, step) }),
        ),
        runOption(config, "tokens", false) ? withCallbacks(config, [onToken]) : config,
      );
      signal({ kind: "usage", step, ...usage });
      // An answer without tool calls ends the run (routeAfterAgent). Under Studio, where any local
      // process can resume a question, the mode is kept with the turn: approve judges its calls in it.
      return {
        messages: [message],
        ...(runtime.studioApprovals ? { turnApproval: approval } : {}),
        ...(message.tool_calls?.length ? {} : { stopReason: "done" as const }),
      };
    },

    repeat_stop(state: AgentStateType, config: LangGraphRunnableConfig): AgentStateUpdate {
      const last = lastAIMessage(state.messages)!;
      const check = checkRepeats(state.messages);
      const step = stepsSinceLastRequest(state.messages);
      signalOf(config)({ kind: "loop_guard", ...loopGuardReport(check, step, "stop") });
      return { messages: loopStopResults(last, check), stopReason: "loop_guard" };
    },

    async approve(state: AgentStateType, config: LangGraphRunnableConfig): Promise<Command> {
      const last = lastAIMessage(state.messages)!;
      const { approval, maxSteps } = runSettings(runtime, config);
      const threadId = threadOf(config) ?? "";
      // A run resumed at a question of an earlier checkpoint reaches this node without restore_files.
      await travel(state, config, stepsSinceLastRequest(state.messages));
      // Under Studio an approval needs this interrupt's one-time code (studio-secret.ts).
      const codes = runtime.studioApprovals?.session(threadId, conversationOf(config));
      const review = await reviewTurn({
        runtime,
        message: last,
        // A resume is judged in the mode its question was asked in: its own cannot loosen it.
        mode: state.turnApproval ? stricterApproval(state.turnApproval, approval) : approval,
        always: state.alwaysAllow,
        conversation: conversationOf(config),
        // Pauses the run; the answer arrives with the resume (Command({ resume })). A sub-agent's
        // question names it and its task (graph/subagent.ts gives them in `asker`).
        ask: (request) => {
          const asked = askedAs(request, config.configurable?.asker as SubagentAsker | undefined);
          return codes ? codes.ask(asked) : interrupt(asked);
        },
      });
      codes?.settle();
      const messages = [...state.messages, ...review.results];
      return new Command({
        update: { messages: review.results, alwaysAllow: review.alwaysAdded },
        goto: dispatch(runtime, { messages }, maxSteps, review.calls),
      });
    },

    /** After a turn's calls: its sub-agents (their turn), else the next step or the step limit; a hook's stop ends the run. */
    async step_done(state: AgentStateType, config: LangGraphRunnableConfig): Promise<Command> {
      // A hook answered `continue: false` around one of the calls (its guard wrote the reason).
      if (state.stopReason === HOOK_STOP)
        return new Command({ update: { messages: hookStopResults(pendingCalls(state.messages)) }, goto: END });
      const { maxSteps } = runSettings(runtime, config);
      const next = dispatch(runtime, state, maxSteps);
      // After sub-agents, the request's snapshot entry ends at the thread's latest files, so the
      // next step's time-travel check finds nothing to restore.
      const subagentsRan =
        !Array.isArray(next) && taskCalls(lastAIMessage(state.messages) ?? new AIMessage("")).length > 0;
      const snapshots = !subagentsRan
        ? {}
        : await latestThreadSnapshot(
            runtime.workspace,
            threadOf(config) ?? "",
            currentRequest(state.messages),
            state.snapshots,
          );
      return new Command({ update: { snapshots }, goto: next });
    },

    step_limit(): AgentStateUpdate {
      return { stopReason: "max_steps" };
    },
  };
}

export type GraphNodes = ReturnType<typeof createNodes>;
