import { getMaxListeners, setMaxListeners } from "node:events";
import { HumanMessage, ToolMessage, type AIMessage } from "@langchain/core/messages";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { declarationOf } from "../contracts/tools.js";
import {
  findSubagentType,
  TASK_TOOL,
  taskCallNotes,
  taskSchema,
  type SubagentType,
  type TaskInput,
} from "../tools/task.js";
import type { AgentRuntime } from "./runtime.js";
import { callJournal, type TurnOf } from "./tool-journal-step.js";
import {
  canChangeFiles,
  snapshotBeforeTools,
  snapshotStoreRef,
  type WorkspaceSnapshots,
  mergeSnapshots,
} from "./snapshot-step.js";
import type { ApprovalRequest, StopReason, SubagentAsker } from "../contracts/events.js";

/**
 * What both engines share about sub-agents (the `task` tool): the runtime a sub-agent runs with,
 * derived from its parent's and never looser; the request it starts from; the report its parent
 * gets; and how its file changes join the parent's request for /undo. The graph runs a sub-agent
 * as the same graph compiled as a subgraph (graph/subagent.ts), the loop as a nested loop
 * (loop/subagents.ts).
 */

type ToolCall = NonNullable<AIMessage["tool_calls"]>[number];

/** Tools of kind read that a read-only sub-agent is not given. */
const NOT_EXPLORING = new Set(["write_todos", "process_output"]);

/** The calls of a turn that start sub-agents. */
export function taskCalls(message: AIMessage): ToolCall[] {
  return (message.tool_calls ?? []).filter((c) => c.name === TASK_TOOL);
}

/** Whether a call starts a sub-agent (its result comes from the sub-agent, not from a tool run). */
export function isTaskCall(call: { name: string }): boolean {
  return call.name === TASK_TOOL;
}

/**
 * The tools a sub-agent of this type gets: the parent's, without `task` (a sub-agent starts no
 * sub-agents), narrowed to the type's list; "read-only" keeps the tools of kind read that look at
 * the workspace (not the todo list, nor the output of processes, which a read-only agent starts none of). A name the parent lacks is not added: a type can only narrow.
 */
export function subagentTools(
  parent: readonly StructuredToolInterface[],
  type: Pick<SubagentType, "tools" | "disallowedTools">,
): StructuredToolInterface[] {
  const denied = new Set(type.disallowedTools ?? []);
  const own = parent.filter((t) => t.name !== TASK_TOOL && !denied.has(t.name));
  if (type.tools === undefined) return own;
  if (type.tools === "read-only")
    return own.filter((t) => !NOT_EXPLORING.has(t.name) && declarationOf(t).kind === "read");
  const allowed = new Set(type.tools);
  return own.filter((t) => allowed.has(t.name));
}

/** What a sub-agent is told beside the parent's system prompt: its role and its tools. */
function subagentNote(type: SubagentType, tools: readonly StructuredToolInterface[]): string {
  return [
    `# Sub-agent: ${type.name}`,
    type.instructions,
    `Your tools: ${tools.map((t) => t.name).join(", ") || "none"}. Other tools named above are not yours. Nobody answers questions during your task: decide, and say in your report what you assumed.`,
  ]
    .filter(Boolean)
    .join("\n\n");
}

/** Per parent runtime, one runtime per type: what is built from a runtime (the bound model) is kept. */
const derived = new WeakMap<AgentRuntime, Map<string, AgentRuntime>>();

/**
 * The runtime of a sub-agent of `type` under `parent`: the parent's model (or the type's, when
 * the parent can make one), the narrowed tools, the parent's system prompt with the type's
 * note, and the parent's approvals and limits. Approval mode is not part of a runtime's choice
 * here: the engines run a sub-agent in its parent run's mode.
 */
export function subagentRuntime(parent: AgentRuntime, type: SubagentType): AgentRuntime {
  let perType = derived.get(parent);
  if (!perType) derived.set(parent, (perType = new Map()));
  const known = perType.get(type.name);
  if (known) return known;
  const tools = subagentTools(parent.tools, type);
  const runtime: AgentRuntime = {
    ...parent,
    model: type.model && parent.modelFor ? parent.modelFor(type.model) : parent.model,
    tools,
    systemPrompt: (approval) => `${parent.systemPrompt(approval)}\n\n${subagentNote(type, tools)}`,
    subagents: undefined,
    subagent: type,
    // The parent's journal closes the parent's calls; a sub-agent's live only inside its task call.
    journal: undefined,
  };
  perType.set(type.name, runtime);
  return runtime;
}

/** The arguments of a task call, or the text its result carries when they cannot start one. */
export function resolveTaskCall(
  parent: AgentRuntime,
  call: ToolCall,
): { type: SubagentType; input: TaskInput } | { error: string } {
  const parsed = taskSchema.safeParse(call.args);
  if (!parsed.success)
    return { error: `Error: task arguments do not fit: ${parsed.error.issues[0]?.message ?? "invalid"}.` };
  const found = findSubagentType(parent.subagents ?? [], parsed.data.subagent_type);
  if ("error" in found) return found;
  return { type: found.type, input: parsed.data };
}

