import path from "node:path";
import { ToolMessage } from "@langchain/core/messages";
import { claudeToolName, hookMatches, type HookEvent, type HookSpec } from "../security/hooks-config.js";
import { notRunResult, refusedMessage } from "./failure.js";
import type { HookRunResult } from "../workspace/hook-process.js";
import { dispatchOf, type Guard, type GuardConfig, type GuardedCall } from "./guard.js";
import { readHookAnswer, type HookAnswer } from "./hook-output.js";
import { textOf, withNotes } from "./results.js";
import type { AgentEvent, EventSignal, StopReason } from "../contracts/events.js";

/**
 * The person's hooks (security/hooks-config.ts), in Claude Code's contract: each gets the moment
 * as JSON on stdin (Claude Code's fields, with ours alongside), and answers by its exit code
 * (non-zero blocks; we fail closed where Claude Code blocks only on 2) or by JSON on stdout
 * (guard/hook-output.ts). Around each tool call, the same in both engines (a guard of every call
 * that runs, and of `task`):
 * - Before: a block ends the round and the call gets a "not run" result with the hook's reason.
 *   `updatedInput` replaces arguments, and the changed call is judged again as an `[e]dit` at the
 *   approval question is (`judge`: the classifier, the rules, protected paths and the mode): a
 *   call that would then be refused or asked about does not run. `ask` refuses the call too (the
 *   question was asked before hooks run); `allow` changes nothing (it never loosens our rules).
 * - After: the hook sees the result too; a block or failure adds a note with its reason.
 * - Either: `additionalContext` is added to the result, `systemMessage` shown to the person,
 *   `continue: false` ends the run after this turn's calls (the call's state update says
 *   `stopReason: "hook_stop"`, which both engines end on; the result tells the model why).
 * Every run is reported (`hook` events): the trace shows what each hook did.
 */

/** What a hook came to, for the trace. */
export type HookOutcome = "passed" | "blocked" | "failed" | "timed_out" | "did_not_start" | "cancelled";

export interface HookReport {
  event: HookEvent;
  /** The hook's name, else its command. */
  hook: string;
  /** The tool, for the events of a call; else what the event is about (a prompt, a stop). */
  tool: string;
  toolCallId: string;
  outcome: HookOutcome;
  exitCode?: number | null;
  durationMs: number;
  /** Its stderr (or why it did not start), cut for the trace. */
  message?: string;
}

/** A session's hooks: the configured ones, how one runs (app/hooks.ts), and where reports go. */
export interface ToolHooks {
  specs: readonly HookSpec[];
  run(spec: HookSpec, input: string, signal?: AbortSignal): Promise<HookRunResult>;
  report(report: HookReport): void;
  /**
   * A call's hook reports go into the call's event stream (the guard's `config.writer`), where the
   * engine reports the call first and labels a sub-agent's; else to `report`.
   */
  reportsInStream?: boolean;
  /** Shows the person a hook's `systemMessage` or why it stopped the turn (never the model). */
  notify?(message: string): void;
}

/** Judges a call whose arguments a hook changed (`updated`: the fields it gave), as an edit at the approval question is judged (agent/hook-judge.ts). */
export type JudgeUpdate = (
  call: GuardedCall,
  updated: Record<string, unknown>,
  config: GuardConfig,
) => Promise<{ ok: true; args: Record<string, unknown> } | { ok: false; reason: string }>;

/** Characters of a hook's stderr shown in the trace's line. */
const TRACE_MESSAGE_CHARS = 300;

/** Claude Code's `permission_mode` for each of our approval modes. */
const PERMISSION_MODES: Record<string, string> = {
  suggest: "default",
  "auto-edit": "acceptEdits",
  "full-auto": "bypassPermissions",
  plan: "plan",
};

/**
 * Claude Code's names for our arguments, added beside ours in `tool_input` (our relative paths
 * become its absolute `file_path`). A name absent here is the same in both.
 */
