/**
 * The approval modes: which calls run without a person (docs/safety.md). suggest: only calls
 * that look; auto-edit: file edits too; full-auto: commands too (dangerous ones still ask);
 * plan: only looking, and nothing else runs at all.
 */
export const APPROVAL_MODES = ["suggest", "auto-edit", "full-auto", "plan"] as const;
export type ApprovalMode = (typeof APPROVAL_MODES)[number];

/** The modes from the one that lets the fewest calls run unasked to the one that lets the most. */
const STRICTEST_FIRST: readonly ApprovalMode[] = ["plan", "suggest", "auto-edit", "full-auto"];

/** Whether `mode` lets calls run unasked that `than` would ask about (or refuse). */
export function looserApproval(mode: ApprovalMode, than: ApprovalMode): boolean {
  return STRICTEST_FIRST.indexOf(mode) > STRICTEST_FIRST.indexOf(than);
}

export function stricterApproval(a: ApprovalMode, b: ApprovalMode): ApprovalMode {
  return looserApproval(a, b) ? b : a;
}
