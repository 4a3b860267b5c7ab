import type { ApprovalMode } from "../contracts/modes.js";
import type { GuardConfig } from "../guard/guard.js";
import type { JudgeUpdate } from "../guard/hooks.js";
import { classifyCall } from "../policy/approval.js";
import { checkEdit } from "../policy/edit-call.js";
import { canonicalArguments } from "../tools/aliases.js";
import type { AgentRuntime } from "./runtime.js";
import { accessOf } from "./dispatch.js";

/** The approval mode a call runs under: as the run settles it (Studio), else its config's, else the runtime's. */
export function callMode(runtime: AgentRuntime, config: GuardConfig): ApprovalMode {
  return (
    runtime.settleRun?.(config).approval ??
    (config.configurable?.approval as ApprovalMode | undefined) ??
    runtime.approval
  );
}

/**
 * How a call a hook changed (`updatedInput`) is judged: as the person's `[e]dit` at the approval
 * question is (policy/review.ts settleCall) — checked against the tool's schema, then classified
 * as a call of its own in the run's mode, with the rules, protected paths and the classifier.
 * Only a call that would then run unasked runs: the question is behind us, so one that would be
 * asked about is refused, and no "always" answer of the thread counts.
 */
export function hookJudge(runtime: AgentRuntime): JudgeUpdate {
  return async (call, updated, config) => {
    // The hook's names (Claude Code's `file_path`, or ours) win over the call's, whichever it used.
    const merged = { ...call.args, ...(canonicalArguments(call.name, updated) as Record<string, unknown>) };
    const check = checkEdit(call, merged, runtime.tools);
    if (!check.ok) return { ok: false, reason: `is not valid: ${check.error}` };
    if (check.unchanged) return { ok: true, args: call.args };
    // The turn's order and its snapshots were settled on the files the call named: a call now
    // naming others would race its siblings on them, and its change would miss /undo.
    const files = (args: Record<string, unknown>) =>
      JSON.stringify(
        accessOf({ ...call, args }, runtime.tools, runtime.workspace)
          .paths?.slice()
          .sort() ?? null,
      );
    if (files(check.args) !== files(call.args))
      return { ok: false, reason: "names other files than the call did, which a hook may not change" };
    const mode = callMode(runtime, config);
    const verdict = await classifyCall({ ...call, args: check.args }, mode, [], {
      workspace: runtime.workspace,
      tools: runtime.tools,
      configFiles: runtime.configFiles,
    });
    if (verdict.action === "run") return { ok: true, args: check.args };
    if (verdict.action === "deny") return { ok: false, reason: `was refused: ${verdict.reason}` };
    return {
      ok: false,
      reason: `would need the user's approval in ${mode} mode (${verdict.reason}), which is not asked once a call was approved, so it was not run`,
    };
  };
}