const CLAUDE_ARGUMENTS: Record<string, string> = {
  filePath: "file_path",
  oldString: "old_string",
  newString: "new_string",
  replaceAll: "replace_all",
  timeoutMs: "timeout",
};

export interface HookCallContext {
  threadId: string;
  workspace: string;
  signal?: AbortSignal;
  /** The timeout of hooks that set none (Settings.hookTimeoutMs), for the wording of a timeout. */
  timeoutMs?: number;
  /** Our approval mode in force (sent as Claude Code's `permission_mode`). */
  mode?: string;
}

/** The fields every event's JSON has: Claude Code's. mini-cursor keeps no transcript file, so `transcript_path` is null. */
export function hookPayload(event: HookEvent, context: HookCallContext, fields: Record<string, unknown>): string {
  return JSON.stringify({
    hook_event_name: event,
    session_id: context.threadId,
    transcript_path: null,
    cwd: context.workspace,
    ...(context.mode
      ? { permission_mode: PERMISSION_MODES[context.mode] ?? context.mode, approval_mode: context.mode }
      : {}),
    ...fields,
  });
}

/**
 * A call's arguments with Claude Code's names added (paths absolute), and the files it touches when
 * they are known (apply_patch): all as file_paths, `file` (the first by default) as file_path.
 */
function toolInput(
  call: GuardedCall,
  workspace: string,
  paths: string[] | undefined,
  file = paths?.[0],
): Record<string, unknown> {
  const input: Record<string, unknown> = { ...call.args };
  for (const [ours, theirs] of Object.entries(CLAUDE_ARGUMENTS)) {
    const value = call.args[ours];
    if (value === undefined || theirs in input) continue;
    input[theirs] = ours === "filePath" && typeof value === "string" ? path.resolve(workspace, value) : value;
  }
  if (input.file_path === undefined && call.name === "apply_patch" && paths?.length) {
    input.file_path = file;
    input.file_paths = paths;
  }
  return input;
}

/**
 * The file_path of each time a call's hooks run: once per file for a patch of several (a script
 * written for Claude Code checks file_path, one file, and must see each one the patch adds,
 * changes, deletes or moves to); once otherwise.
 */
const hookFiles = (call: GuardedCall, paths: string[] | undefined): (string | undefined)[] =>
  call.name === "apply_patch" && paths && paths.length > 1 ? paths : [paths?.[0]];

function toolPayload(
  event: HookEvent,
  call: GuardedCall,
  context: HookCallContext,
  paths: string[] | undefined,
  result?: ToolMessage,
  file?: string,
): string {
  return hookPayload(event, context, {
    tool_name: claudeToolName(call.name),
    tool: call.name,
    tool_input: toolInput(call, context.workspace, paths, file),
    tool_use_id: call.id,
    ...(result
      ? {
          tool_response: {
            status: result.status ?? "success",
            content: textOf(result),
          },
        }
      : {}),
  });
}

function outcomeOf(run: HookRunResult, blocks: boolean, answer: HookAnswer): HookOutcome {
  if (run.status === "timed_out") return "timed_out";
  if (run.status === "failed_to_start") return "did_not_start";
  if (run.status === "cancelled") return "cancelled";
  if (run.exitCode === 0 && !answer.block) return "passed";
  return blocks ? "blocked" : "failed";
}

/** The hook's own words for the model: its stderr, else its stdout, else what happened. */
function reasonOf(run: HookRunResult, timeoutMs: number | undefined): string {
  const said = run.stderr.trim() || run.stdout.trim();
  if (run.status === "timed_out")
    return `it did not finish within ${Math.round((timeoutMs ?? 0) / 100) / 10} s${said ? ` (it printed: ${said})` : ""}`;
  if (run.status === "failed_to_start") return `it could not start (${run.error ?? "unknown error"})`;
  return said || `it exited with code ${run.exitCode} and printed no reason`;
}

/** One hook that ran: the spec, its answer and outcome. */
export interface HookRan {
  spec: HookSpec;
  answer: HookAnswer;
  outcome: HookOutcome;
  /** Its exit status when it exited (null: it did not). */
  exitCode: number | null;
}

