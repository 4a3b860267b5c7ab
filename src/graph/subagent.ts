import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import { isGraphBubbleUp, type LangGraphRunnableConfig } from "@langchain/langgraph";
import {
  allowSubagentListeners,
  QUEUED_NOTICE,
  runTaskCall,
  snapshotsForParent,
  subagentRequest,
  subagentPlaces,
  subagentResult,
  taskErrorResult,
  type TaskEnd,
} from "../agent/subagents.js";
import { withTaskHooks } from "../agent/task-hooks.js";
import { HOOK_STOP } from "../guard/hooks.js";
import type { SubagentAsker } from "../contracts/events.js";
import type { WorkspaceSnapshots } from "../agent/snapshot-step.js";
import { callJournal, type TurnOf } from "../agent/tool-journal-step.js";
import type { AgentRuntime } from "../agent/runtime.js";
import type { SubagentType } from "../tools/task.js";
import { messageText } from "../agent/turn.js";
import { stepsSinceLastRequest } from "../contracts/conversation.js";
import { threadOf } from "../tools/read-tracker.js";
import { recursionLimitFor, runSettings } from "./run-config.js";
import type { NodeSignal } from "./node-signals.js";
import type { AgentStateUpdate, GraphStopReason } from "./state.js";

/**
 * Sub-agents in the graph: each `task` call of a turn is sent (LangGraph's Send) to its own
 * `subagent` task, so several run in parallel, each with its own checkpoint namespace in the
 * parent's thread. The task runs the same agent graph compiled as a subgraph (no checkpointer of
 * its own: it inherits the parent's), so Studio shows its steps nested under the call, its
 * interrupts reach whoever answers the parent's, and a resumed parent resumes it where it asked.
 * At most MAX_PARALLEL_SUBAGENTS of a thread's run at once: the others wait for a place before
 * they start (and say so), and a stop while they wait cancels them unstarted.
 * `step_done` then records the thread's files after them all, once.
 */

type ToolCall = NonNullable<AIMessage["tool_calls"]>[number];

/** What the parent sends to one `subagent` task. */
export interface SubagentInput {
  call: ToolCall;
  /** The parent's turn (for the journal) and request: the sub-agent's file changes join its snapshots. */
  turn: TurnOf;
}

/** What a compiled sub-agent graph is, for the node: something to invoke with a config. */
export interface SubagentGraph {
  invoke(input: unknown, config: LangGraphRunnableConfig): Promise<unknown>;
}

/** This `subagent` task's checkpoint namespace: LangGraph's name for the task, kept when it resumes. */
const taskNamespace = (config: LangGraphRunnableConfig) =>
  (config.configurable as { checkpoint_ns?: string } | undefined)?.checkpoint_ns ?? "";

/** The subagent node of a runtime: `subgraphFor` gives the compiled graph of each agent type (built on first use). */
export function createSubagentNode(runtime: AgentRuntime, subgraphFor: (type: SubagentType) => SubagentGraph) {
  const journal = callJournal(runtime.journal);
  const places = subagentPlaces();
  /**
   * One `task` call inside the person's hooks (agent/task-hooks.ts), as every other call is. A
   * hook's `continue: false`, around the call or inside its sub-agent, ends the parent's run too.
   */
  return async function subagent(input: SubagentInput, config: LangGraphRunnableConfig): Promise<AgentStateUpdate> {
    let end = undefined as TaskEnd | undefined;
    // Raised before the first wait: LangGraph starts every task of the step, each listening to this signal.
    allowSubagentListeners(config.signal, 1);
    // After a question inside its sub-agent, LangGraph runs this node again from its start (the
    // subgraph resumes where it asked): the call's hooks, snapshot and journal start ran the first time.
    const begun = await journal?.running(threadOf(config) ?? "", input.call.id!, taskNamespace(config));
    const { result, stop } = await withTaskHooks(
      runtime,
      input.call,
      config,
      async (args) => {
        end = await runTask({ ...input, call: { ...input.call, args } }, config, Boolean(begun));
        return end.result;
      },
      Boolean(begun),
    );
    return {
      ...(end ? { snapshots: end.snapshots } : {}),
      messages: [result],
      ...(stop || end?.stop ? { stopReason: HOOK_STOP } : {}),
    };
  };
  /** Runs one `task` call's sub-agent as a subgraph; its last answer is the call's result. */
  function runTask(input: SubagentInput, config: LangGraphRunnableConfig, resumed: boolean): Promise<TaskEnd> {
    const { call } = input;
    const ns = taskNamespace(config);
    const threadId = threadOf(config) ?? "";
    const task = { threadId, turn: input.turn, call, signal: config.signal, ns, resumed };
    const on = {
      // The engine maps this task's namespace to the call, to label the sub-agent's events (a
      // signal written with `at`, this namespace, is the sub-agent's).
      resolved: (type: SubagentType) =>
        config.writer?.({ kind: "subagent", callId: call.id!, type: type.name, ns } satisfies NodeSignal),
      queued: () =>
        config.writer?.({
          kind: "event",
          event: { type: "notice", step: 0, message: QUEUED_NOTICE },
          at: ns,
        } satisfies NodeSignal),
    };
    return runTaskCall(runtime, places, task, on, async (type, brief) => {
      const { approval, maxSteps } = runSettings(runtime, config);
      // Its questions name it and its task (the interrupt value: Studio and the terminal show it).
      const asker: SubagentAsker = { callId: call.id!, type: type.name, description: brief.description };
      try {
        const out = (await subgraphFor(type).invoke(
          { messages: [subagentRequest(call, brief)] },
          {
            ...config,
            // Its own step limit (as many steps as the parent's, counted apart), the parent's mode,
            // and a conversation of its own: what it reads is not what its parent or a sibling read.
            configurable: { ...config.configurable, approval, maxSteps, conversation: call.id, asker },
            recursionLimit: recursionLimitFor(maxSteps),
          },
        )) as { messages?: BaseMessage[]; stopReason?: GraphStopReason | null; snapshots?: WorkspaceSnapshots };
        const messages = out.messages ?? [];
        const last = messages[messages.length - 1];
        const report = last && AIMessage.isInstance(last) ? messageText(last) : undefined;
        return {
          result: subagentResult(call, type, report, out.stopReason ?? "done", stepsSinceLastRequest(messages)),
          snapshots: snapshotsForParent(out.snapshots ?? {}, input.turn.request),
          // A hook's stop inside the sub-agent is the person's stop: the parent's run ends too.
          stop: out.stopReason === HOOK_STOP,
        };
      } catch (err) {
        // An interrupt (an approval question inside) and a cancellation belong to the parent's run.
        if (isGraphBubbleUp(err) || config.signal?.aborted) throw err;
        const result = taskErrorResult(call, `Error: the ${type.name} sub-agent failed: ${(err as Error).message}`);
        return { result, snapshots: {}, stop: false };
      }
    });
  }
}
