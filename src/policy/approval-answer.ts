import type { ApprovalResponse } from "../contracts/events.js";
import { isArgumentsObject } from "../contracts/tools.js";

const KNOWN = new Set(["approve", "always", "always-project", "edit"]);

/**
 * An answer to an approval question as both engines take it, whoever gave it (the terminal
 * prompt, a test's approver, a Studio resume): only the decisions the engines know count, and
 * anything else is a denial. An edit keeps its `args` only when they are a JSON object; one
 * without is still an edit, which the review answers by asking again (policy/review.ts), never
 * by running anything. Studio's one-time code is checked on top of this, in
 * graph/studio-secret.ts (`studioResponse`), for an edit as for an approval.
 */
export function normalizeResponse(value: unknown): ApprovalResponse {
  const v = (value ?? {}) as Partial<ApprovalResponse>;
  const decision = typeof v.decision === "string" && KNOWN.has(v.decision) ? v.decision : "deny";
  if (decision === "edit") return isArgumentsObject(v.args) ? { decision, args: v.args } : { decision };
  const feedback = typeof v.feedback === "string" && v.feedback ? v.feedback : undefined;
  return { decision, feedback, ...(decision === "deny" && v.unattended === true ? { unattended: true } : {}) };
}