/**
 * Runs the hooks of `event` whose matcher covers `subject` (a tool's name, a `source`, a
 * `trigger`), in the order configured, each with `input` on stdin; reports each. With
 * `stopAtBlock`, the first that blocks ends the round. `stdoutIsContext`: plain stdout is context.
 */
export async function runEventHooks(
  hooks: ToolHooks,
  event: HookEvent,
  subject: string,
  input: string,
  options: {
    id?: string;
    signal?: AbortSignal;
    timeoutMs?: number;
    stopAtBlock?: boolean;
    stdoutIsContext?: boolean;
    /** The call's event stream (the guard's `config.writer`), for `ToolHooks.reportsInStream`. */
    writer?: (chunk: unknown) => void;
  },
): Promise<HookRan[]> {
  const ran: HookRan[] = [];
  for (const spec of hooks.specs) {
    if (spec.event !== event || !hookMatches(spec, subject)) continue;
    const run = await hooks.run(spec, input, options.signal);
    const answer = readHookAnswer(run, reasonOf(run, spec.timeoutMs ?? options.timeoutMs), options.stdoutIsContext);
    const outcome = outcomeOf(run, options.stopAtBlock ?? false, answer);
    const message = run.stderr.trim() || run.error || answer.block;
    const report: HookReport = {
      event,
      hook: spec.label,
      tool: subject,
      toolCallId: options.id ?? "",
      outcome,
      ...(run.status === "exited" ? { exitCode: run.exitCode } : {}),
      durationMs: run.durationMs,
      ...(message ? { message: message.slice(0, TRACE_MESSAGE_CHARS) } : {}),
    };
    if (options.writer && hooks.reportsInStream)
      options.writer({ kind: "event", event: hookEvent(report) } satisfies EventSignal);
    else hooks.report(report);
    if (answer.systemMessage) hooks.notify?.(`Hook ${spec.label}: ${answer.systemMessage}`);
    if (answer.stop) hooks.notify?.(`Hook ${spec.label} stopped the turn: ${answer.stop}`);
    ran.push({ spec, answer, outcome, exitCode: run.status === "exited" ? run.exitCode : null });
    if (options.stopAtBlock && (outcome !== "passed" || answer.stop)) break;
  }
  return ran;
}

/**
 * The fields of a hook's `updatedInput` that differ from what it was sent: a script that hands
 * back the whole `tool_input` with one field changed names both our `filePath` and Claude Code's
 * `file_path`, and only the one it changed counts.
 */
function changedFields(updated: Record<string, unknown>, sent: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(updated).filter(([k, v]) => JSON.stringify(v) !== JSON.stringify(sent[k])));
}

/** The stop reason a call's state update carries when a hook answered `continue: false`. */
export const HOOK_STOP = "hook_stop" satisfies StopReason;

/** Results for a turn's calls that had not started when a hook stopped the run (its task calls). */
export const hookStopResults = (calls: ReadonlyArray<{ id?: string; name: string }>): ToolMessage[] =>
  calls.map((call) =>
    notRunResult(call, `Not run: a hook the user configured stopped the run before this call started.`),
  );

/** A hook's report as the trace's `hook` event. */
export function hookEvent(r: HookReport): AgentEvent {
  return {
    type: "hook",
    id: r.toolCallId,
    tool: r.tool,
    event: r.event === "PreToolUse" ? "before" : r.event === "PostToolUse" ? "after" : r.event,
    hook: r.hook,
    outcome: r.outcome,
    ...(r.exitCode !== undefined ? { exitCode: r.exitCode } : {}),
    durationMs: r.durationMs,
    ...(r.message ? { message: r.message } : {}),
  };
}

/** What the model reads when a hook ended the turn (`continue: false`). */
const stopNote = (label: string, reason: string) =>
  `Note: a hook the user configured (${label}) stopped the run here: ${reason}. The user decides how to go on.`;

