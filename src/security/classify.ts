import os from "node:os";
import path from "node:path";
import { analyzeScript, checkFunctionCycles } from "./classify-engine.js";
import { isReadOnly, keepsReadOnly } from "./classify-rows.js";
import {
  type Classification,
  type ClassifyContext,
  type CommandFacts,
  type State,
  basename,
  newState,
  shorten,
  unique,
} from "./classify-state.js";
import { HARMLESS_VARIABLES } from "./classify-tables.js";
import { gitRunsNothingElse } from "./git-repo.js";
import type { Places } from "./locations.js";
import { EMPTY_RULES, findRule, type CommandRule } from "./rules.js";
import { loadShellParser, type ShellParser } from "./shell-parse.js";

export type { Classification, Verdict } from "./classify-state.js";

/**
 * Classifies a command line as allow, ask or deny by reading it with a real shell parser:
 * through quoting, wrappers (sudo, env, timeout, xargs...), nested `sh -c` scripts, `eval`,
 * pipes into interpreters, substitutions, `find -delete` / `-exec`, and redirections. The rules
 * are tables (classify-tables.ts) that one engine reads (classify-engine.ts).
 *
 * - deny: a deny rule of the project matches one of its commands. It is refused unasked.
 * - ask: a person must approve it in every approval mode: it is dangerous, it cannot be read
 *   (syntax the parser cannot follow, a command name computed at run time), or an ask rule
 *   matches.
 * - allow: nothing dangerous was found. When allow rules cover every command (`rule` is set)
 *   it runs in every mode; otherwise the approval mode decides.
 *
 * Besides the verdict, `facts` say what the line touches (paths written, credentials read,
 * writes outside the workspace, the network) and every finding with its reason.
 */

export async function classifyCommand(command: string, ctx: ClassifyContext): Promise<Classification> {
  const { result, state } = decide(await loadShellParser(), command, ctx);
  const leaves = state.leaves.map((l) => l.words);
  const readOnly = result.verdict === "allow" && !result.rule && lineIsReadOnly(state);
  // A deny is the project's rule, final: there is nothing for a policy to weigh.
  const facts = result.verdict === "deny" ? {} : { facts: factsOf(state) };
  return { ...result, leaves, ...(readOnly ? { readOnly } : {}), ...facts };
}

function factsOf(state: State): CommandFacts {
  const inside = new Set(["workspace", "inside", "rules", "null-device"]);
  const written = new Set(state.writes.map((w) => w.word));
  return {
    writes: state.writes,
    reads: state.reads.filter((r) => !written.has(r.word)),
    writesOutside: state.writes.some((w) => !inside.has(w.where)),
    network: state.network,
    findings: state.findings,
  };
}

/** Read-only: every command on the list, only harmless wrappers and assignments, no file written. */
function lineIsReadOnly(state: State): boolean {
  if (state.leaves.length === 0 || state.notReadOnly.length > 0 || state.findings.length > 0) return false;
  const leafSet = new Set(state.leaves.map((l) => l.words));
  if (state.layers.some((l) => !leafSet.has(l.words) && !keepsReadOnly(basename(l.words[0])))) return false;
  if ([...state.assigned].some((name) => !HARMLESS_VARIABLES.test(name))) return false;
  // git also by the repository it will use: its config could name a program (security/git-repo.ts).
  return state.leaves.every(
    (l) =>
      isReadOnly(l.words) && (basename(l.words[0]) !== "git" || gitRunsNothingElse(l.words.slice(1), state.reached)),
  );
}

function decide(parse: ShellParser, command: string, ctx: ClassifyContext): { result: Classification; state: State } {
  const places: Places = { workspace: path.resolve(ctx.workspace), home: ctx.home ?? os.homedir() };
  const cwd = ctx.cwd ? path.resolve(places.workspace, ctx.cwd) : places.workspace;
  const state = newState(parse, places, [cwd]);
  analyzeScript(command, state, 0);
  checkFunctionCycles(state);
  const leaves = state.leaves.map((l) => l.words);
  const commands = leaves.map((words) => words.map((w) => w.value));
  const rules = ctx.rules ?? EMPTY_RULES;
  const result = (verdict: Classification["verdict"], reason: string, rule?: CommandRule) => ({
    state,
    result: { verdict, reason, ...(rule ? { rule } : {}), commands },
  });

  for (const layer of state.layers) {
    const rule = findRule(rules.deny, layer.words);
    if (rule)
      return result(
        "deny",
        `the project rules (${rule.file}) deny \`${rule.text}\`${rule.reason ? `: ${rule.reason}` : ""} (it matches \`${shorten(layer.text)}\`)`,
        rule,
      );
  }
  if (ctx.rulesError) return result("ask", `cannot apply the project rules: ${ctx.rulesError}`);
  const reasons = (kind: "danger" | "opaque") =>
    unique(state.findings.filter((f) => f.kind === kind).map((f) => f.reason));
  const danger = reasons("danger");
  if (danger.length > 0) return result("ask", `dangerous command: ${danger.join("; ")}`);
  const opaque = reasons("opaque");
  if (opaque.length > 0) return result("ask", `cannot check this command: ${opaque.join("; ")}`);
  for (const layer of state.layers) {
    const rule = findRule(rules.ask, layer.words);
    if (rule)
      return result(
        "ask",
        `the project rules (${rule.file}) ask before \`${rule.text}\`${rule.reason ? `: ${rule.reason}` : ""}`,
        rule,
      );
  }
  // A rule allows a command, not where its output goes: `allow: git log` never covers `git log > /tmp/x`.
  if (state.leaves.length > 0 && state.outsideWrites.length === 0) {
    const covering = state.leaves.map((leaf) => findRule(rules.allow, leaf.words));
    if (covering.every((r): r is CommandRule => r !== undefined)) {
      const texts = unique(covering.map((r) => `\`${r.text}\``));
      return result("allow", `allowed by the project rules (${texts.join(", ")})`, covering[0]);
    }
  }
  return result("allow", "nothing dangerous found");
}
