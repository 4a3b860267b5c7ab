import type { ApprovalResponse } from "../agent/events.js";

/**
 * An answer to an approval question as both engines take it, whoever gave it (the terminal
 * prompt, a test's approver, a Studio resume): only the decisions the engines know count, and
 * anything else is a denial. Studio's one-time code is checked on top of this, in
 * graph/studio-secret.ts (`studioResponse`).
 */
export function normalizeResponse(value: unknown): ApprovalResponse {
  const v = (value ?? {}) as Partial<ApprovalResponse>;
  const decision =
    v.decision === "approve" || v.decision === "always" || v.decision === "always-project" ? v.decision : "deny";
  const feedback = typeof v.feedback === "string" && v.feedback ? v.feedback : undefined;
  return { decision, feedback, ...(decision === "deny" && v.unattended === true ? { unattended: true } : {}) };
}
