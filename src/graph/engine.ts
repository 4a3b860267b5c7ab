import { AIMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { Command } from "@langchain/langgraph";
import { createRunTally, type Engine, type RunMeta, type RunRequest, type RunSummary } from "../agent/engine.js";
import type { AgentEvent, ApprovalRequest, ApprovalResponse, EventSink, StopReason } from "../contracts/events.js";
import type { Todo } from "../contracts/tools.js";
import { requestMessage } from "../agent/turn-inputs.js";
import { describeModelError, type ModelSettings } from "../models/model.js";
import { stateAbort } from "../memory/state-errors.js";
import { addUsage, type TurnUsage } from "../agent/model-turn.js";
import { ToolTimer, toolResultEvent } from "../agent/timing.js";
import { withParentCallbacks } from "../agent/trace-parent.js";
import { messageText } from "../agent/turn.js";
import type { AgentGraph } from "./graph.js";
import { recursionLimitFor } from "./run-config.js";
import type { NodeSignal } from "./node-signals.js";
import type { GraphStopReason } from "./state.js";
import { cancelledTurn, type Recovery, type StopCause } from "../agent/crash-recovery.js";
import { streamChunks } from "./stream-chunks.js";
import { allowSubagentListeners } from "../agent/subagents.js";

export interface GraphEngineOptions {
  graph: AgentGraph;
  meta: RunMeta;
  modelSettings: ModelSettings;
  /** Defaults for runs that do not say otherwise. */
  approval: RunRequest["approval"];
  maxSteps: number;
  /**
   * Closes a step a killed run left open (agent/crash-recovery.ts), before the new request; with
   * cause "cancelled", what the journal knows of a turn the run's Ctrl-C cut off.
   */
  recover?: (threadId: string, messages: readonly BaseMessage[], cause?: StopCause) => Promise<Recovery>;
}

interface StreamState {
  step: number;
  finalText?: string;
  /** Why the graph ended the run (the stopReason its nodes wrote to state). */
  stopReason?: GraphStopReason;
  /** The summary request's usage, reported with the step's own. */
  compactionUsage?: TurnUsage;
  /**
   * The tool_call events of the latest model turn, held until the next node starts, so a loop
   * guard stop is reported before the calls it stops (as the loop engine reports it).
   */
  pendingCalls: AgentEvent[];
  /**
   * The results of the ToolNode's tasks, which end in any order, held until the next node and
   * then reported in the model's order of the calls (`callOrder`), with the todo list they leave,
   * as the loop reports its own.
   */
  heldResults: Array<Extract<AgentEvent, { type: "tool_result" }>>;
  heldTodos?: Todo[];
  callOrder: string[];
}

function flushCalls(st: StreamState, emit: EventSink): void {
  for (const event of st.pendingCalls.splice(0)) emit(event);
}

/** A node's update, as the stream hands it. */
type NodeUpdate = { messages?: BaseMessage[]; todos?: Todo[]; stopReason?: GraphStopReason | null };

function releaseResults(st: StreamState, emit: EventSink): void {
  const place = (id: string) => st.callOrder.indexOf(id);
  for (const event of st.heldResults.splice(0).sort((a, b) => place(a.id) - place(b.id))) emit(event);
  if (st.heldTodos) emit({ type: "todos", step: st.step, todos: st.heldTodos });
  st.heldTodos = undefined;
}

const newStreamState = (): StreamState => ({ step: 0, pendingCalls: [], heldResults: [], callOrder: [] });

function handleUpdate(node: string, update: unknown, st: StreamState, emit: EventSink, timer: ToolTimer): void {
  flushCalls(st, emit);
  const { messages = [], todos, stopReason } = (update ?? {}) as NodeUpdate;
  // A node's stop, or a hook's `continue: false` around a call (its guard's update; step_done then ends the run).
  if (stopReason) st.stopReason = stopReason;
  if (node === "tools" && update && typeof update === "object") {
    for (const m of messages) if (ToolMessage.isInstance(m)) st.heldResults.push(toolResultEvent(m, st.step, timer));
    if (Array.isArray(todos)) st.heldTodos = todos;
    return;
  }
  releaseResults(st, emit);
  if (node === "__interrupt__" || !update || typeof update !== "object") return;
  // summarise's messages are the conversation again, compacted: nothing new to report (nor from
  // start_step and restore_files, which add no messages).
  if (node === "start_step" || node === "restore_files" || node === "summarise") return;
  for (const message of messages) {
    if (AIMessage.isInstance(message)) {
      const calls = message.tool_calls ?? [];
      st.callOrder = calls.map((c) => c.id!);
      for (const call of calls)
        st.pendingCalls.push({ type: "tool_call", step: st.step, id: call.id!, name: call.name, args: call.args });
      if (calls.length === 0) {
        st.finalText = messageText(message);
        emit({ type: "final", text: st.finalText });
      }
    } else if (ToolMessage.isInstance(message)) {
      emit(toolResultEvent(message, st.step, timer));
    }
  }
  if (Array.isArray(todos)) emit({ type: "todos", step: st.step, todos });
}

function handleSignal(signal: NodeSignal, st: StreamState, emit: EventSink): void {
  const guardStop = signal.kind === "loop_guard" && signal.action === "stop";
  if (!guardStop) flushCalls(st, emit);
  if (signal.kind === "token") {
    emit({ type: "token", step: signal.step, text: signal.text });
  } else if (signal.kind === "step") {
    st.step = signal.step;
    emit({ type: "step", step: signal.step });
  } else if (signal.kind === "usage") {
    const cost = signal.cost === undefined ? {} : { cost: signal.cost };
    const turn: TurnUsage = { input: signal.input, output: signal.output, estimated: signal.estimated, ...cost };
    emit({ type: "usage", step: signal.step, usage: st.compactionUsage ? addUsage(turn, st.compactionUsage) : turn });
    st.compactionUsage = undefined;
  } else if (signal.kind === "compaction") {
    st.compactionUsage = signal.usage;
    const { step, tokensBefore, tokensAfter, summarised } = signal;
    emit({ type: "compaction", step, tokensBefore, tokensAfter, summarised });
  } else if (signal.kind === "provider" || signal.kind === "event") {
    emit(signal.event);
  } else if (signal.kind === "loop_guard") {
    const { step, action, tool, repeats, message } = signal;
    emit({ type: "loop_guard", step, action, tool, repeats, message });
    if (guardStop) flushCalls(st, emit);
  }
}

/** One namespace's stream: the parent's (the root) or one sub-agent's, whose events carry its task call's id. */
interface Scope {
  st: StreamState;
  emit: EventSink;
}

/** Reports what a scope holds: its calls, then their results. */
function flushScope({ st, emit }: Scope): void {
  flushCalls(st, emit);
  releaseResults(st, emit);
}

/** An interrupt as the stream reports it. */
interface PendingInterrupt {
  id: string;
  value: unknown;
}

/**
 * Reads the streamed chunks of one graph run (with `subgraphs: true`): the parent's updates and
 * signals drive its stream state; each sub-agent's (namespace `subagent:<task>`) drive their own,
 * labelled with the task call the `subagent` signal named; interrupts are collected from the
 * root, where every one surfaces, each with the sub-agent it came from.
 */
function createStreamReader(root: Scope, emit: EventSink, timer: ToolTimer) {
  const callOfNamespace = new Map<string, string>();
  const scopes = new Map<string, Scope>();
  const interruptAgent = new Map<string, string>();
  let interrupts: PendingInterrupt[] = [];
  const scopeFor = (ns: readonly string[]): Scope => {
    if (ns.length === 0) return root;
    const key = ns.join("|");
    let scope = scopes.get(key);
    if (!scope) {
      const callId = callOfNamespace.get(ns[0]!) ?? ns[0]!;
      scope = { st: newStreamState(), emit: (event) => emit({ ...event, subagent: callId }) };
      scopes.set(key, scope);
    }
    return scope;
  };
  return {
    read(streamed: readonly string[], mode: string, chunk: unknown): void {
      // A node's signal says which graph wrote it (`at`): LangGraph's namespace for it is lost
      // when it is written from the model's callbacks (a sub-agent's tokens came out as the parent's).
      const at = mode === "custom" ? (chunk as NodeSignal).at : undefined;
      const ns = at === undefined ? streamed : at ? at.split("|") : [];
      const scope = scopeFor(ns);
      // A sub-agent at work: the parent's calls were sent on, so they are reported first.
      if (ns.length > 0) flushScope(root);
      if (mode === "custom") {
        const signal = chunk as NodeSignal;
        if (signal.kind === "subagent") callOfNamespace.set(signal.ns, signal.callId);
        else handleSignal(signal, scope.st, scope.emit);
      } else if (mode === "updates") {
        const updates = chunk as Record<string, unknown> & { __metadata__?: { cached?: boolean } };
        // A task that finished before the interrupt is replayed from its saved writes: reported already.
        if (updates.__metadata__?.cached) return;
        for (const [node, update] of Object.entries(updates)) {
          if (node === "__interrupt__") {
            const list = (update ?? []) as PendingInterrupt[];
            if (ns.length === 0) interrupts.push(...list);
            else for (const i of list) interruptAgent.set(i.id, callOfNamespace.get(ns[0]!) ?? ns[0]!);
          }
          if (node === "__metadata__") continue;
          handleUpdate(node, update, scope.st, scope.emit, timer);
        }
      }
    },
    /** The interrupts of the run that just ended, each with the sub-agent (task call id) that asked, if one did. */
    takeInterrupts(): Array<PendingInterrupt & { subagent?: string }> {
      const out = interrupts.map((i) => ({
        ...i,
        ...(interruptAgent.has(i.id) ? { subagent: interruptAgent.get(i.id) } : {}),
      }));
      interrupts = [];
      return out;
    },
    flush(): void {
      for (const scope of [root, ...scopes.values()]) flushScope(scope);
    },
  };
}

/**
 * Keeps the conversation up to the cancel, closed so the provider accepts it next time: from the
 * journal where it knows more (a finished call's result, what a cut-off sub-agent changed, kept
 * with the request for /undo).
 */
async function closeInterruptedTurn(
  options: GraphEngineOptions,
  config: { configurable: Record<string, unknown> & { thread_id: string } },
): Promise<void> {
  const { graph } = options;
  try {
    const state = await graph.getState(config);
    const messages = (state.values as { messages?: BaseMessage[] }).messages ?? [];
    if (messages.length === 0) return;
    const known: Recovery = options.recover
      ? await options.recover(config.configurable.thread_id, messages, "cancelled").catch(() => NO_RECOVERY)
      : NO_RECOVERY;
    await graph.updateState(config, { messages: cancelledTurn(messages, known), snapshots: known.snapshots }, "agent");
  } catch {
    // Without a checkpointer there is no conversation to keep.
  }
}

const NO_RECOVERY: Recovery = { results: [], snapshots: {} };

/** Results for the calls a killed run left without one (none without a checkpointer). */
async function recoverStep(options: GraphEngineOptions, configurable: { thread_id: string }): Promise<Recovery> {
  if (!options.recover || !options.graph.checkpointer) return NO_RECOVERY;
  const latest = await options.graph.getState({ configurable: { thread_id: configurable.thread_id } });
  // The checkpoint as the new run starts from it: a new input drops the saved writes of an
  // unfinished step's tasks (a sub-agent that ended while its sibling ran), which getState shows
  // applied. Their results come from the journal.
  const checkpointId = (latest.config?.configurable as { checkpoint_id?: string } | undefined)?.checkpoint_id;
  const state = checkpointId
    ? await options.graph.getState({ configurable: { thread_id: configurable.thread_id, checkpoint_id: checkpointId } })
    : latest;
  const messages = (state.values as { messages?: BaseMessage[] }).messages ?? [];
  return options.recover(configurable.thread_id, messages);
}

/** The graph engine: streams a run, answers interrupts through the approver, emits AgentEvents. */
export function createGraphEngine(options: GraphEngineOptions): Engine {
  return {
    name: "graph",
    async run(request: RunRequest): Promise<RunSummary> {
      // The mode in force, so the tally knows a plan-mode run (its refusals are no failure).
      const tally = createRunTally(options.meta, { ...request, approval: request.approval ?? options.approval });
      const emit = tally.emit;
      const maxSteps = request.maxSteps ?? options.maxSteps;
      const st = newStreamState();
      // A tool starting is the tools node starting: its calls are reported before its output.
      const timer = new ToolTimer(() => flushCalls(st, emit));
      const config = {
        // tokens: the agent node writes the model's tokens as signals (nodes.ts), in stream order.
        configurable: {
          thread_id: request.threadId,
          approval: request.approval ?? options.approval,
          maxSteps,
          tokens: true,
        },
        recursionLimit: recursionLimitFor(maxSteps),
        signal: request.signal,
        // Each step's checkpoint is stored before the next step starts. With a database that
        // answers asynchronously (PostgreSQL), a run stopped mid-tool would otherwise close its
        // turn on an older checkpoint, and the late write of the newer one would undo the close.
        durability: "sync" as const,
        callbacks: withParentCallbacks(request.callbacks, [timer]),
      };
      let reason: StopReason = "done";
      let input: unknown;
      try {
        const recovered = await recoverStep(options, config.configurable);
        if (recovered.note) emit({ type: "notice", step: 0, message: recovered.note });
        const human = requestMessage(request.task, request.note);
        input = { messages: [...recovered.results, human], snapshots: recovered.snapshots };
        const reader = createStreamReader({ st, emit }, emit, timer);
        // Every running sub-agent's graph listens to the run's own signal (LangGraph's runner does).
        allowSubagentListeners(request.signal);
        for (;;) {
          // Not "messages" mode: its handler keeps every message of the run until the run ends
          // (issue 30); the tokens come as the agent node's signals instead.
          const stream = await streamChunks(options.graph, input, {
            ...config,
            streamMode: ["updates", "custom"],
            // A sub-agent (graph/subagent.ts) streams from its own namespace.
            subgraphs: true,
          });
          for await (const [ns, mode, chunk] of stream as AsyncIterable<[string[], string, unknown]>)
            reader.read(ns, mode, chunk);
          reader.flush();
          // Without a checkpointer there is no saved state, and no interrupt can be pending.
          if (!options.graph.checkpointer) break;
          const pending = reader.takeInterrupts();
          if (pending.length === 0) break;
          // Each question in turn (parallel sub-agents may ask at once); the run resumes with every answer.
          const answers: Record<string, ApprovalResponse> = {};
          for (const question of pending) {
            const asked = question.value as ApprovalRequest;
            const response = await request.approver(asked);
            answers[question.id] = response;
            emit({
              type: "approval",
              request: asked,
              response,
              ...(question.subagent ? { subagent: question.subagent } : {}),
            });
          }
          input = new Command({ resume: answers });
        }
        // The graph says why it ended: the model answered, the loop guard, the step limit or a hook.
        reason = st.stopReason ?? "done";
      } catch (err) {
        flushCalls(st, emit);
        const failed = stateAbort(request.signal);
        if (request.signal?.aborted && !failed) {
          reason = "interrupted";
          // Only the thread id: the run's aborted signal would cancel these calls too.
          await closeInterruptedTurn(options, { configurable: config.configurable });
        } else {
          reason = "error";
          emit({
            type: "error",
            message: describeModelError(failed ?? err, options.modelSettings),
            stack: ((failed ?? err) as Error)?.stack,
          });
        }
      }
      return tally.finish(reason);
    },
  };
}
