import { ToolMessage, type AIMessage, type BaseMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import type { StructuredToolInterface } from "@langchain/core/tools";
import type { ApprovalMode } from "../settings.js";
import { normalizeResponse } from "../policy/approval-answer.js";
import { checkRepeats, loopGuardReport, withLoopNote } from "../policy/loop-guard.js";
import { reviewToolCalls, type ReviewOutcome } from "../policy/review.js";
import { withEditNote } from "../policy/edit-call.js";
import { todosFromResults, type Todo } from "../tools/todos.js";
import type { ApprovalRequest } from "./events.js";
import type { AgentRuntime } from "./runtime.js";
import { snapshotBeforeTools, type WorkspaceSnapshots } from "./snapshot-step.js";
import { journalEnded, journalStarted } from "./tool-journal-step.js";
import { noteCodePath } from "../code-paths.js";
import { accessOf, allowConcurrentListeners, runScheduled } from "./tool-schedule.js";
import { withToolHooks } from "./tool-hooks.js";
import { unrunnableCallResults } from "./turn.js";
import { isTaskCall, subagentMayChangeFiles } from "./subagents.js";

/**
 * The approval and tool half of a step, written once for both engines (the graph's approve and
 * tools nodes, the loop's act phase): which calls cannot run at all, the review of the rest, the
 * result a call gets when its tool throws, the snapshots and journal around the calls, the loop
 * guard's note and the todo list a step leaves.
 *
 * Results reach the conversation in one order in both engines: first the calls the review
 * declined or refused (the graph's approve node adds them), then, from the tools, the calls that
 * cannot run (arguments that are not JSON, unknown tools, arguments that do not fit) and the
 * results of the calls that ran, in the model's order.
 */

type ToolCall = NonNullable<AIMessage["tool_calls"]>[number];

/** Results for the calls of a turn that cannot run at all (arguments that are not JSON or do not fit, unknown tools). */
export function unrunnableResults(runtime: AgentRuntime, message: AIMessage): ToolMessage[] {
  return unrunnableCallResults(message, runtime.tools);
}

export interface ReviewTurnInput {
  runtime: AgentRuntime;
  message: AIMessage;
  mode: ApprovalMode;
  /** The thread's "always" keys so far. */
  always: readonly string[];
  threadId?: string;
  /**
   * Gets an answer from whoever decides: the graph's interrupt (under Studio, with the one-time
   * code checked, graph/studio-secret.ts), the loop's approver. Whatever comes back is read with
   * normalizeResponse: an answer the engines do not know is a denial.
   */
  ask: (request: ApprovalRequest) => unknown;
}

/** The review of a turn's calls that can run: those that need a person are asked, refused ones get results. */
export async function reviewTurn(input: ReviewTurnInput): Promise<ReviewOutcome> {
  const { runtime, message } = input;
  return reviewToolCalls({
    calls: message.tool_calls ?? [],
    answered: new Set(unrunnableResults(runtime, message).map((m) => m.tool_call_id)),
    mode: input.mode,
    always: input.always,
    workspace: runtime.workspace,
    tools: runtime.tools,
    threadId: input.threadId,
    configFiles: runtime.configFiles,
    ask: async (request) => normalizeResponse(await input.ask(request)),
  });
}

/** What the model reads when a tool throws instead of returning (defineTool's tools turn their own failures into results first). */
export function toolErrorResult(call: ToolCall, err: unknown): ToolMessage {
  return new ToolMessage({
    tool_call_id: call.id!,
    name: call.name,
    status: "error",
    content: `Error: ${(err as Error)?.message ?? String(err)}\n Please fix your mistakes.`,
  });
}

/** Runs one call; a throw becomes its result, except after a cancellation, which the engine must see. */
export async function runToolCall(
  tool: StructuredToolInterface,
  call: ToolCall,
  config: RunnableConfig,
): Promise<ToolMessage> {
  noteCodePath(`tool:${tool.name}`);
  try {
    const output: unknown = await tool.invoke({ ...call, type: "tool_call" }, config);
    if (ToolMessage.isInstance(output)) return output;
    const content = typeof output === "string" ? output : JSON.stringify(output);
    return new ToolMessage({ tool_call_id: call.id!, name: call.name, status: "success", content });
  } catch (err) {
    if (config.signal?.aborted) throw err;
    return toolErrorResult(call, err);
  }
}

export interface ToolStepInput {
  runtime: AgentRuntime;
  /** The model turn whose calls run. */
  message: AIMessage;
  /** The conversation up to and including `message`, with the results the review gave. */
  messages: readonly BaseMessage[];
  /** The thread the calls belong to (the journal's key, and the read tracker's through `configFor`). */
  threadId: string;
  /**
   * The graph thread whose files time travel tracks; "" for the loop, whose threads never travel
   * (snapshot-step.ts). With `snapshots`, a resumed earlier checkpoint first gets its files back.
   */
  timeTravelThread: string;
  snapshots?: WorkspaceSnapshots;
  /** The step number, for the loop guard's report. */
  step: number;
  /** The config each call runs with (cancellation, callbacks, thread id). */
  configFor: (call: ToolCall) => RunnableConfig;
  notice: (text: string) => void;
  /** The review's edits (ReviewOutcome.edits): these calls run with the person's arguments, and their results say so. */
  edits?: Readonly<Record<string, Record<string, unknown>>>;
}

export interface ToolStep {
  /** The step's results in conversation order (see above), the loop guard's note on the last. */
  results: ToolMessage[];
  /** Snapshots recorded around the calls (empty when none). */
  snapshots: WorkspaceSnapshots;
  /** The todo list a successful write_todos call left, if one did: the thread keeps it and the trace shows it. */
  todos?: Todo[];
  /** The loop guard's note, when this turn repeats an earlier one for the third time or more. */
  loopNote?: ReturnType<typeof loopGuardReport>;
}

/** Snapshots, journals and runs the calls that have no result yet; calls on one path run in the model's order. */
export async function runToolStep(input: ToolStepInput): Promise<ToolStep> {
  const { runtime, message, threadId } = input;
  const calls = message.tool_calls ?? [];
  const unrunnable = unrunnableResults(runtime, message);
  const answered = new Set([
    ...unrunnable.map((m) => m.tool_call_id),
    ...input.messages.filter(ToolMessage.isInstance).map((m) => m.tool_call_id),
  ]);
  const edits = input.edits ?? {};
  // An edited call runs, is snapshotted, scheduled and journalled with the person's arguments.
  // A `task` call's result comes from its sub-agent (graph/subagent.ts, loop/subagents.ts), not from a tool run.
  const pending = calls
    .filter((c) => !answered.has(c.id!) && !isTaskCall(c))
    .map((c) => (edits[c.id!] ? { ...c, args: edits[c.id!]! } : c));
  const tasks = calls
    .filter((c) => !answered.has(c.id!) && isTaskCall(c))
    .map((c) => ({ ...c, readOnly: !subagentMayChangeFiles(runtime, c) }));
  // The workspace is snapshotted around the tools, for /undo (and, in the graph, time travel):
  // whole when a sub-agent that may change files runs after them, as its task call's `before`.
  const snapshot = await snapshotBeforeTools({
    workspace: runtime.workspace,
    threadId: input.timeTravelThread,
    messages: input.messages,
    calls: pending,
    wholeWorkspace: tasks.some((t) => !t.readOnly),
    tools: runtime.tools,
    notice: input.notice,
    snapshots: input.snapshots,
  });
  // The write-ahead journal: the calls are on disk as started before they run, each result as it
  // ends. The task calls too, though their sub-agents run after this step and each writes its
  // call's result as it ends (graph/subagent.ts, loop/subagents.ts): a stop inside a sub-agent
  // then knows the call started, and the snapshot its changes are measured from.
  const journal = runtime.journal;
  await journalStarted({
    journal,
    threadId,
    messages: input.messages,
    calls: [...pending, ...tasks],
    before: snapshot.before,
    edits,
  });
  const toolsByName = new Map(runtime.tools.map((t) => [t.name, t]));
  if (pending.length > 0) allowConcurrentListeners(input.configFor(pending[0]!).signal ?? undefined, pending.length);
  const outputs = await runScheduled(
    pending,
    (call) => accessOf(call, runtime.tools, runtime.workspace),
    async (call) => {
      const config = input.configFor(call);
      // The person's hooks before and after the call (agent/tool-hooks.ts); one that blocks it answers instead.
      const ran = await withToolHooks(
        runtime.hooks,
        call,
        { threadId, workspace: runtime.workspace, signal: config.signal, timeoutMs: runtime.hookTimeoutMs },
        () => runToolCall(toolsByName.get(call.name)!, call, config),
      );
      const result = edits[call.id!] ? withEditNote(ran, call.args) : ran;
      await journalEnded(journal, threadId, [result]);
      return result;
    },
  );
  const snapshots = await snapshot.finish();
  let results = [...unrunnable, ...outputs];
  // The loop guard: from the third identical turn in a row, the model is told it is repeating itself.
  const check = checkRepeats(input.messages);
  let loopNote: ToolStep["loopNote"];
  if (check.action === "note" && results.length > 0) {
    loopNote = loopGuardReport(check, input.step, "note");
    results = withLoopNote(results, check);
  }
  return { results, snapshots, todos: todosFromResults(results), loopNote };
}
