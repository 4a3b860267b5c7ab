import { readFileSync } from "node:fs";
import { z } from "zod";

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

/** Events mini-cursor runs, with the other agents' names for them. */
const EVENT_NAMES = {
  PreToolUse: "before",
  BeforeTool: "before",
  PostToolUse: "after",
  AfterTool: "after",
} as const;
export type HookEvent = (typeof EVENT_NAMES)[keyof typeof EVENT_NAMES];

/** Longest timeout a hook may set for itself (10 minutes, as for a command). */
export const MAX_HOOK_TIMEOUT_SECONDS = 600;
/** Matchers longer than this are refused (a regular expression is compiled from each). */
const MAX_MATCHER_CHARS = 500;

const hookCommandSchema = z
  .object({
    type: z.literal("command").optional(),
    command: z.string().trim().min(1),
    /** Seconds, as in Claude Code (Gemini CLI's is milliseconds: see docs/configuration.md). */
    timeout: z.number().positive().max(MAX_HOOK_TIMEOUT_SECONDS).optional(),
    /** Gemini CLI's label; shown in the trace when given. */
    name: z.string().optional(),
    description: z.string().optional(),
  })
  .strict();

const matcherGroupSchema = z
  .object({
    matcher: z.string().max(MAX_MATCHER_CHARS).optional(),
    hooks: z.array(hookCommandSchema).min(1),
  })
  .strict();

/** The `hooks` block. Other agents' further events (Stop, SessionStart, …) are accepted and reported as not run. */
export const hooksSchema = z.record(z.string(), z.unknown());

const groupsSchema = z.array(matcherGroupSchema);

/** One configured hook, ready to match. */
export interface HookSpec {
  event: HookEvent;
  /** As written; "*" when every tool matches. */
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
 * Other agents' names for our tools, so a matcher copied from Claude Code (`Bash`, `Write|Edit`)
 * or Gemini CLI (`run_shell_command`, `replace`) matches the same calls here.
 */
const PEER_TOOL_NAMES: Record<string, readonly string[]> = {
  execute_command: ["Bash", "run_shell_command", "shell"],
  write_file: ["Write"],
  edit_file: ["Edit", "MultiEdit", "replace"],
  apply_patch: ["Edit", "MultiEdit", "replace"],
  read_file: ["Read"],
  list_directory: ["LS"],
  find_files: ["Glob", "glob"],
  search_files: ["Grep", "search_file_content"],
  write_todos: ["TodoWrite"],
};

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

/** Whether a hook's matcher covers this tool (its name or one of its peer names). */
export function hookMatches(spec: Pick<HookSpec, "matcher">, tool: string): boolean {
  const re = matcherRegExp(spec.matcher, "hook");
  if (!re) return true;
  return [tool, ...(PEER_TOOL_NAMES[tool] ?? [])].some((name) => re.test(name));
}

/**
 * The hooks of one `hooks` block (`file` names it in errors and in the trace), and the events it
 * names that mini-cursor does not run. Throws HooksConfigError when it is not in the shape above.
 */
export function parseHooks(block: unknown, file: string): { hooks: HookSpec[]; unsupported: string[] } {
  const top = hooksSchema.safeParse(block);
  if (!top.success)
    throw new HooksConfigError(`${file}: hooks must be an object of events, e.g. {"PreToolUse": [...]}`);
  const hooks: HookSpec[] = [];
  const unsupported: string[] = [];
  for (const [name, value] of Object.entries(top.data)) {
    const event = EVENT_NAMES[name as keyof typeof EVENT_NAMES];
    // Gemini CLI's switch ({"enabled": true}) is not an event.
    if (name === "enabled" || name === "disabled") continue;
    if (!event) {
      unsupported.push(name);
      continue;
    }
    const groups = groupsSchema.safeParse(value);
    if (!groups.success) {
      const issue = groups.error.issues[0]!;
      throw new HooksConfigError(`${file}: hooks.${name}.${issue.path.join(".")}: ${issue.message}`);
    }
    groups.data.forEach((group, i) => {
      const matcher = group.matcher?.trim() || "*";
      matcherRegExp(matcher, `${file}: hooks.${name}[${i}]`);
      for (const hook of group.hooks) {
        hooks.push({
          event,
          matcher,
          command: hook.command,
          ...(hook.timeout !== undefined ? { timeoutMs: Math.round(hook.timeout * 1000) } : {}),
          label: hook.name?.trim() || hook.command,
          file,
        });
      }
    });
  }
  return { hooks, unsupported };
}

/** The hooks of the user's own config file (missing: none); throws HooksConfigError when it cannot be read as JSON. */
export function readUserHooks(file: string): { hooks: HookSpec[]; unsupported: string[] } {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return { hooks: [], unsupported: [] };
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new HooksConfigError(`${file} is not valid JSON: ${(err as Error).message}`);
  }
  const block = (json as { hooks?: unknown } | null)?.hooks;
  return block === undefined ? { hooks: [], unsupported: [] } : parseHooks(block, file);
}
