import type { EventSink } from "../agent/events.js";
import type { ToolHooks } from "../agent/tool-hooks.js";
import { HooksConfigError, parseHooks, readUserHooks, type HookSpec } from "../security/hooks-config.js";
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
 * The session's hooks: the user's config file's, then those of the project's rules files the
 * person trusted (security/rules.ts leaves an untrusted file's out). A hooks block that cannot be
 * read stops the session: a hook meant to block calls must not silently not run.
 */
export function loadSessionHooks(
  settings: Pick<Settings, "workspace" | "trustStore" | "mcp">,
  note: (text: string) => void,
): HookSpec[] {
  const user = readUserHooks(settings.mcp.userConfig);
  const specs = [...user.hooks];
  const unsupported = [...user.unsupported.map((e) => `${e} (${settings.mcp.userConfig})`)];
  let project: { block: unknown; file: string }[] = [];
  try {
    project = loadProjectRules(settings.workspace, { trustStore: settings.trustStore }).hooks ?? [];
  } catch (err) {
    if (!(err instanceof RulesError)) throw err; // reported by the CLI before it gets here
  }
  for (const { block, file } of project) {
    const parsed = parseHooks(block, file);
    specs.push(...parsed.hooks);
    unsupported.push(...parsed.unsupported.map((e) => `${e} (${file})`));
  }
  if (unsupported.length > 0)
    note(
      `Hooks on ${unsupported.join(", ")} are not run: mini-cursor runs hooks before and after tool calls only (PreToolUse/BeforeTool, PostToolUse/AfterTool).`,
    );
  return specs;
}

/** The hooks of a session, run as its commands run, reported on the trace; undefined when none are configured. */
export function createSessionHooks(
  settings: Pick<Settings, "workspace" | "trustStore" | "mcp" | "hookTimeoutMs">,
  launch: CommandLaunch,
  emit: EventSink,
  note: (text: string) => void,
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
  return {
    specs,
    run: (spec, input, signal) =>
      runHookProcess({
        command: spec.command,
        cwd: settings.workspace,
        input,
        timeoutMs: spec.timeoutMs ?? settings.hookTimeoutMs,
        env: launch.env,
        spawnSpec: launch.spawnSpec,
        redact: launch.redact,
        signal,
      }),
    report: (r) =>
      emit({
        type: "hook",
        id: r.toolCallId,
        tool: r.tool,
        event: r.event,
        hook: r.hook,
        outcome: r.outcome,
        ...(r.exitCode !== undefined ? { exitCode: r.exitCode } : {}),
        durationMs: r.durationMs,
        ...(r.message ? { message: r.message } : {}),
      }),
  };
}
