import path from "node:path";
import { classifyCommand, type Classification } from "../security/classify.js";
import { ruleForCommand, ruleMatches, ruleWords } from "../security/rules.js";
import { declarationOf } from "../contracts/tools.js";
import { createTools } from "../tools/index.js";
import type { McpToolMetadata } from "../mcp/names.js";
import { policyRules, type ConfigFiles, type PolicyRules } from "./rules.js";
import { commandRulesReason, fileRulesReason } from "../security/rules-guard.js";
import type { Word } from "../security/shell-parse.js";
import type { ApprovalResponse } from "../contracts/events.js";
import type { ApprovalMode } from "../contracts/modes.js";
import { planModeReason } from "./plan-mode.js";
import { isMcpCall, mcpNeedsApproval, mcpToolOf } from "../mcp/approval.js";
import {
  callEffects,
  effectClass,
  kindReason,
  readOnlyTools,
  ruleFor,
  type CallEffects,
  type ToolLike,
} from "./effects.js";
import { protectedPathReason } from "./protected-paths.js";

export interface ToolCallLike {
  name: string;
  args: Record<string, unknown>;
}

/** The shell command line a call runs (undefined: its tool runs none), as its tool declares it. */
function shellOf(call: ToolCallLike, tools: readonly ToolLike[] | undefined) {
  const shell = declarationOf(tools?.find((t) => t.name === call.name)).shell;
  if (!shell) return undefined;
  const dir = shell.cwd ? call.args[shell.cwd] : undefined;
  return { command: String(call.args[shell.command] ?? ""), cwd: typeof dir === "string" ? dir : undefined };
}

/**
 * The key an "always" answer is remembered under: the tool, and for commands the tool and an
 * allow rule (`execute_command:git log -5`): the command prefix shown, never more.
 */
