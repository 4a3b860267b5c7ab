import type { EventSink } from "../contracts/events.js";
import type { ApprovalMode } from "../contracts/modes.js";
import { hookEvent, hookPayload, runEventHooks, type HookRan, type ToolHooks } from "../guard/hooks.js";
import {
  HooksConfigError,
  parseHooks,
  readUserHooks,
  type HookEvent,
  type HookSpec,
} from "../security/hooks-config.js";
import { loadProjectRules, RulesError } from "../security/rules.js";
import type { Settings } from "../settings.js";
import { runHookProcess } from "../workspace/hook-process.js";
import type { SpawnSpecBuilder } from "../workspace/processes.js";

/** How commands are started in this session (app/tools.ts): hooks start the same way. */
export interface CommandLaunch {
  env: NodeJS.ProcessEnv;
  spawnSpec?: SpawnSpecBuilder;
  redact: readonly string[];
}

/**
 * The most times in a row Stop hooks may make the agent go on (Claude Code's "decision: block"
 * on Stop) before mini-cursor ends the turn anyway: a hook that always blocks would otherwise
 * run the model forever. Each further run's payload has `stop_hook_active: true`.
 */
export const MAX_STOP_CONTINUATIONS = 5;
/** Claude Code's exit code for "block": on Stop, the only non-zero exit that makes the agent go on. */
const STOP_BLOCKING_EXIT = 2;

type HookSettings = Pick<Settings, "workspace" | "trustStore" | "mcp" | "claudeUserSettings">;

/**
 * The session's hooks: the user's own (our config file, then Claude Code's `~/.claude/settings.json`),
 * then those of the project's files the person trusted: our rules files and Claude Code's
 * `.claude/settings.json` / `settings.local.json` (security/rules.ts leaves an untrusted file's
 * out). A hooks block that cannot be read stops the session: a hook meant to block calls must not
 * silently not run. What a block holds that we do not run is named in one notice.
 */
export function loadSessionHooks(settings: HookSettings, note: (text: string) => void): HookSpec[] {
  const specs: HookSpec[] = [];
  const skipped: string[] = [];
  const add = (parsed: { hooks: HookSpec[]; unsupported: string[] }, file: string) => {
    specs.push(...parsed.hooks);
    if (parsed.unsupported.length > 0) skipped.push(`${parsed.unsupported.join(", ")} (${file})`);
  };
  for (const file of [settings.mcp.userConfig, settings.claudeUserSettings ?? ""].filter(Boolean))
    add(readUserHooks(file), file);
  let project: { block: unknown; file: string }[] = [];
  try {
    project = loadProjectRules(settings.workspace, { trustStore: settings.trustStore }).hooks ?? [];
  } catch (err) {
    if (!(err instanceof RulesError)) throw err; // reported by the CLI before it gets here
  }
  for (const { block, file } of project) add(parseHooks(block, file), file);
  if (skipped.length > 0)
    note(
      `Hooks: skipped what mini-cursor does not run: ${skipped.join("; ")}. The other hooks run (docs/configuration.md#hooks).`,
    );
  return specs;
}

/** The environment a hook runs with: the commands', and the project root under Claude Code's and Gemini CLI's names. */
export function hookEnvironment(env: NodeJS.ProcessEnv, workspace: string): NodeJS.ProcessEnv {
  return { ...env, CLAUDE_PROJECT_DIR: workspace, GEMINI_PROJECT_DIR: workspace };
}

/** The hooks of a session, run as its commands run, reported on the trace; undefined when none are configured. */
export function createSessionHooks(
  settings: HookSettings & Pick<Settings, "hookTimeoutMs">,
  launch: CommandLaunch,
  emit: EventSink,
  note: (text: string) => void,
  /** An engine's stream carries the calls' hook reports (the CLI's engines); false: all go to `emit` (Studio). */
  reportsInStream = true,
): ToolHooks | undefined {
  let specs: HookSpec[];
  try {
    specs = loadSessionHooks(settings, note);
  } catch (err) {
    if (err instanceof HooksConfigError)
      throw new HooksConfigError(
        `${err.message}. Fix the hooks there (docs/configuration.md#hooks): mini-cursor does not start with hooks it cannot read, since a hook meant to block calls would not run.`,
      );
    throw err;
  }
  if (specs.length === 0) return undefined;
  const env = hookEnvironment(launch.env, settings.workspace);
  return {
    specs,
    reportsInStream,
    run: (spec, input, signal) =>
      runHookProcess({
        command: spec.command,
        cwd: settings.workspace,
        input,
        timeoutMs: spec.timeoutMs ?? settings.hookTimeoutMs,
        env,
        spawnSpec: launch.spawnSpec,
        redact: launch.redact,
        signal,
      }),
    report: (r) => emit(hookEvent(r)),
    notify: note,
  };
}

