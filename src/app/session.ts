import { claudeToolName } from "../security/hooks-config.js";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { RunSummary } from "../agent/engine.js";
import type { AgentEvent, Approver } from "../contracts/events.js";
import { estimateTextTokens, requestTokenCap } from "../context/budget.js";
import { openMemory } from "../memory/backend.js";
import { findThreadIn, latestThreadIn, type ThreadStore } from "../memory/thread-store.js";
import { newThreadId } from "../memory/threads.js";
import { checkThreadHistory } from "../memory/thread-history.js";
import { acquireThreadLock, type ThreadLock } from "../memory/thread-lock.js";
import { ENGINES, type EngineName } from "../contracts/run-choices.js";
import type { Settings } from "../settings.js";
import { type ApprovalMode } from "../contracts/modes.js";
import type { Renderer } from "../ui/render.js";
import type { BackgroundProcess } from "../workspace/processes.js";
import { createCallLabels } from "../agent/call-labels.js";
import { createAgentParts, type AgentParts } from "./agent.js";
import { planAcceptedNote, PLAN_MODE_NOTE } from "../policy/plan-mode.js";
import type { McpHub } from "../mcp/hub.js";
import type { WholeCompaction } from "../context/compaction.js";
import { withMentionedFiles } from "./mentions.js";
import { MAX_STOP_CONTINUATIONS } from "./hooks.js";

/**
 * What one CLI invocation holds: the engine, its tools and processes, and the current thread.
 * The one-shot run and the interactive session both drive it.
 */
export interface Session {
  readonly settings: Settings;
  readonly parts: AgentParts;
  /** The thread index (threads.json, or the database's table with a PostgreSQL checkpointer). */
  readonly threads: ThreadStore;
  threadId: string;
  resumed: boolean;
  approval: ApprovalMode;
  /** The mode plan mode was entered from (an accepted plan goes back to it by default). */
  beforePlan?: ApprovalMode;
  /** Changes the approval mode; entering plan mode remembers the mode it left. */
  setApproval(mode: ApprovalMode): void;
  /** A plan-mode request of this session ended with a plan not yet accepted or left: what /plan accept carries out. */
  planReady: boolean;
  /** Leaves plan mode for `mode`; the next request is told the plan was accepted. */
  acceptPlan(mode: ApprovalMode): void;
  /** Runs one request on the current thread. */
  runTurn(task: string, signal: AbortSignal, approver: Approver): Promise<RunSummary>;
  /** /compact: the thread's conversation replaced by one summary now (undefined: nothing to summarise). */
  compact(focus: string, signal: AbortSignal): Promise<WholeCompaction | undefined>;
  /** Starts a fresh thread. */
  newThread(): string;
  /** Continues a saved thread; refused (ThreadBusyError) while another process writes it. */
  useThread(id: string): Promise<void>;
  /** Background processes still running. */
  running(): BackgroundProcess[];
  /** Stops every process the session started and releases the database; `reason` is SessionEnd's for the person's hooks (other by default). */
  close(reason?: string): Promise<BackgroundProcess[]>;
}

export interface SessionOptions {
  renderer: Renderer;
  model?: BaseChatModel;
  /** MCP servers' tools (app/mcp.ts: prepareMcp); stopped when the session closes. */
  mcp?: McpHub;
  /** A one-shot run's request: a new thread is in the index under it before its id is shown. */
  firstRequest?: string;
}

/** The thread the flags ask for: --thread (new or existing), --continue (latest), or a new one. */
export async function pickThread(
  settings: Settings,
  threads: ThreadStore,
  note: (text: string) => void,
): Promise<{ id: string; resumed: boolean }> {
  if (settings.thread) return { id: settings.thread, resumed: Boolean(await findThreadIn(threads, settings.thread)) };
  if (settings.continueLatest) {
    // Whatever engine made it: the session then runs that engine (threadEngine).
    const latest = await latestThreadIn(threads);
    if (latest) return { id: latest.id, resumed: true };
    note("No saved thread in this workspace yet; starting a new one.");
  }
  return { id: newThreadId(), resumed: false };
}

/**
 * The engine a saved thread was made with, when it is not the one the settings name: each engine
 * keeps its own conversation store, so the other one would find no turns to continue or undo.
 */
export async function threadEngine(
  settings: Settings,
  threads: ThreadStore,
  thread: { id: string; resumed: boolean },
): Promise<EngineName | undefined> {
  if (!thread.resumed) return undefined;
  const engine = (await findThreadIn(threads, thread.id))?.engine;
  return engine && engine !== settings.engine && (ENGINES as readonly string[]).includes(engine)
    ? (engine as EngineName)
    : undefined;
}

