import { z } from "zod";
import { parseConfig, readConfigText } from "./files.js";

/**
 * Hooks: commands the person configures to run before and after tool calls, in the shape Claude
 * Code's settings use (Gemini CLI's event names are read too):
 *
 *   { "hooks": { "PreToolUse": [ { "matcher": "write_file|edit_file",
 *                                  "hooks": [ { "type": "command", "command": "./check.sh", "timeout": 10 } ] } ],
 *                "PostToolUse": [ { "matcher": "*", "hooks": [ { "command": "npx prettier --write ." } ] } ] } }
 *
 * They come from the user's own config file (always) and from a project rules file only once the
 * person trusted that file's content (security/rules.ts): a hook is a program that runs on every
 * matching call, like an MCP server or an allow rule.
 */

/**
 * The events mini-cursor runs hooks on, by Claude Code's name (what `hook_event_name` says), with
 * the names Gemini CLI gives the same moments. `tool`: the event is about one tool call, so its
 * matcher is over tool names; the others match everything, or their `source`/`trigger`/`reason`.
 */
const EVENTS = {
  PreToolUse: { tool: true, aliases: ["BeforeTool"] },
  PostToolUse: { tool: true, aliases: ["AfterTool"] },
  UserPromptSubmit: { tool: false, aliases: ["BeforeAgent"] },
  Stop: { tool: false, aliases: ["AfterAgent"] },
  SubagentStop: { tool: false, aliases: [] },
  SessionStart: { tool: false, aliases: [] },
  SessionEnd: { tool: false, aliases: [] },
  PreCompact: { tool: false, aliases: ["PreCompress"] },
  Notification: { tool: false, aliases: [] },
} as const satisfies Record<string, { tool: boolean; aliases: readonly string[] }>;
export type HookEvent = keyof typeof EVENTS;

const EVENT_BY_NAME = new Map<string, HookEvent>(
  (Object.entries(EVENTS) as [HookEvent, (typeof EVENTS)[HookEvent]][]).flatMap(([event, { aliases }]) => [
    [event, event],
    ...aliases.map((alias) => [alias, event] as [string, HookEvent]),
  ]),
);

/** Longest timeout a hook may set for itself (10 minutes, as for a command). */
export const MAX_HOOK_TIMEOUT_SECONDS = 600;
/** Matchers longer than this are refused (a regular expression is compiled from each). */
const MAX_MATCHER_CHARS = 500;

/** The fields of one hook mini-cursor reads; any other (`statusMessage`, `if`, `async`, …) is named in one warning and skipped. */
const HOOK_FIELDS = new Set(["type", "command", "timeout", "name", "description"]);
const GROUP_FIELDS = new Set(["matcher", "hooks"]);

const hookCommandSchema = z.looseObject({
  /** Only "command" hooks run; Claude Code's "prompt" and "http" hooks are skipped with a warning. */
  type: z.string().optional(),
  command: z.string().trim().min(1).optional(),
  /** Seconds, as in Claude Code (Gemini CLI's is milliseconds: a value above the maximum is skipped with a warning). */
  timeout: z.number().positive().optional(),
  /** Gemini CLI's label; shown in the trace when given. */
  name: z.string().optional(),
  description: z.string().optional(),
});

const matcherGroupSchema = z.looseObject({
  matcher: z.string().max(MAX_MATCHER_CHARS).optional(),
  // Empty runs nothing (a placeholder Claude Code accepts); a bad matcher or command still stops the start: hooks fail closed.
  hooks: z.array(hookCommandSchema),
});

const groupsSchema = z.array(matcherGroupSchema);

/** One configured hook, ready to match. */
export interface HookSpec {
  event: HookEvent;
  /** As written; "*" when everything matches. */
  matcher: string;
  command: string;
  /** Milliseconds, when the hook sets its own timeout (else the setting applies). */
  timeoutMs?: number;
  /** How the trace names it: its `name`, else its command. */
  label: string;
  /** The file it is configured in. */
  file: string;
}

/** A hooks block that cannot be read; says where and what. */
export class HooksConfigError extends Error {
  override name = "HooksConfigError";
}

/**
 * Claude Code's name for each of our tools (the `tool_name` a hook reads, first), then the other
 * names a matcher may use for it: Gemini CLI's (`run_shell_command`, `replace`). A matcher copied
 * from Claude Code (`Bash`, `Write|Edit`) matches the same calls here. apply_patch changes files
 * as Claude Code's Edit does, so it is Edit too. An MCP tool (`server__tool`) is Claude Code's
 * `mcp__server__tool` (mcp/names.ts).
 */
