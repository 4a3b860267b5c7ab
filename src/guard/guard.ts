import { ToolMessage } from "@langchain/core/messages";
import type { StructuredToolInterface, ToolRunnableConfig } from "@langchain/core/tools";
import { Command, isGraphBubbleUp, isGraphDrained } from "@langchain/langgraph";
import { endsTheRun } from "../contracts/tools.js";
import { toolErrorResult } from "./failure.js";

/**
 * The guard: what mini-cursor adds around one tool call, as an ordered list of small guards in
 * the style of middleware (each gets the call and `next`, the rest of the list and then the tool).
 * A guarded tool is the tool itself, with the same name, description and schema, whose `invoke`
 * runs the guards first: the graph's ToolNode runs guarded tools, and the loop calls the same
 * guarded tools itself. The guards and what they need (the journal, the snapshots, hooks, the
 * event sink) are handed in by the composition root (app/agent.ts): this file imports none of them.
 */

/** One call as the guards see it: the arguments that run (the person's, when they edited it). */
export interface GuardedCall {
  id: string;
  name: string;
  args: Record<string, unknown>;
}

/** What one call touches: the absolute paths (undefined: anything), and whether it may write. */
export interface CallAccess {
  writes: boolean;
  paths: string[] | undefined;
  /** A shell command (execute kind): commands of one turn do not wait for each other. */
  command?: boolean;
}

/**
 * What the engine dispatches a call with besides the call itself: the graph's Send payload, which
 * ToolNode hands the tool as `state`, or the loop's own. Small, since the graph keeps it with the
 * step's checkpoint until the call has run.
 */
export interface Dispatch {
  /** The model turn the call belongs to (its calls' ids): the journal keeps a turn's calls together. */
  turn: string;
  /**
   * The turn's calls that run together, in the model's order, each with what it touches (the
   * order) and what it may change (its snapshots: nothing when absent, these workspace-relative
   * files, or "any").
   */
  batch: Array<{ id: string; access: CallAccess; changes?: readonly string[] | "any" }>;
  /** The request (the id of its user message) the turn serves. */
  request?: string;
  /** The step number, for the trace. */
  step: number;
  /** The person edited this call at the approval question: it runs with their arguments. */
  edited?: true;
  /** For the turn's last call: the loop guard's note, when the model repeats itself. */
  repeats?: { step: number; action: "note"; tool: string; repeats: number; message: string };
}

/** What ToolNode hands a tool beside the call (its `runtime`): the run's config, and the dispatch as `state`. */
export type GuardConfig = ToolRunnableConfig & {
  state?: Partial<Dispatch>;
  /** LangGraph's custom stream: what the guards tell the trace (EventSignal); the loop hands in its own. */
  writer?: (chunk: unknown) => void;
};

export interface CallContext {
  readonly call: GuardedCall;
  readonly config: GuardConfig;
  /**
   * What the call leaves in the thread's state besides its result (the snapshots around it, the
   * todo list): the graph applies it with the result as LangGraph's Command, the loop by hand.
   */
  readonly update: Record<string, unknown>;
  /** The snapshot taken before the call (guard/snapshots.ts), for the journal. */
  snapshot?: string;
  /** Its PreToolUse hooks ran and let it start before: a task call run again after a question in its sub-agent. */
  readonly resumed?: boolean;
}

export type Guard = (context: CallContext, next: () => Promise<ToolMessage>) => Promise<ToolMessage>;

/** The dispatch a call came with; a call made outside the engines runs alone. */
export function dispatchOf({ call, config }: CallContext): Dispatch {
  const given = config.state ?? {};
  return {
    ...given,
    turn: given.turn ?? call.id,
    batch: given.batch ?? [{ id: call.id, access: { writes: true, paths: undefined } }],
    step: given.step ?? 0,
  };
}

/** The call a tool was invoked with: a tool call (engines, ToolNode), or bare arguments (tests, scripts). */
function callOf(tool: StructuredToolInterface, input: unknown, config: GuardConfig): GuardedCall {
  const given = input as { type?: string; id?: string; args?: Record<string, unknown> } | undefined;
  if (given?.type === "tool_call") return { id: given.id ?? "", name: tool.name, args: given.args ?? {} };
  return { id: config.toolCall?.id ?? "", name: tool.name, args: (input ?? {}) as Record<string, unknown> };
}

