import type { Approver } from "../agent/events.js";
import { classifyCommand } from "./classify.js";
import { addAllowRules, LOCAL_RULES_FILE, loadProjectRules, ruleForCommand } from "./rules.js";

/**
 * "[a]lways" on a terminal also saves allow rules for the project, in `.mini-cursor/config.json`
 * (git-ignored, so they stay personal), for a command that is not dangerous: one rule per
 * program it runs, with the subcommand for tools such as npm and git (`npm test`, `git status`,
 * `ls`). Dangerous commands, deny or ask rules, and other tools are never saved; the per-thread
 * "always" still applies as before.
 */
export function withSavedAlwaysRules(approver: Approver, workspace: string, note: (text: string) => void): Approver {
  return async (request) => {
    const response = await approver(request);
    if (response.decision !== "always" || request.tool !== "execute_command") return response;
    try {
      const command = String(request.args.command ?? "");
      const dir = typeof request.args.workingDirectory === "string" ? request.args.workingDirectory : undefined;
      const verdict = await classifyCommand(command, { workspace, cwd: dir, rules: loadProjectRules(workspace) });
      if (verdict.verdict !== "allow") return response;
      const rules = verdict.commands.map(ruleForCommand).filter((r): r is string => r !== undefined);
      const added = addAllowRules(workspace, rules);
      if (added.length > 0) {
        note(`Saved in ${LOCAL_RULES_FILE}: allow ${added.map((r) => `\`${r}\``).join(", ")} (remove them there to be asked again).`);
      }
    } catch (err) {
      note(`Could not save the rule: ${(err as Error).message}`);
    }
    return response;
  };
}
