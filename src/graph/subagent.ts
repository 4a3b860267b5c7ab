import { AIMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { isGraphBubbleUp, Send, type LangGraphRunnableConfig } from "@langchain/langgraph";
import {
  latestThreadSnapshot,
  resolveTaskCall,
  snapshotsForParent,
  subagentRequest,
  subagentResult,
  subagentRuntime,
  taskCalls,
  taskErrorResult,
} from "../agent/subagents.js";
import { currentRequest, type WorkspaceSnapshots } from "../agent/snapshot-step.js";
import { journalEnded } from "../agent/tool-journal-step.js";
import { lastAIMessage, messageText, stepsSinceLastRequest } from "../agent/turn.js";
import { threadOf } from "../tools/read-tracker.js";
import { recursionLimitFor, runOption, type RuntimeSource } from "./run-config.js";
import type { NodeSignal } from "./node-signals.js";
import type { AgentStateType, AgentStateUpdate, GraphStopReason } from "./state.js";

/**
 * Sub-agents in the graph: each `task` call of a turn is sent (LangGraph's Send) to its own
 * `subagent` task, so several run in parallel, each with its own checkpoint namespace in the
 * parent's thread. The task runs the same agent graph compiled as a subgraph (no checkpointer of
 * its own: it inherits the parent's), so Studio shows its steps nested under the call, its
 * interrupts reach whoever answers the parent's, and a resumed parent resumes it where it asked.
 * `subagents_done` then records the thread's files after them all, once.
 */

type ToolCall = NonNullable<AIMessage["tool_calls"]>[number];

/** What the parent sends to one `subagent` task. */
export interface SubagentInput {
  call: ToolCall;
  /** The id of the parent's current request: the sub-agent's file changes join its snapshots. */
  request?: string;
}

/** What a compiled sub-agent graph is, for the node: something to invoke with a config. */
export interface SubagentGraph {
  invoke(input: unknown, config: LangGraphRunnableConfig): Promise<unknown>;
}

/** The `task` calls of the latest turn that have no result yet. */
function pendingTaskCalls(messages: readonly BaseMessage[]): ToolCall[] {
  const last = lastAIMessage(messages);
  if (!last) return [];
  const answered = new Set(messages.filter(ToolMessage.isInstance).map((m) => m.tool_call_id));
  return taskCalls(last).filter((c) => !answered.has(c.id!));
}

/** After the tools: one Send per pending `task` call, or none. */
export function subagentSends(state: Pick<AgentStateType, "messages">): Send[] {
  const request = currentRequest(state.messages);
  return pendingTaskCalls(state.messages).map(
    (call) => new Send("subagent", { call, request } satisfies SubagentInput),
  );
}

/**
 * The runtime source of the sub-agent graph: the parent's runtime, narrowed to the type the
 * run's configuration names (`configurable.subagent`).
 */
export function subagentSource(parent: RuntimeSource): RuntimeSource {
  return (config) => {
    const resolved = parent(config);
    const name = (config.configurable as { subagent?: string } | undefined)?.subagent;
    const type = resolved.runtime.subagents?.find((t) => t.name === name);
    return type ? { runtime: subagentRuntime(resolved.runtime, type), config: resolved.config } : resolved;
  };
}

export function createSubagentNodes(source: RuntimeSource, subgraph: () => SubagentGraph) {
  return {
    /** Runs one `task` call's sub-agent as a subgraph; its last answer is the call's result. */
    async subagent(input: SubagentInput, config: LangGraphRunnableConfig): Promise<AgentStateUpdate> {
      const { runtime, config: run } = source(config);
      const { call } = input;
      // The call's result is in the parent's journal before this task's writes are saved: a run
      // stopped after it (a sibling still running) gives it back, not "interrupted".
      const ended = async (result: ToolMessage, snapshots: WorkspaceSnapshots = {}): Promise<AgentStateUpdate> => {
        await journalEnded(runtime.journal, threadOf(config) ?? "", [result]);
        return { messages: [result], snapshots };
      };
      const resolved = resolveTaskCall(runtime, call);
      if ("error" in resolved) return ended(taskErrorResult(call, resolved.error));
      const { type, input: task } = resolved;
      const maxSteps = runOption(run, "maxSteps", runtime.maxSteps);
      // The engine maps this task's namespace to the call, to label the sub-agent's events.
      const ns = (config.configurable as { checkpoint_ns?: string } | undefined)?.checkpoint_ns ?? "";
      config.writer?.({ kind: "subagent", callId: call.id!, type: type.name, ns } satisfies NodeSignal);
      let result: ToolMessage;
      let snapshots: WorkspaceSnapshots = {};
      try {
        const out = (await subgraph().invoke(
          { messages: [subagentRequest(call, task)] },
          {
            ...config,
            // Its own step limit (as many steps as the parent's, counted apart), the parent's mode.
            configurable: {
              ...config.configurable,
              subagent: type.name,
              approval: runOption(run, "approval", runtime.approval),
              maxSteps,
            },
            recursionLimit: recursionLimitFor(maxSteps),
          },
        )) as { messages?: BaseMessage[]; stopReason?: GraphStopReason | null; snapshots?: WorkspaceSnapshots };
        const messages = out.messages ?? [];
        const last = messages[messages.length - 1];
        const report = last && AIMessage.isInstance(last) ? messageText(last) : undefined;
        result = subagentResult(call, type, report, out.stopReason ?? "done", stepsSinceLastRequest(messages));
        snapshots = snapshotsForParent(out.snapshots ?? {}, input.request);
      } catch (err) {
        // An interrupt (an approval question inside) and a cancellation belong to the parent's run.
        if (isGraphBubbleUp(err) || config.signal?.aborted) throw err;
        result = taskErrorResult(call, `Error: the ${type.name} sub-agent failed: ${(err as Error).message}`);
      }
      return ended(result, snapshots);
    },

    /** After a turn's sub-agents: the request's snapshot entry ends at the thread's latest files. */
    async subagents_done(state: AgentStateType, config: LangGraphRunnableConfig): Promise<AgentStateUpdate> {
      const { runtime } = source(config);
      const snapshots = await latestThreadSnapshot(
        runtime.workspace,
        threadOf(config) ?? "",
        currentRequest(state.messages),
        state.snapshots,
      );
      return { snapshots };
    },
  };
}
