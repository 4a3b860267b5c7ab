import type { Approver } from "../contracts/events.js";
import { classifyCall } from "./approval.js";
import { addAllowRules } from "../security/rules.js";
import { savedAnswersFile } from "../memory/state-dir.js";

/**
 * "Always for this project" on a terminal saves the exact allow rules the question showed
 * (`request.alwaysRules`, e.g. `git log -5`) in the workspace's saved answers, in mini-cursor's state
 * folder outside the workspace (memory/state-dir.ts), so they stay personal and nothing the
 * repository ships can add to them. Plain "always" is for this session only and saves nothing. A call that asks
 * every time (dangerous, unreadable, an ask rule) is never saved, whatever the answer.
 */
export function withSavedAlwaysRules(approver: Approver, workspace: string, note: (text: string) => void): Approver {
  return async (request) => {
    const response = await approver(request);
    if (
      response.decision !== "always-project" ||
      request.tool !== "execute_command" ||
      request.asksEveryTime ||
      !request.alwaysRules?.length
    )
      return response;
    try {
      // Checked again here, so a front end cannot save a rule for a command that asks every time.
      const decision = await classifyCall({ name: request.tool, args: request.args }, "suggest", [], { workspace });
      if (decision.alwaysAsks || decision.action === "deny") return { decision: "approve" };
      const added = addAllowRules(workspace, request.alwaysRules);
      if (added.length > 0) {
        note(
          `Saved in ${savedAnswersFile(workspace)}: allow ${added.map((r) => `\`${r}\``).join(", ")} (remove them there to be asked again).`,
        );
      }
    } catch (err) {
      note(`Could not save the rule: ${(err as Error).message}`);
    }
    return response;
  };
}
