import { ToolMessage, type AIMessage } from "@langchain/core/messages";
import { hookMatches, type HookEvent, type HookSpec } from "../security/hooks-config.js";
import { notRunResult, refusedMessage } from "../policy/approval.js";
import type { HookRunResult } from "../workspace/hook-process.js";

/**
 * The person's hooks around each tool call, for both engines (agent/tool-step.ts calls
 * `withToolHooks` for every call that runs): the hooks whose matcher covers the tool run in the
 * order configured, each with the call as JSON on stdin.
 * - Before: a non-zero exit blocks the call, and its stderr is the reason the model reads. A
 *   hook that times out or cannot start blocks it too: a rule that could not be checked is not
 *   passed. The first blocking hook ends the round.
 * - After: the hook sees the result too; a non-zero exit or a timeout adds a note with its
 *   stderr to the result the model reads. The call has happened either way.
 * Every run is reported (`hook` events): the trace shows what each hook did.
 */

type ToolCall = NonNullable<AIMessage["tool_calls"]>[number];

/** What a hook came to, for the trace. */
export type HookOutcome = "passed" | "blocked" | "failed" | "timed_out" | "did_not_start" | "cancelled";

export interface HookReport {
  event: HookEvent;
  /** The hook's name, else its command. */
  hook: string;
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
}

/** Characters of a hook's stderr shown in the trace's line. */
const TRACE_MESSAGE_CHARS = 300;

/** The names the JSON on stdin gives the events: Claude Code's, so its hook scripts read it as they are. */
const EVENT_FIELD: Record<HookEvent, string> = { before: "PreToolUse", after: "PostToolUse" };

function hookInput(event: HookEvent, call: ToolCall, context: HookCallContext, result?: ToolMessage): string {
  return JSON.stringify({
    hook_event_name: EVENT_FIELD[event],
    tool_name: call.name,
    tool_input: call.args,
    tool_use_id: call.id,
    session_id: context.threadId,
    cwd: context.workspace,
    ...(result
      ? {
          tool_response: {
            status: result.status ?? "success",
            content: typeof result.content === "string" ? result.content : JSON.stringify(result.content),
          },
        }
      : {}),
  });
}

function outcomeOf(run: HookRunResult, event: HookEvent): HookOutcome {
  if (run.status === "timed_out") return "timed_out";
  if (run.status === "failed_to_start") return "did_not_start";
  if (run.status === "cancelled") return "cancelled";
  if (run.exitCode === 0) return "passed";
  return event === "before" ? "blocked" : "failed";
}

/** The hook's own words for the model: its stderr, else its stdout, else what happened. */
function reasonOf(spec: HookSpec, run: HookRunResult, timeoutMs: number | undefined): string {
  const said = run.stderr.trim() || run.stdout.trim();
  if (run.status === "timed_out")
    return `it did not finish within ${Math.round((timeoutMs ?? 0) / 100) / 10} s${said ? ` (it printed: ${said})` : ""}`;
  if (run.status === "failed_to_start") return `it could not start (${run.error ?? "unknown error"})`;
  return said || `it exited with code ${run.exitCode} and printed no reason`;
}

export interface HookCallContext {
  threadId: string;
  workspace: string;
  signal?: AbortSignal;
  /** The timeout of hooks that set none (Settings.hookTimeoutMs), for the wording of a timeout. */
  timeoutMs?: number;
}

async function runMatching(
  hooks: ToolHooks,
  event: HookEvent,
  call: ToolCall,
  context: HookCallContext,
  result?: ToolMessage,
): Promise<{ spec: HookSpec; run: HookRunResult; outcome: HookOutcome }[]> {
  const ran = [];
  for (const spec of hooks.specs) {
    if (spec.event !== event || !hookMatches(spec, call.name)) continue;
    const run = await hooks.run(spec, hookInput(event, call, context, result), context.signal);
    const outcome = outcomeOf(run, event);
    const message = run.stderr.trim() || run.error;
    hooks.report({
      event,
      hook: spec.label,
      tool: call.name,
      toolCallId: call.id ?? "",
      outcome,
      ...(run.status === "exited" ? { exitCode: run.exitCode } : {}),
      durationMs: run.durationMs,
      ...(message ? { message: message.slice(0, TRACE_MESSAGE_CHARS) } : {}),
    });
    ran.push({ spec, run, outcome });
    if (event === "before" && outcome !== "passed") break;
  }
  return ran;
}

/** Runs `run` (the call) between its hooks; a blocked call gets a "not run" result and never runs. */
export async function withToolHooks(
  hooks: ToolHooks | undefined,
  call: ToolCall,
  context: HookCallContext,
  run: () => Promise<ToolMessage>,
): Promise<ToolMessage> {
  if (!hooks || hooks.specs.length === 0) return run();
  const before = await runMatching(hooks, "before", call, context);
  if (context.signal?.aborted) throw new Error("aborted");
  const stop = before.find((b) => b.outcome !== "passed");
  if (stop) {
    const timeout = stop.spec.timeoutMs ?? context.timeoutMs;
    return notRunResult(
      call,
      refusedMessage(
        call.name,
        `a hook the user configured (${stop.spec.label}) blocked it: ${reasonOf(stop.spec, stop.run, timeout)}`,
      ),
    );
  }
  const result = await run();
  const after = await runMatching(hooks, "after", call, context, result);
  const notes = after
    .filter((a) => a.outcome !== "passed" && a.outcome !== "cancelled")
    .map(
      (a) =>
        `Note: a hook the user configured to run after this call (${a.spec.label}) reported: ${reasonOf(a.spec, a.run, a.spec.timeoutMs ?? context.timeoutMs)}`,
    );
  if (notes.length === 0) return result;
  const content = typeof result.content === "string" ? result.content : JSON.stringify(result.content);
  return new ToolMessage({
    tool_call_id: result.tool_call_id,
    name: result.name,
    status: result.status,
    content: [content, ...notes].join("\n\n"),
    artifact: result.artifact,
  });
}