/** What the session-level hooks came to, for the session (app/session.ts). */
export interface PromptVerdict {
  /** The prompt is not sent: why, for the person. */
  blocked?: string;
  /** Added to the request for the model (stdout or `additionalContext`). */
  context?: string;
  /** `continue: false`: the prompt is not sent, and the turn ends with this reason. */
  stop?: string;
}

/**
 * The session-level events (Claude Code's semantics), run by the session (app/session.ts) so
 * both engines get them the same: SessionStart, UserPromptSubmit, Stop, PreCompact,
 * Notification, SessionEnd. None when no hooks are configured.
 */
export function sessionEventHooks(hooks: ToolHooks | undefined, workspace: string, timeoutMs: number) {
  const fire = async (
    event: HookEvent,
    at: { threadId: string; mode?: ApprovalMode },
    subject: string,
    fields: Record<string, unknown>,
    options: { stdoutIsContext?: boolean; stopAtBlock?: boolean } = {},
  ): Promise<HookRan[]> => {
    if (!hooks?.specs.some((s) => s.event === event)) return [];
    const input = hookPayload(event, { threadId: at.threadId, workspace, mode: at.mode }, fields);
    return runEventHooks(hooks, event, subject, input, { timeoutMs, ...options });
  };
  const contextOf = (ran: HookRan[]) =>
    ran.flatMap((r) => (r.answer.context && !r.answer.block ? [r.answer.context] : [])).join("\n\n") || undefined;
  return {
    /** SessionStart (`source`: startup, resume, clear, compact): its stdout or additionalContext for the model. */
    async start(at: { threadId: string; mode?: ApprovalMode }, source: string): Promise<string | undefined> {
      return contextOf(await fire("SessionStart", at, source, { source }, { stdoutIsContext: true }));
    },
    /** UserPromptSubmit: a block (exit 2, any failure: we fail closed, or `decision: "block"`) keeps the prompt from the model. */
    async prompt(at: { threadId: string; mode?: ApprovalMode }, prompt: string): Promise<PromptVerdict> {
      const ran = await fire("UserPromptSubmit", at, "", { prompt }, { stdoutIsContext: true, stopAtBlock: true });
      const blocked = ran.find((r) => r.answer.block);
      const stop = ran.find((r) => r.answer.stop);
      return {
        ...(blocked ? { blocked: `${blocked.spec.label}: ${blocked.answer.block}` } : {}),
        ...(stop ? { stop: stop.answer.stop } : {}),
        ...(contextOf(ran) ? { context: contextOf(ran) } : {}),
      };
    },
    /**
     * Stop: the reason a hook gives for the agent to go on (exit 2 with stderr, or `decision:
     * "block"` with `reason`), else undefined. Another non-zero exit is reported, not obeyed:
     * a Stop hook that blocks makes the model work more, it guards nothing.
     */
    async stop(at: { threadId: string; mode?: ApprovalMode }, active: boolean, last: string | undefined) {
      const ran = await fire("Stop", at, "", {
        stop_hook_active: active,
        ...(last !== undefined ? { last_assistant_message: last } : {}),
      });
      const go = ran.find((r) => r.answer.block && (r.exitCode === 0 || r.exitCode === STOP_BLOCKING_EXIT));
      return go?.answer.block;
    },
    /** PreCompact (`trigger`: manual for /compact; `custom_instructions`: its focus). */
    async preCompact(at: { threadId: string; mode?: ApprovalMode }, trigger: "manual" | "auto", instructions: string) {
      await fire("PreCompact", at, trigger, { trigger, custom_instructions: instructions });
    },
    /** Notification: the person is asked for approval (`message` says what). */
    async notification(at: { threadId: string; mode?: ApprovalMode }, message: string) {
      await fire("Notification", at, "permission_prompt", { message, notification_type: "permission_prompt" });
    },
    /** SessionEnd (`reason`: clear, prompt_input_exit, other). */
    async end(at: { threadId: string; mode?: ApprovalMode }, reason: string) {
      await fire("SessionEnd", at, reason, { reason });
    },
  };
}

export type SessionEventHooks = ReturnType<typeof sessionEventHooks>;
