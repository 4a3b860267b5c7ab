import os from "node:os";
import { ToolMessage } from "@langchain/core/messages";
import path from "node:path";
import { classifyCommand, type Classification } from "../security/classify.js";
import { locate } from "../security/locations.js";
import {
  loadProjectRules,
  ruleForCommand,
  ruleMatches,
  ruleWords,
  RulesError,
  type ProjectRules,
} from "../security/rules.js";
import { commandRulesReason, fileRulesReason } from "../security/rules-guard.js";
import type { Word } from "../security/shell-parse.js";
import type { ApprovalResponse } from "../agent/events.js";
import type { ApprovalMode } from "../settings.js";
import { editedPaths } from "./edited-paths.js";
import { planModeReason, runsInPlanMode } from "./plan-mode.js";
import { isMcpCall, mcpApprovalRules, mcpNeedsApproval, mcpToolOf } from "../mcp/approval.js";
import { READ_ONLY_TOOLS } from "../tools/index.js";

/** Tools that change files; they ask only in `suggest` mode. */
const EDIT_TOOLS = new Set(["write_file", "edit_file", "apply_patch"]);
/** Tools that run commands; they ask in `suggest` and `auto-edit`. */
const COMMAND_TOOLS = new Set(["execute_command"]);

export interface ToolCallLike {
  name: string;
  args: Record<string, unknown>;
}

/**
 * The key an "always" answer is remembered under: the tool, and for commands the tool and an
 * allow rule (`execute_command:git log -5`): the command prefix shown, never more.
 */
export function alwaysKey(call: ToolCallLike): string {
  if (COMMAND_TOOLS.has(call.name)) {
    const argv = String(call.args.command ?? "")
      .trim()
      .split(/\s+/);
    return `${call.name}:${ruleForCommand(argv) ?? argv[0] ?? ""}`;
  }
  return call.name;
}

/**
 * Whether a call may need a question or a refusal, so the graph routes its turn through the
 * approve node. Every tool not known to only read (READ_ONLY_TOOLS, which `classifyCall` lets run
 * in every mode) does: a new tool (an MCP server's) is never
 * routed past `classifyCall`. In plan mode only plan mode's own list passes (stop_process does not).
 */
export function mayNeedApproval(call: ToolCallLike, mode?: ApprovalMode): boolean {
  if (mode === "plan") return !runsInPlanMode(call.name);
  return !READ_ONLY_TOOLS.has(call.name);
}

/** Files in the repository's `.git` folder: hooks and settings there run programs. */
const GIT_DIR = /^\.git(\/|$)/;

/** Whether a remembered "always" key covers one command of a line (its rule is a prefix of it). */
function keyCovers(key: string, tool: string, words: readonly Word[]): boolean {
  if (!key.startsWith(`${tool}:`)) return false;
  return ruleMatches({ words: ruleWords(key.slice(tool.length + 1)) }, words);
}

/** What the engines need to decide about calls: where they run. */
export interface ApprovalContext {
  /** Workspace root (rules are read from here; paths are judged against it). */
  workspace: string;
  /** The home folder (default: os.homedir()). */
  home?: string;
  /** The toolset, for what MCP tools declare about themselves (their server, `readOnlyHint`). */
  tools?: readonly { name: string; metadata?: Record<string, unknown> }[];
}

/** What to do with one call, decided before it runs. */
export interface CallDecision {
  /** run: no question; ask: interrupt and ask; deny: refuse without asking (project rules). */
  action: "run" | "ask" | "deny";
  /** Why it asks or is refused (the interrupt's `reason`, and what the model is told). */
  reason?: string;
  /** True when an "always" answer must not be remembered: it asks every time (dangerous, unreadable, an ask rule). */
  alwaysAsks: boolean;
  /** What an "always" answer records for this thread (an allow rule for every command it runs). */
  alwaysKeys: string[];
  /** For commands: the allow rules themselves (`git log -5`), shown in the question and saved by "always-project". */
  alwaysRules?: string[];
}

function commandRules(call: ToolCallLike, commands: string[][]): string[] {
  const rules = [...new Set(commands.map(ruleForCommand).filter((r): r is string => r !== undefined))];
  return rules.length > 0 ? rules : [alwaysKey(call).slice(call.name.length + 1)].filter(Boolean);
}