export function alwaysKey(call: ToolCallLike, tools?: readonly ToolLike[]): string {
  const shell = shellOf(call, tools ?? defaultTools());
  return shell ? `${call.name}:${commandRules(shell.command, [])[0] ?? ""}` : call.name;
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
  /** The toolset: what each tool declares (its kind, path arguments, shell line), and what MCP tools declare about themselves. */
  tools?: readonly ToolLike[];
  /** The trust store and the user's MCP config (agent/runtime.ts); unset, no user MCP rules and settings.ts's trust store. */
  configFiles?: ConfigFiles;
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

/**
 * What is known about one call before deciding: what its tool declares, and what reading it
 * found (the command classifier's verdict on a command line, a protected path it writes, the
 * MCP tool it names). Gathering these is the only part that waits (the shell parser) or looks at
 * the disk (a protected path); `decide` is a pure function of them.
 */
export interface CallFacts {
  effects: CallEffects;
  /** A command line: the classifier's verdict, and why it asks when it may change a rules file. */
  command?: { line: string; verdict: Classification; rulesReason?: string };
  /** A path the call writes that asks in every mode (any .git, the rules files, mini-cursor's state), and why. */
  protectedReason?: string;
  /** The MCP tool the call names, when it is one. */
  mcp?: McpToolMetadata | { mcpServer?: undefined };
  /** The toolset's tools that only look (plan mode runs them), for a call plan mode would refuse. */
  planTools?: string[];
}

export async function factsOf(call: ToolCallLike, ctx: ApprovalContext, rules: PolicyRules): Promise<CallFacts> {
  const tools = ctx.tools ?? defaultTools();
  const effects = callEffects(call, tools);
  const facts: CallFacts = { effects };
  if (!ruleFor(effects).inPlanMode) facts.planTools = readOnlyTools(tools);
  const shell = shellOf(call, tools);
  if (shell) {
    const cwd = shell.cwd ? path.resolve(ctx.workspace, shell.cwd) : ctx.workspace;
    let verdict: Classification;
    try {
      verdict = await classifyCommand(shell.command, {
        workspace: ctx.workspace,
        cwd,
        home: ctx.home,
        rules: rules.project,
        rulesError: rules.projectError,
      });
    } catch (err) {
      verdict = {
        verdict: "ask",
        reason: `cannot check this command: the shell parser failed (${(err as Error).message})`,
        commands: [],
      };
    }
    const rulesReason = verdict.verdict === "deny" ? undefined : commandRulesReason(shell.command);
    facts.command = { line: shell.command, verdict, ...(rulesReason ? { rulesReason } : {}) };
    return facts;
  }
  if (ruleFor(effects).writes) {
    for (const file of effects.paths ?? []) {
      const reason =
        (await protectedPathReason(ctx.workspace, file, rules.project?.hookScripts)) ??
        (await fileRulesReason(ctx.workspace, file));
      if (reason) {
        facts.protectedReason = reason;
        break;
      }
    }
  }
  if (isMcpCall(call, tools)) facts.mcp = mcpToolOf(call.name, tools) ?? {};
  return facts;
}

/**
 * The decision about one call, pure: from the approval mode, this thread's "always" answers,
 * the rules and the facts. Plan mode refuses what may not run there; a command line is judged
 * by its verdict (deny rules refuse, dangerous or unreadable ones ask in every mode, read-only
 * ones and those an allow rule covers run, otherwise the mode and "always" answers decide); a
 * protected path asks in every mode; an MCP tool by its rules; any other call by its kind.
 */
export function decide(
  call: ToolCallLike,
  mode: ApprovalMode,
  always: readonly string[],
  rules: PolicyRules,
  facts: CallFacts,
): CallDecision {
  const rule = ruleFor(facts.effects);
  /** Asked or refused every time: no "always" answer is remembered for it. */
  const everyTime = (action: "ask" | "deny", reason: string | undefined): CallDecision => ({
    action,
    reason,
    alwaysAsks: true,
    alwaysKeys: [],
  });
  if (mode === "plan" && !rule.inPlanMode) return everyTime("deny", planModeReason(call.name, facts.planTools ?? []));
  if (facts.command) {
    const { line, verdict, rulesReason } = facts.command;
    const alwaysRules = commandRules(line, verdict.commands);
    const alwaysKeys = alwaysRules.map((r) => `${call.name}:${r}`);
    if (rulesReason) return everyTime("ask", rulesReason);
    if (verdict.verdict === "deny" || verdict.verdict === "ask") return everyTime(verdict.verdict, verdict.reason);
    const leaves =
      verdict.leaves ??
      verdict.commands.map((argv) => argv.map((value) => ({ value, dynamic: false, raw: value, kind: "word" })));
    // Read-only commands (the built-in list) and those the project allows run in every mode.
    const runs =
      verdict.rule ||
      verdict.readOnly ||
      mode === "full-auto" ||
      (leaves.length > 0 && leaves.every((words) => always.some((key) => keyCovers(key, call.name, words))));
    const reason = runs ? {} : { reason: `runs a shell command (approval mode ${mode})` };
    return { action: runs ? "run" : "ask", ...reason, alwaysAsks: false, alwaysKeys, alwaysRules };
  }
  // Protected paths (any .git, the rules files, mini-cursor's own folder) ask in every mode, named.
  if (facts.protectedReason) return everyTime("ask", facts.protectedReason);
  const reason = facts.mcp
    ? mcpNeedsApproval(call, mode, always, rules.mcp, facts.mcp.mcpServer ? facts.mcp : undefined)
    : rule.asksIn.includes(mode) && !always.includes(call.name)
      ? kindReason(call, facts.effects, mode)
      : undefined;
  return reason
    ? { action: "ask", reason, alwaysAsks: false, alwaysKeys: [call.name] }
    : { action: "run", alwaysAsks: false, alwaysKeys: [] };
}

/** The allow rules an "always" answer covers: one per command of the line, else the line's first words. */
function commandRules(line: string, commands: string[][]): string[] {
  const rules = [...new Set(commands.map(ruleForCommand).filter((r): r is string => r !== undefined))];
  if (rules.length > 0) return rules;
  const argv = line.trim().split(/\s+/);
  return [ruleForCommand(argv) ?? argv[0] ?? ""].filter(Boolean);
}

/**
 * Decides about one call: gathers its facts (the shell parser, protected paths) under the
 * workspace's rules as their files now are, then `decide`. Both engines call this, through the
 * review of a turn (policy/review.ts).
 */
export async function classifyCall(
  call: ToolCallLike,
  mode: ApprovalMode,
  always: readonly string[],
  ctx: ApprovalContext,
): Promise<CallDecision> {
  const rules = policyRules(ctx.workspace, ctx.configFiles);
  return decide(call, mode, always, rules, await factsOf(call, ctx, rules));
}

/** Why a file change must be approved in `mode`, or null (for callers that judge one edit by its tool's kind). */
export function editReason(
  call: ToolCallLike,
  mode: ApprovalMode,
  always: readonly string[],
  tools: readonly ToolLike[] = defaultTools(),
): string | null {
  const effects = callEffects(call, tools);
  if (effectClass(effects) !== "edit" || !ruleFor(effects).asksIn.includes(mode) || always.includes(call.name))
    return null;
  return kindReason(call, effects, mode);
}

/** A toolset for callers that judge a call without one (a saved answer's check, tests): the built-in tools' declarations. */
let fallbackTools: readonly ToolLike[] | undefined;
function defaultTools(): readonly ToolLike[] {
  fallbackTools ??= createTools({ workspace: "", editTool: "both" });
  return fallbackTools;
}

/** What the question may offer: no "always" for calls that ask every time; the exact rules otherwise. */
export function approvalScope(decision: CallDecision): { asksEveryTime?: true; alwaysRules?: string[] } {
  if (decision.alwaysAsks) return { asksEveryTime: true };
  return decision.alwaysRules ? { alwaysRules: decision.alwaysRules } : {};
}

/** The closing sentences of a not-run result that speak to the model, not to the user. */
export const TELL_THE_USER = "Tell the user what was not done and why.";
export const DO_SOMETHING_ELSE = "Do something else or ask the user.";

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
  if (effectClass(callEffects({ name, args: {} }, defaultTools())) === "edit")
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

/** The answer of an approver that cannot ask anyone (stdin is not a terminal). */
export const UNATTENDED_RESPONSE: ApprovalResponse = { decision: "deny", unattended: true };
