import { ToolMessage } from "@langchain/core/messages";
import path from "node:path";
import { classifyCommand, type Classification } from "../security/classify.js";
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
import { planModeReason } from "./plan-mode.js";
import { isMcpCall, mcpApprovalRules, mcpNeedsApproval, mcpToolOf } from "../mcp/approval.js";
import { callEffects, effectClass, kindReason, ruleFor, type ToolLike } from "./effects.js";
import { protectedPathReason } from "./protected-paths.js";

/** The tool whose calls the command classifier judges (by its `command` and `workingDirectory`). */
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
 * approve node: by what its tool declares (policy/effects.ts). Only calls that never ask and
 * write nothing (kind read; other, outside plan mode) skip it; a tool that declares nothing
 * (an MCP server's, a new one) is never routed past `classifyCall`.
 */
export function mayNeedApproval(call: ToolCallLike, mode?: ApprovalMode, tools?: readonly ToolLike[]): boolean {
  const rule = ruleFor(callEffects(call, tools));
  if (mode === "plan") return !rule.inPlanMode;
  return rule.asksIn.length > 0 || rule.writes;
}

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
  /**
   * The toolset: what each tool declares (its kind and paths; without a toolset the built-in
   * tool of the call's name is asked), and what MCP tools declare about themselves.
   */
  tools?: readonly ToolLike[];
  /** The trust store and the user's MCP config (agent/runtime.ts); unset, settings.ts's defaults. */
  configFiles?: { trustStore: string; mcpUserConfig: string };
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
  const effects = callEffects(call, ctx.tools);
  const rule = ruleFor(effects);
  // Plan mode: what may not run there is refused before anything else is asked or checked.
  if (mode === "plan" && !rule.inPlanMode)
    return { action: "deny", reason: planModeReason(call.name), alwaysAsks: true, alwaysKeys: [] };
  if (COMMAND_TOOLS.has(call.name)) {
    let rules: ProjectRules | undefined;
    let rulesError: string | undefined;
    try {
      rules = loadProjectRules(ctx.workspace, { trustStore: ctx.configFiles?.trustStore });
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
  // Protected paths (any .git, the rules files, mini-cursor's own folder) ask in every mode, named.
  if (rule.writes) {
    for (const file of effects.paths ?? []) {
      const reason = (await protectedPathReason(ctx.workspace, file)) ?? (await fileRulesReason(ctx.workspace, file));
      if (reason) return { action: "ask", reason, alwaysAsks: true, alwaysKeys: [] };
    }
  }
  if (isMcpCall(call, ctx.tools)) {
    const reason = mcpNeedsApproval(
      call,
      mode,
      always,
      mcpApprovalRules(ctx.workspace, ctx.configFiles?.mcpUserConfig, ctx.configFiles?.trustStore),
      mcpToolOf(call.name, ctx.tools),
    );
    return reason
      ? { action: "ask", reason, alwaysAsks: false, alwaysKeys: [alwaysKey(call)] }
      : { action: "run", alwaysAsks: false, alwaysKeys: [] };
  }
  const reason = kindAsks(call, mode, always, ctx.tools);
  return reason
    ? { action: "ask", reason, alwaysAsks: false, alwaysKeys: [alwaysKey(call)] }
    : { action: "run", alwaysAsks: false, alwaysKeys: [] };
}

/**
 * Why a call must be approved by what its tool declares, or null when it may run: its kind's
 * modes (an edit asks in `suggest`, an undeclared tool in every mode but `full-auto`), unless
 * this thread answered "always" for the tool. Commands are judged by `classifyCall` with the parser.
 */
export function kindAsks(
  call: ToolCallLike,
  mode: ApprovalMode,
  always: readonly string[],
  tools?: readonly ToolLike[],
): string | null {
  const effects = callEffects(call, tools);
  if (!ruleFor(effects).asksIn.includes(mode) || always.includes(alwaysKey(call))) return null;
  return kindReason(call, effects, mode);
}

/** What the question may offer: no "always" for calls that ask every time; the exact rules otherwise. */
export function approvalScope(decision: CallDecision): { asksEveryTime?: true; alwaysRules?: string[] } {
  if (decision.alwaysAsks) return { asksEveryTime: true };
  return decision.alwaysRules ? { alwaysRules: decision.alwaysRules } : {};
}

/** Why a file change must be approved, or null: kindAsks for a built-in edit tool (kept for callers that judge one edit). */
export function editReason(call: ToolCallLike, mode: ApprovalMode, always: readonly string[]): string | null {
  return effectClass(callEffects(call)) === "edit" ? kindAsks(call, mode, always) : null;
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
  if (effectClass(callEffects({ name, args: {} })) === "edit")
    return "Run mini-cursor with --approval auto-edit to let file changes run without asking.";
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