/**
 * Decides about one call with the shell parser and the project rules. Commands that are
 * dangerous or unreadable ask in every mode (an "always" answer does not cover them), deny
 * rules refuse without asking, allow rules run in every mode; otherwise the approval mode and
 * this thread's "always" answers decide. Both engines call this.
 */
export async function classifyCall(
  call: ToolCallLike,
  mode: ApprovalMode,
  always: readonly string[],
  ctx: ApprovalContext,
): Promise<CallDecision> {
  // Plan mode: what may not run there is refused before anything else is asked or checked.
  if (mode === "plan" && !runsInPlanMode(call.name))
    return { action: "deny", reason: planModeReason(call.name), alwaysAsks: true, alwaysKeys: [] };
  if (COMMAND_TOOLS.has(call.name)) {
    let rules: ProjectRules | undefined;
    let rulesError: string | undefined;
    try {
      rules = loadProjectRules(ctx.workspace);
    } catch (err) {
      if (!(err instanceof RulesError)) throw err;
      rulesError = err.message;
    }
    const dir = typeof call.args.workingDirectory === "string" ? call.args.workingDirectory : undefined;
    const cwd = dir ? path.resolve(ctx.workspace, dir) : ctx.workspace;
    let verdict: Classification;
    try {
      verdict = await classifyCommand(String(call.args.command ?? ""), {
        workspace: ctx.workspace,
        cwd,
        home: ctx.home,
        rules,
        rulesError,
      });
    } catch (err) {
      verdict = {
        verdict: "ask",
        reason: `cannot check this command: the shell parser failed (${(err as Error).message})`,
        commands: [],
      };
    }
    const alwaysRules = commandRules(call, verdict.commands);
    const alwaysKeys = alwaysRules.map((r) => `${call.name}:${r}`);
    const rulesReason = verdict.verdict === "deny" ? undefined : commandRulesReason(String(call.args.command ?? ""));
    if (rulesReason) return { action: "ask", reason: rulesReason, alwaysAsks: true, alwaysKeys: [] };
    if (verdict.verdict === "deny") return { action: "deny", reason: verdict.reason, alwaysAsks: true, alwaysKeys: [] };
    if (verdict.verdict === "ask") return { action: "ask", reason: verdict.reason, alwaysAsks: true, alwaysKeys: [] };
    // Read-only commands (the built-in list) and those the project allows run in every mode.
    if (verdict.rule || verdict.readOnly || mode === "full-auto")
      return { action: "run", alwaysAsks: false, alwaysKeys, alwaysRules };
    const leaves =
      verdict.leaves ??
      verdict.commands.map((argv) => argv.map((value) => ({ value, dynamic: false, raw: value, kind: "word" })));
    if (leaves.length > 0 && leaves.every((words) => always.some((key) => keyCovers(key, call.name, words)))) {
      return { action: "run", alwaysAsks: false, alwaysKeys, alwaysRules };
    }
    return {
      action: "ask",
      reason: `runs a shell command (approval mode ${mode})`,
      alwaysAsks: false,
      alwaysKeys,
      alwaysRules,
    };
  }
  if (EDIT_TOOLS.has(call.name)) {
    for (const file of editedPaths(call)) {
      const target = locate({ value: file, dynamic: false, raw: file, kind: "word" }, ctx.workspace, {
        workspace: ctx.workspace,
        home: ctx.home ?? os.homedir(),
      });
      if (target?.kind === "rules") {
        return {
          action: "ask",
          reason: `changes the project's command rules (${file})`,
          alwaysAsks: true,
          alwaysKeys: [],
        };
      }
      if (target?.path && GIT_DIR.test(path.relative(ctx.workspace, target.path))) {
        return {
          action: "ask",
          reason: `changes the repository's own files (${file}), where git hooks and settings run programs`,
          alwaysAsks: true,
          alwaysKeys: [],
        };
      }
      const linked = await fileRulesReason(ctx.workspace, file);
      if (linked) return { action: "ask", reason: linked, alwaysAsks: true, alwaysKeys: [] };
    }
  }
  if (isMcpCall(call, ctx.tools)) {
    const reason = mcpNeedsApproval(
      call,
      mode,
      always,
      mcpApprovalRules(ctx.workspace),
      mcpToolOf(call.name, ctx.tools),
    );
    return reason
      ? { action: "ask", reason, alwaysAsks: false, alwaysKeys: [alwaysKey(call)] }
      : { action: "run", alwaysAsks: false, alwaysKeys: [] };
  }
  const reason = editReason(call, mode, always);
  return reason
    ? { action: "ask", reason, alwaysAsks: false, alwaysKeys: [alwaysKey(call)] }
    : { action: "run", alwaysAsks: false, alwaysKeys: [] };
}