/** One task call's end: its result, the files its sub-agent changed, and whether a hook stopped it. */
export interface TaskEnd {
  result: ToolMessage;
  snapshots: WorkspaceSnapshots;
  stop: boolean;
}

/**
 * One task call around what each engine runs of it (`run`), the same in both: its arguments
 * resolved (a call that cannot start gets why as its result), a place among the thread's
 * sub-agents (`queued` when it waits), the call on the journal before its sub-agent starts (not
 * when `resumed`: it was then), and its result on the journal as soon as its sub-agent ends, so
 * a run stopped while a sibling still runs gives it back, not "interrupted".
 */
export async function runTaskCall(
  runtime: AgentRuntime,
  places: ReturnType<typeof subagentPlaces>,
  task: { threadId: string; turn: TurnOf; call: ToolCall; signal?: AbortSignal; ns?: string; resumed?: boolean },
  on: { resolved?: (type: SubagentType) => void; queued: () => void },
  run: (type: SubagentType, input: TaskInput) => Promise<TaskEnd>,
): Promise<TaskEnd> {
  const { threadId, call } = task;
  const journal = callJournal(runtime.journal);
  const ended = async (end: TaskEnd) => {
    await journal?.ended(threadId, [end.result]);
    return end;
  };
  const resolved = resolveTaskCall(runtime, call);
  if ("error" in resolved) return ended({ result: taskErrorResult(call, resolved.error), snapshots: {}, stop: false });
  on.resolved?.(resolved.type);
  const release = await places.take(threadId, task.signal, on.queued);
  try {
    if (!task.resumed) {
      // On the journal before it starts, with the whole workspace as it was when its tools may
      // change files (by their declared kinds, as a step's snapshot is decided: an `explore` has
      // none, a `general` the parent's): a stop inside it is closed with the files changed since
      // (agent/crash-recovery.ts). `ns`: the graph's task, by which a resume finds it.
      const { tools } = subagentRuntime(runtime, resolved.type);
      const readOnly = !canChangeFiles(
        tools.map((t) => ({ name: t.name })),
        tools,
      );
      const before = readOnly ? undefined : await workspaceSnapshot(runtime, task.turn.request);
      await journal?.started(threadId, task.turn, { id: call.id!, name: call.name, before, readOnly, ns: task.ns });
    }
    return await ended(await run(resolved.type, resolved.input));
  } finally {
    release();
  }
}

/** The sub-agent's request: its brief, with an id both engines derive from the call (a resumed run finds the same one). */
export function subagentRequest(call: ToolCall, input: TaskInput): HumanMessage {
  return new HumanMessage({ id: `${call.id}:request`, content: input.prompt });
}

/** Why a sub-agent ended, as its parent reads it. */
const ENDINGS: Partial<Record<StopReason, string>> = {
  max_steps: "it reached its step limit before finishing",
  loop_guard: "it was stopped for repeating the same call",
  hook_stop: "a hook the user configured stopped it",
};

/** The task call's result: the sub-agent's last answer, with a line when it ended otherwise than done or a field was not used. */
export function subagentResult(
  call: ToolCall,
  type: SubagentType,
  report: string | undefined,
  reason: StopReason,
  steps: number,
): ToolMessage {
  const ending = ENDINGS[reason];
  const text = report?.trim() || "(The sub-agent gave no report.)";
  const body = ending ? `[${type.name} sub-agent: ${ending}, after ${steps} step(s). Its last words:]\n${text}` : text;
  // A Claude Code habit (model, run_in_background) was accepted and not used: the model is told.
  const note = taskCallNotes(call.args as TaskInput);
  const content = note ? `${note}\n${body}` : body;
  return new ToolMessage({ tool_call_id: call.id!, name: TASK_TOOL, status: ending ? "error" : "success", content });
}

/** A task call that could not start or failed: its result says why. */
export function taskErrorResult(call: ToolCall, text: string): ToolMessage {
  return new ToolMessage({ tool_call_id: call.id!, name: TASK_TOOL, status: "error", content: text });
}

/**
 * A sub-agent's file changes as one entry of its parent's request: the earliest `before`, the
 * latest `after`, every path; so /undo of the parent's request puts back what its sub-agents
 * changed too.
 */
export function snapshotsForParent(sub: WorkspaceSnapshots, parentRequest: string | undefined): WorkspaceSnapshots {
  if (!parentRequest) return {};
  let merged: WorkspaceSnapshots = {};
  for (const entry of Object.values(sub)) merged = mergeSnapshots(merged, { [parentRequest]: entry });
  return merged;
}

/**
 * After a turn's sub-agents: the parent's request records the thread's latest files, so the next
 * step's time-travel check finds nothing to restore (parallel sub-agents finish in any order).
 */
