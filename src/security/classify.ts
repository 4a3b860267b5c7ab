import os from "node:os";
import path from "node:path";
import type { Places } from "./locations.js";
import { EMPTY_RULES, findRule, type CommandRule } from "./rules.js";
import { isReadOnlyIn, isHarmlessAssignment, READ_ONLY_WRAPPERS } from "./read-only.js";
import { loadShellParser, type ShellParser } from "./shell-parse.js";
import { type Classification, type ClassifyContext, type State, shorten, unique } from "./classify-state.js";
import { analyzeScript, basename, checkFunctionCycles } from "./classify-unwrap.js";
import { checkLeaf, LEAF_CHECKS } from "./classify-commands.js";
import { WRAPPERS } from "./classify-wrappers.js";

export { MAX_NESTING, type Classification, type ClassifyContext, type Verdict } from "./classify-state.js";

/**
 * Classifies a command line as allow, ask or deny by reading it with a real shell parser:
 * through quoting, wrappers (sudo, env, timeout, xargs...), nested `sh -c` scripts, `eval`,
 * pipes into interpreters, substitutions, `find -delete` / `-exec`, and redirections.
 *
 * - deny: a deny rule of the project matches one of its commands. It is refused unasked.
 * - ask: a person must approve it in every approval mode: it is dangerous, it cannot be read
 *   (syntax the parser cannot follow, a command name computed at run time), or an ask rule
 *   matches.
 * - allow: nothing dangerous was found. When allow rules cover every command (`rule` is set)
 *   it runs in every mode; otherwise the approval mode decides.
 */

export async function classifyCommand(command: string, ctx: ClassifyContext): Promise<Classification> {
  return classifyWith(await loadShellParser(), command, ctx);
}

/** The synchronous core, for a parser that is already loaded. */
export function classifyWith(parse: ShellParser, command: string, ctx: ClassifyContext): Classification {
  const { result, state } = decide(parse, command, ctx);
  const leaves = state.leaves.map((l) => l.words);
  const readOnly = result.verdict === "allow" && !result.rule && lineIsReadOnly(state);
  return { ...result, leaves, ...(readOnly ? { readOnly } : {}) };
}

/** Read-only: every command on the list, only harmless wrappers and assignments, no file written. */
function lineIsReadOnly(state: State): boolean {
  if (state.leaves.length === 0 || state.notReadOnly.length > 0 || state.findings.length > 0) return false;
  const leafSet = new Set(state.leaves.map((l) => l.words));
  if (state.layers.some((l) => !leafSet.has(l.words) && !READ_ONLY_WRAPPERS.has(basename(l.words[0])))) return false;
  if ([...state.assigned].some((name) => !isHarmlessAssignment(name))) return false;
  // git also by the repository it will use: its config could name a program (security/git-repo.ts).
  return state.leaves.every((l) => isReadOnlyIn(l.words, state.cwds));
}

function decide(parse: ShellParser, command: string, ctx: ClassifyContext): { result: Classification; state: State } {
  const places: Places = { workspace: path.resolve(ctx.workspace), home: ctx.home ?? os.homedir() };
  const cwd = ctx.cwd ? path.resolve(places.workspace, ctx.cwd) : places.workspace;
  const state: State = {
    parse,
    leafCommands: { names: LEAF_CHECKS, check: checkLeaf },
    commandTables: { wrappers: WRAPPERS },
    places,
    cwd,
    cwds: [cwd],
    findings: [],
    leaves: [],
    layers: [],
    vars: new Map(),
    assigned: new Set(),
    functions: new Map(),
    notReadOnly: [],
    outsideWrites: [],
    links: [],
  };
  analyzeScript(command, state, 0);
  checkFunctionCycles(state);
  const leaves = state.leaves.map((l) => l.words);
  const commands = leaves.map((words) => words.map((w) => w.value));
  const rules = ctx.rules ?? EMPTY_RULES;

  for (const layer of state.layers) {
    const rule = findRule(rules.deny, layer.words);
    if (rule) {
      return {
        state,
        result: {
          verdict: "deny",
          reason: `the project rules (${rule.file}) deny \`${rule.text}\`${rule.reason ? `: ${rule.reason}` : ""} (it matches \`${shorten(layer.text)}\`)`,
          rule,
          commands,
        },
      };
    }
  }
  if (ctx.rulesError)
    return { result: { verdict: "ask", reason: `cannot apply the project rules: ${ctx.rulesError}`, commands }, state };
  const danger = unique(state.findings.filter((f) => f.kind === "danger").map((f) => f.text));
  const opaque = unique(state.findings.filter((f) => f.kind === "opaque").map((f) => f.text));
  if (danger.length > 0)
    return { state, result: { verdict: "ask", reason: `dangerous command: ${danger.join("; ")}`, commands } };
  if (opaque.length > 0)
    return { state, result: { verdict: "ask", reason: `cannot check this command: ${opaque.join("; ")}`, commands } };
  for (const layer of state.layers) {
    const rule = findRule(rules.ask, layer.words);
    if (rule) {
      return {
        state,
        result: {
          verdict: "ask",
          reason: `the project rules (${rule.file}) ask before \`${rule.text}\`${rule.reason ? `: ${rule.reason}` : ""}`,
          rule,
          commands,
        },
      };
    }
  }
  // A rule allows a command, not where its output goes: `allow: git log` never covers `git log > /tmp/x`.
  if (state.leaves.length > 0 && state.outsideWrites.length === 0) {
    const covering = state.leaves.map((leaf) => findRule(rules.allow, leaf.words));
    if (covering.every((r): r is CommandRule => r !== undefined)) {
      const texts = unique(covering.map((r) => `\`${r.text}\``));
      return {
        state,
        result: {
          verdict: "allow",
          reason: `allowed by the project rules (${texts.join(", ")})`,
          rule: covering[0],
          commands,
        },
      };
    }
  }
  return { state, result: { verdict: "allow", reason: "nothing dangerous found", commands } };
}