/** What the question may offer: no "always" for calls that ask every time; the exact rules otherwise. */
export function approvalScope(decision: CallDecision): { asksEveryTime?: true; alwaysRules?: string[] } {
  if (decision.alwaysAsks) return { asksEveryTime: true };
  return decision.alwaysRules ? { alwaysRules: decision.alwaysRules } : {};
}

/**
 * Why a file change must be approved, or null when it may run: only `suggest` asks, unless this
 * thread answered "always" for the tool. Commands are judged by `classifyCall` with the parser.
 */
export function editReason(call: ToolCallLike, mode: ApprovalMode, always: readonly string[]): string | null {
  if (!EDIT_TOOLS.has(call.name) || mode !== "suggest" || always.includes(alwaysKey(call))) return null;
  return "changes a file (approval mode suggest)";
}

/** The closing sentences of a not-run result that speak to the model, not to the user. */
export const TELL_THE_USER = "Tell the user what was not done and why.";
export const DO_SOMETHING_ELSE = "Do something else or ask the user.";
export const DO_NOT_GET_AROUND = "Do not try to get around the rule; do something else or ask the user.";

/** How a declined call came to be declined, for the text the model reads. */
export interface DenialContext {
  /** Why the call needed approval. */
  reason?: string;
  /** The call asks in every mode (a dangerous command, a rules-file change): no flag allows it. */
  alwaysAsks: boolean;
  /** The approval mode the run used. */
  mode: ApprovalMode;
}

/**
 * What would have let a call run without a person, fitted to the mode in use: an edit in
 * `suggest` needs only `auto-edit`; a command needs `full-auto`; a call that asks in every mode
 * needs a person on a terminal or an allow rule.
 */
export function unattendedHint(name: string, ctx: Pick<DenialContext, "alwaysAsks" | "mode">): string {
  if (ctx.alwaysAsks) {
    return "Such a call asks in every approval mode and no allow rule covers it: it needs a person on a terminal to approve it.";
  }
  if (EDIT_TOOLS.has(name)) return "Run mini-cursor with --approval auto-edit to let file changes run without asking.";
  if (name.includes("__"))
    return `Add "${name}" (or its server) to "mcp": { "allow": [...] } in the rules file, or run mini-cursor with --approval full-auto, to let it run without asking.`;
  return "Run mini-cursor with --approval full-auto to let commands run without asking (dangerous ones still need a person).";
}

/**
 * The tool result a declined call gets, so the model knows it did not run and why. For calls
 * that ask in every mode (dangerous ones) the reason is repeated, so the model does not retry.
 */
export function deniedMessage(name: string, response: ApprovalResponse, ctx: DenialContext): string {
  if (response.unattended) {
    const needed = ctx.reason ? ` It needed approval because: ${ctx.reason}.` : "";
    return `This ${name} call was not run, because nobody could be asked to approve it (mini-cursor is not running on a terminal).${needed} ${unattendedHint(name, ctx)} ${TELL_THE_USER}`;
  }
  const why = ctx.alwaysAsks && ctx.reason ? ` It needed approval because: ${ctx.reason}.` : "";
  const base = `This ${name} call was not run, because the user declined it.${why}`;
  return response.feedback ? `${base} Their feedback: ${response.feedback}` : `${base} ${DO_SOMETHING_ELSE}`;
}

/** The tool result of a call the project rules deny (nobody was asked). */
export function refusedMessage(name: string, reason: string): string {
  return `Refused: this ${name} call was not run, because ${reason}. ${DO_NOT_GET_AROUND}`;
}

/**
 * The result message of a call that was not run (declined, refused): status "error", and
 * `notRun` in its artifact so the trace, `--json` and the run's outcome can tell it from a
 * call that ran and failed.
 */
export function notRunResult(call: { id?: string; name: string }, content: string): ToolMessage {
  return new ToolMessage({
    tool_call_id: call.id!,
    name: call.name,
    status: "error",
    content,
    artifact: { notRun: true },
  });
}

/** The answer of an approver that cannot ask anyone (stdin is not a terminal). */
export const UNATTENDED_RESPONSE: ApprovalResponse = { decision: "deny", unattended: true };