/**
 * The hooks guard: a call blocked by a hook before it gets a "not run" result and never runs; a
 * hook after it that fails adds a note to its result. `judge` judges a call a hook changed.
 */
export function hooksGuard(
  hooks: ToolHooks,
  context: Omit<HookCallContext, "threadId" | "signal" | "mode"> & { modeOf?: (config: GuardConfig) => string },
  judge?: JudgeUpdate,
): Guard {
  return async (guarded, next) => {
    const { config } = guarded;
    if (hooks.specs.length === 0) return next();
    const id = config.configurable?.thread_id;
    const at: HookCallContext = {
      workspace: context.workspace,
      timeoutMs: context.timeoutMs,
      threadId: typeof id === "string" ? id : "",
      signal: config.signal,
      mode: context.modeOf?.(config),
    };
    const paths = dispatchOf(guarded).batch.find((c) => c.id === guarded.call.id)?.access.paths;
    let call = guarded.call;
    const options = { id: call.id, signal: at.signal, timeoutMs: at.timeoutMs, writer: config.writer };
    /** The event's hooks for each of the call's files (hookFiles), each answer with the file_path it was sent; before: up to a block. */
    const eachFile = async (event: "PreToolUse" | "PostToolUse", result?: ToolMessage) => {
      const ran: (HookRan & { file?: string })[] = [];
      for (const file of hookFiles(call, paths)) {
        const payload = toolPayload(event, call, at, paths, result, file);
        const stopAtBlock = event === "PreToolUse";
        for (const r of await runEventHooks(hooks, event, call.name, payload, { ...options, stopAtBlock }))
          ran.push({ ...r, file });
        if (stopAtBlock && ran.some((r) => r.answer.block || r.answer.stop)) break;
      }
      return ran;
    };
    const before = guarded.resumed ? [] : await eachFile("PreToolUse");
    if (at.signal?.aborted) throw new Error("aborted");
    const notes = before.flatMap((b) =>
      b.answer.context ? [`Context from a hook (${b.spec.label}): ${b.answer.context}`] : [],
    );
    // The first hook that refuses the call: it is not run, and the result says why.
    const refuse = (why: string) => withNotes(notRunResult(call, refusedMessage(call.name, why)), notes);
    for (const { spec, answer, file } of before) {
      const by = `a hook the user configured (${spec.label})`;
      if (answer.block) return refuse(`${by} blocked it: ${answer.block}`);
      if (answer.stop) {
        guarded.update.stopReason = HOOK_STOP;
        notes.push(stopNote(spec.label, answer.stop));
        return refuse(`${by} stopped the turn`);
      }
      if (answer.ask)
        return refuse(
          `${by} asked for the user's approval (${answer.ask}); mini-cursor asks before hooks run, so a call a hook wants asked about is not run`,
        );
      if (answer.updatedInput) {
        const verdict = judge
          ? await judge(call, changedFields(answer.updatedInput, toolInput(call, at.workspace, paths, file)), config)
          : ({ ok: false, reason: "changed calls cannot be judged here" } as const);
        if (!verdict.ok) return refuse(`${by} changed its arguments, and the changed call ${verdict.reason}`);
        call = { ...call, args: verdict.args };
        Object.assign(guarded, { call });
        notes.push(`Note: a hook the user configured (${spec.label}) changed this call's arguments before it ran.`);
      }
    }
    const result = await next();
    const after = await eachFile("PostToolUse", result);
    for (const { spec, answer, outcome } of after) {
      const label = `a hook the user configured to run after this call (${spec.label})`;
      if (answer.block && outcome !== "cancelled") notes.push(`Note: ${label} reported: ${answer.block}`);
      if (answer.context) notes.push(`Context from a hook (${spec.label}): ${answer.context}`);
      if (answer.stop) {
        guarded.update.stopReason = HOOK_STOP;
        notes.push(stopNote(spec.label, answer.stop));
      }
    }
    return withNotes(result, notes);
  };
}