export async function latestThreadSnapshot(
  workspace: string,
  threadId: string,
  request: string | undefined,
  current: WorkspaceSnapshots,
): Promise<WorkspaceSnapshots> {
  if (!request || !threadId || !current[request]) return {};
  const ref = await snapshotStoreRef(workspace, threadId);
  if (!ref || ref === current[request]!.after) return {};
  return { [request]: { ...current[request]!, after: ref } };
}

/** A snapshot of the whole workspace now, for `request`; undefined when snapshots are off or fail. */
async function workspaceSnapshot(runtime: AgentRuntime, request: string | undefined): Promise<string | undefined> {
  const span = await snapshotBeforeTools({
    workspace: runtime.workspace,
    threadId: "",
    request,
    calls: [],
    changes: "any",
    tools: runtime.tools,
    notice: () => undefined,
  });
  return span.before;
}

/**
 * The loop's equivalent: its threads keep no ref (they never travel), so after sub-agents the
 * request's entry ends at a snapshot of the workspace taken now. Parallel sub-agents' entries
 * merge in the model's order, not the order their files changed: without this, the entry's
 * `after` could be a sibling's, taken before another's last write, and undo would keep that file.
 */
export async function latestWorkspaceSnapshot(
  runtime: AgentRuntime,
  request: string | undefined,
  current: WorkspaceSnapshots,
): Promise<WorkspaceSnapshots> {
  if (!request || !current[request]) return {};
  const now = await workspaceSnapshot(runtime, request);
  return now ? { [request]: { ...current[request]!, after: now } } : {};
}

/**
 * A sub-agent's question, saying which sub-agent asks (its type) and about which task (its
 * description); the parent's questions are as they are.
 */
export function askedAs(request: ApprovalRequest, asker: SubagentAsker | undefined): ApprovalRequest {
  if (!asker) return request;
  return { ...request, askedBy: `${asker.type}: ${asker.description}`, subagent: asker };
}

/**
 * The most sub-agents of one thread that run at once; the rest of a turn's wait in the model's
 * order and start as earlier ones end. Each is a model conversation of its own: a dozen at once
 * meet a provider's rate limit and a small machine's cores together. Claude Code caps its
 * concurrently running sub-agents (20 by default), Codex its agent threads (4); we take 4,
 * which keeps a 2-core machine responsive and a turn's requests within common rate limits.
 */
export const MAX_PARALLEL_SUBAGENTS = 4;

/** The trace's line for a sub-agent that waits for a place. */
export const QUEUED_NOTICE = `Queued: ${MAX_PARALLEL_SUBAGENTS} sub-agents are running, the most that run at once; this one starts when one of them ends.`;

/** Abort listeners one sub-agent may add to its run's signal at once: its wait, its model call, its tools'. */
const ABORT_LISTENERS_PER_SUBAGENT = 4;

/**
 * Each sub-agent listens to its run's signal (waiting for a place, then its graph's steps, model
 * calls and tools): not a leak, so Node's warning past 10 listeners would only mislead. Raised
 * for `count` more sub-agents (the graph engine raises its run's signal for a full set at once).
 */
export function allowSubagentListeners(signal: AbortSignal | undefined, count = MAX_PARALLEL_SUBAGENTS): void {
  if (signal) setMaxListeners(getMaxListeners(signal) + count * ABORT_LISTENERS_PER_SUBAGENT, signal);
}

/** Places for sub-agents: at most `limit` per thread run at once; the others wait in the order they asked. */
export function subagentPlaces(limit = MAX_PARALLEL_SUBAGENTS) {
  const threads = new Map<string, { running: number; waiting: Array<() => void> }>();
  return {
    /**
     * A place in `threadId`'s sub-agents, with the function that gives it back; `queued` is called
     * when it has to wait. A stop (`signal`) while it waits rejects it without a place: a queued
     * sub-agent is cancelled before it starts.
     */
    async take(threadId: string, signal: AbortSignal | undefined, queued: () => void): Promise<() => void> {
      signal?.throwIfAborted();
      allowSubagentListeners(signal, 1);
      let thread = threads.get(threadId);
      if (!thread) threads.set(threadId, (thread = { running: 0, waiting: [] }));
      const t = thread;
      let given = false;
      const release = () => {
        if (given) return;
        given = true;
        const next = t.waiting.shift();
        if (next) return next();
        if (--t.running === 0) threads.delete(threadId);
      };
      if (t.running < limit) {
        t.running++;
        return release;
      }
      queued();
      await new Promise<void>((resolve, reject) => {
        const stop = () => {
          t.waiting.splice(t.waiting.indexOf(go), 1);
          reject(signal?.reason ?? new Error("aborted"));
        };
        const go = () => {
          signal?.removeEventListener("abort", stop);
          resolve();
        };
        t.waiting.push(go);
        signal?.addEventListener("abort", stop, { once: true });
      });
      return release;
    },
  };
}