export const PEER_TOOL_NAMES: Readonly<Record<string, readonly string[]>> = {
  execute_command: ["Bash", "run_shell_command", "shell"],
  write_file: ["Write", "write_file"],
  edit_file: ["Edit", "MultiEdit", "replace"],
  apply_patch: ["Edit", "MultiEdit", "replace"],
  read_file: ["Read"],
  list_directory: ["LS", "list_directory"],
  find_files: ["Glob", "glob"],
  search_files: ["Grep", "search_file_content"],
  write_todos: ["TodoWrite"],
  task: ["Task"],
};

/** The name Claude Code gives this tool: its own for ours, `mcp__server__tool` for an MCP server's, else ours. */
export function claudeToolName(tool: string): string {
  const peer = PEER_TOOL_NAMES[tool]?.[0];
  if (peer) return peer;
  const mcp = /^(.+?)__(.+)$/.exec(tool);
  return mcp ? `mcp__${mcp[1]}__${mcp[2]}` : tool;
}

function matcherRegExp(matcher: string, where: string): RegExp | undefined {
  if (matcher === "" || matcher === "*") return undefined;
  try {
    return new RegExp(`^(?:${matcher})$`);
  } catch (err) {
    throw new HooksConfigError(
      `${where}: matcher "${matcher}" is not a valid regular expression: ${(err as Error).message}`,
    );
  }
}

/** Whether a hook's matcher covers this tool (its name, Claude Code's, or another peer's) or, for other events, this `source`/`trigger`. */
export function hookMatches(spec: Pick<HookSpec, "matcher">, name: string): boolean {
  const re = matcherRegExp(spec.matcher, "hook");
  if (!re) return true;
  return [name, claudeToolName(name), ...(PEER_TOOL_NAMES[name] ?? [])].some((n) => re.test(n));
}

/**
 * The hooks of one `hooks` block (`file` names it in errors and in the trace), and what it holds
 * that mini-cursor skips (events, fields and hook types it does not run), each named once for the
 * warning. Throws HooksConfigError when it is not in the shape above.
 */
export function parseHooks(block: unknown, file: string): { hooks: HookSpec[]; unsupported: string[] } {
  // An object of events; events mini-cursor does not run are skipped with a warning.
  const top = z.record(z.string(), z.unknown()).safeParse(block);
  if (!top.success)
    throw new HooksConfigError(`${file}: hooks must be an object of events, e.g. {"PreToolUse": [...]}`);
  const hooks: HookSpec[] = [];
  const skipped = new Set<string>();
  for (const [name, value] of Object.entries(top.data)) {
    // Gemini CLI's switch ({"enabled": true}) is not an event.
    if (name === "enabled" || name === "disabled") continue;
    const event = EVENT_BY_NAME.get(name);
    if (!event) {
      skipped.add(`event ${name}`);
      continue;
    }
    const groups = groupsSchema.safeParse(value);
    if (!groups.success) {
      const issue = groups.error.issues[0]!;
      throw new HooksConfigError(`${file}: hooks.${name}.${issue.path.join(".")}: ${issue.message}`);
    }
    groups.data.forEach((group, i) => {
      for (const key of Object.keys(group)) if (!GROUP_FIELDS.has(key)) skipped.add(`field ${key}`);
      const matcher = group.matcher?.trim() || "*";
      matcherRegExp(matcher, `${file}: hooks.${name}[${i}]`);
      group.hooks.forEach((hook, j) => {
        for (const key of Object.keys(hook)) if (!HOOK_FIELDS.has(key)) skipped.add(`field ${key}`);
        if (hook.type !== undefined && hook.type !== "command") {
          skipped.add(`type "${hook.type}" hooks`);
          return;
        }
        if (!hook.command)
          throw new HooksConfigError(`${file}: hooks.${name}.${i}.hooks.${j}.command: a command hook needs a command`);
        let timeout = hook.timeout;
        if (timeout !== undefined && timeout > MAX_HOOK_TIMEOUT_SECONDS) {
          skipped.add(`timeout ${timeout} (seconds here, at most ${MAX_HOOK_TIMEOUT_SECONDS}; the default applies)`);
          timeout = undefined;
        }
        hooks.push({
          event,
          matcher,
          command: hook.command,
          ...(timeout !== undefined ? { timeoutMs: Math.round(timeout * 1000) } : {}),
          label: hook.name?.trim() || hook.command,
          file,
        });
      });
    });
  }
  return { hooks, unsupported: [...skipped] };
}

/** The hooks of the user's own config file (missing: none); throws HooksConfigError when it cannot be read as JSON. */
export function readUserHooks(file: string): { hooks: HookSpec[]; unsupported: string[] } {
  const text = readConfigText(file, HooksConfigError);
  const json = text === undefined ? undefined : parseConfig(text, file, z.unknown(), HooksConfigError);
  const block = (json as { hooks?: unknown } | null | undefined)?.hooks;
  return block === undefined ? { hooks: [], unsupported: [] } : parseHooks(block, file);
}