/** What the tool itself returned, as a ToolMessage (a guarded tool's state update joins this call's). */
async function runTool(tool: StructuredToolInterface, { call, config, update }: CallContext): Promise<ToolMessage> {
  const output: unknown = await tool.invoke({ ...call, type: "tool_call" }, config);
  if (output instanceof Command) {
    const inner = resultOf(output);
    Object.assign(update, inner.update);
    return inner.result;
  }
  if (ToolMessage.isInstance(output)) return output;
  const content = typeof output === "string" ? output : JSON.stringify(output);
  return new ToolMessage({ tool_call_id: call.id, name: call.name, status: "success", content });
}

/**
 * `tool` with `guards` around it, outermost first. Invoked with a tool call it returns the
 * result's ToolMessage (or a Command carrying it with the state it leaves); with bare arguments,
 * the result's text.
 */
export function guardTool<T extends StructuredToolInterface>(tool: T, guards: readonly Guard[]): T {
  const invoke = async (input: unknown, config: GuardConfig = {}) => {
    const context: CallContext = { call: callOf(tool, input, config), config, update: {} };
    const chain = guards.reduceRight<() => Promise<ToolMessage>>(
      (next, guard) => () => guard(context, next),
      () => runTool(tool, context),
    );
    let result: ToolMessage;
    try {
      result = await chain();
    } catch (err) {
      // As ToolNode would, a throw becomes the call's error result; but a failure to save the
      // run's own state (the journal's disk is full) and a stop end the run, so the next run
      // tells the model the call did not run or was interrupted, and LangGraph's own signals (an
      // interrupt) pass on.
      if (endsTheRun(err) || config.signal?.aborted || isGraphBubbleUp(err) || isGraphDrained(err)) throw err;
      result = toolErrorResult(context.call, err);
    }
    if ((input as { type?: string } | undefined)?.type !== "tool_call") return result.content;
    if (Object.keys(context.update).length === 0) return result;
    return new Command({ update: { messages: [result], ...context.update } });
  };
  return Object.assign(Object.create(tool) as T, { invoke });
}

/** The state updates a guarded tool's output carries besides its result (the loop applies them by hand). */
export function resultOf(output: unknown): { result: ToolMessage; update: Record<string, unknown> } {
  if (output instanceof Command) {
    const { messages, ...update } = (output.update ?? {}) as { messages?: ToolMessage[] };
    return { result: messages![0]!, update };
  }
  return { result: output as ToolMessage, update: {} };
}

/**
 * The snapshots around a call that may change files, for /undo and time travel: what the call
 * may change is recorded before it runs and again after, and the request's snapshot entry is
 * the call's state update (the graph's `snapshots` reducer merges it, the loop by hand). The
 * port (agent/snapshot-step.ts, handed in by the composition root) decides what to record: the
 * paths a file tool declares, the whole workspace for a command, nothing for a call that looks.
 */

/** What the port took before a call: its id (for the journal), and how to finish after it. */
export interface SnapshotSpan {
  readonly before?: string;
  /**
   * After the call (`ok`: it returned a result, not thrown): records again; the state update (per
   * request), empty when nothing was recorded.
   */
  finish(ok: boolean): Promise<Record<string, unknown>>;
}

export type SnapshotPort = (context: CallContext) => Promise<SnapshotSpan>;

export function snapshotGuard(port: SnapshotPort): Guard {
  return async (context, next) => {
    const span = await port(context);
    context.snapshot = span.before;
    let result: ToolMessage;
    try {
      result = await next();
    } catch (err) {
      void span.finish(false);
      throw err;
    }
    const snapshots = await span.finish(true);
    if (Object.keys(snapshots).length > 0) context.update.snapshots = snapshots;
    return result;
  };
}

/**
 * The write-ahead journal around a call (memory/tool-journal.ts, through the port the composition
 * root hands in): the call is on disk as started before it runs, and its result as it ends,
 * before the step is saved in the thread. A run killed in between is closed from it on resume
 * (agent/crash-recovery.ts): a real result, "interrupted" with the files changed since, or not run.
 */
export interface JournalPort {
  started(context: CallContext): Promise<void>;
  ended(context: CallContext, result: ToolMessage): Promise<void>;
}

export function journalGuard(port: JournalPort): Guard {
  return async (context, next) => {
    await port.started(context);
    const result = await next();
    await port.ended(context, result);
    return result;
  };
}