export async function createSession(given: Settings, options: SessionOptions): Promise<Session> {
  let settings = given;
  // A sub-agent's hook outcomes are labelled with it, as its other events are.
  const labels = createCallLabels((event: AgentEvent) => options.renderer.event(event));
  const emit = labels.emit;
  const memory = await openMemory(settings, {
    noticeMs: settings.waitNoticeMs,
    onWait: (message) => emit({ type: "notice", step: 0, message, wait: true }),
  }).catch(async (err: unknown) => {
    await options.mcp?.close();
    throw err;
  });
  let parts: AgentParts;
  let thread: { id: string; resumed: boolean };
  const note = (text: string) => options.renderer.note(text);
  // One writer per thread: held while this session has the thread open, released when the
  // process ends in any way (memory/thread-lock.ts).
  let lock: ThreadLock | undefined;
  const lockThread = async (id: string) => {
    // A lock whose connection ended is taken again (refused if another process has the thread now).
    if (lock?.threadId === id && !lock.lost?.()) return;
    const next = await acquireThreadLock(memory.locker, id, { wait: settings.waitForThread, onWait: note });
    await lock?.release();
    lock = next;
  };
  try {
    thread = await pickThread(settings, memory.threads, note);
    if (thread.resumed) await checkThreadHistory(memory, await findThreadIn(memory.threads, thread.id), settings);
    const engine = await threadEngine(settings, memory.threads, thread);
    if (engine) {
      options.renderer.note(`Thread ${thread.id} was made with --engine ${engine}; it goes on with that engine.`);
      settings = { ...settings, engine };
    }
    parts = createAgentParts(settings, { emit, model: options.model, memory, mcp: options.mcp });
    await lockThread(thread.id);
    // Written before it is shown: the banner's id resumes even if this process is killed now.
    if (options.firstRequest !== undefined && !thread.resumed)
      await memory.threads.begin(thread.id, parts.engine.name, options.firstRequest);
  } catch (err) {
    await lock?.release();
    await memory.close();
    await options.mcp?.close();
    throw err;
  }
  // Said with the next request only: the plan was accepted and plan mode is over.
  let acceptedNote: string | undefined;
  // Where the hooks' events stand (app/hooks.ts): SessionStart's context goes with the next request.
  const hookAt = () => ({ threadId: session.threadId, mode: session.approval });
  let starting: Promise<string | undefined> = parts.events.start(
    { threadId: thread.id, mode: settings.approval },
    thread.resumed ? "resume" : "startup",
  );
  // In order, each after the one before; what none of them gave a request yet is kept for the next.
  const queueStart = (next: () => Promise<string | undefined>) => {
    const before = starting;
    starting = before.then(async (given) => [given, await next()].filter(Boolean).join("\n\n") || undefined);
  };
  const session: Session = {
    settings,
    parts,
    threads: memory.threads,
    threadId: thread.id,
    resumed: thread.resumed,
    approval: settings.approval,
    planReady: false,
    setApproval(mode) {
      if (mode === "plan" && session.approval !== "plan") session.beforePlan = session.approval;
      if (mode !== "plan") session.beforePlan = undefined;
      if (mode !== "plan") session.planReady = false;
      session.approval = mode;
    },
    acceptPlan(mode) {
      session.setApproval(mode);
      acceptedNote = planAcceptedNote(mode);
    },
    async runTurn(typed, signal, approver) {
      // `@path` mentions: the files go with the request (app/mentions.ts); the thread's title stays as typed.
      const { request: task, notes } = await withMentionedFiles(typed, settings.workspace);
      for (const text of notes) options.renderer.note(text);
      // Said before the run: the model will see only the beginning and end of a huge request.
      const tokens = estimateTextTokens(task);
      if (tokens > requestTokenCap(settings.contextTokens)) {
        options.renderer.note(
          `This request is about ${tokens} tokens, more than the model may be sent at once (half the context budget of ${settings.contextTokens}, MINI_CURSOR_CONTEXT_TOKENS): ` +
            "it gets the beginning and the end, with a note saying what was left out. For a long log or file, save it in the workspace and ask the agent to search or read it.",
        );
      }
      // The person's UserPromptSubmit hooks may keep the prompt from the model, or add context to it.
      const startContext = await starting;
      starting = Promise.resolve(undefined);
      const verdict = await parts.events.prompt(hookAt(), typed);
      if (verdict.blocked || verdict.stop) {
        options.renderer.note(
          verdict.blocked
            ? `Your prompt was not sent: a UserPromptSubmit hook blocked it (${verdict.blocked}).`
            : `Your prompt was not sent: a UserPromptSubmit hook stopped the turn (${verdict.stop}).`,
        );
        return {
          reason: "not_run",
          steps: 0,
          toolCalls: 0,
          usage: { input: 0, output: 0, estimated: false },
          durationMs: 0,
        };
      }
      await lockThread(session.threadId);
      await memory.threads.begin(session.threadId, parts.engine.name, typed);
      const hookContext = [startContext, verdict.context]
        .filter(Boolean)
        .map((c) => `Context from the user's hooks:\n${c}`);
      const modeNote = session.approval === "plan" ? PLAN_MODE_NOTE : acceptedNote;
      const requestNote = [modeNote, ...hookContext].filter(Boolean).join("\n\n") || undefined;
      acceptedNote = undefined;
      // A lost lock (its database connection ended) stops the run at once, with that error as
      // the reason, before it saves anything more; the writes are refused anyway (lock-gate.ts).
      const lockLost = new AbortController();
      const offLost = lock?.onLost?.((err) => lockLost.abort(err));
      // Asking the person is a Notification for their hooks (a desktop alert, a sound).
      const asking: typeof approver = async (request) => {
        // Claude Code's tool names, as its hooks' scripts read this message ("… to use Bash").
        await parts.events.notification(
          hookAt(),
          `mini-cursor needs your permission to use ${claudeToolName(request.tool)}`,
        );
        return approver(request);
      };
      const runOnce = (text: string, note: string | undefined) =>
        parts.engine.run({
          task: text,
          threadId: session.threadId,
          approver: asking,
          emit,
          signal: AbortSignal.any([signal, lockLost.signal]),
          approval: session.approval,
          note,
        });
      let summary: RunSummary;
      try {
        summary = await runOnce(task, requestNote);
        // Stop hooks may make the agent go on, their reason its next message, a bounded number of times.
        for (let n = 0; summary.reason === "done" && !signal.aborted; n++) {
          const reason = await parts.events.stop(hookAt(), n > 0, summary.finalText);
          if (reason === undefined) break;
          if (n >= MAX_STOP_CONTINUATIONS) {
            options.renderer.note(
              `A Stop hook asked the agent to go on again (${reason}); it already went on ${MAX_STOP_CONTINUATIONS} times for this prompt, the most mini-cursor allows, so the turn ends here.`,
            );
            break;
          }
          options.renderer.note(`A Stop hook asked the agent to go on: ${reason}`);
          summary = await runOnce(`A Stop hook the user configured asks you to go on: ${reason}`, undefined);
        }
      } finally {
        offLost?.();
      }
      if (lockLost.signal.aborted) return summary;
      if (requestNote === PLAN_MODE_NOTE) session.planReady = summary.reason === "done";
      await memory.threads.record(session.threadId, parts.engine.name, typed, summary.steps);
      // The run's steps are all in the thread; after an error the journal may be what the next run needs.
      if (summary.reason !== "error") await memory.journal.clear(session.threadId).catch(() => undefined);
      return summary;
    },
    async compact(focus, signal) {
      // One writer per thread, as for a turn.
      await lockThread(session.threadId);
      await parts.events.preCompact(hookAt(), "manual", focus);
      const done = await parts.compact(session.threadId, focus, signal);
      if (done) queueStart(() => parts.events.start(hookAt(), "compact"));
      return done;
    },
    newThread() {
      const old = hookAt();
      queueStart(async () => {
        await parts.events.end(old, "clear");
        return parts.events.start(hookAt(), "clear");
      });
      session.planReady = false;
      session.threadId = newThreadId();
      session.resumed = false;
      // The old thread is free for others now; the new one is locked at its first turn.
      void lock?.release();
      lock = undefined;
      return session.threadId;
    },
    async useThread(id) {
      await checkThreadHistory(memory, await findThreadIn(memory.threads, id), settings);
      await lockThread(id);
      session.threadId = id;
      session.resumed = true;
    },
    running() {
      return parts.tools.processes.list().filter((p) => p.running);
    },
    async close(reason = "other") {
      await starting.catch(() => undefined);
      await parts.events.end(hookAt(), reason);
      // MCP servers carry the session variable too: stopped as ours first, the sweep of the
      // session's processes below cannot kill one and have it reported as a crash.
      await options.mcp?.close();
      const stopped = await parts.tools.processes.stopAll();
      await lock?.release();
      await parts.close();
      return stopped;
    },
  };
  return session;
}
