import type { RunSummary } from "../agent/engine.js";
import { PLAN_ACCEPTED_TASK } from "../policy/plan-mode.js";
import { DEFAULT_APPROVAL } from "../contracts/run-choices.js";
import { type ApprovalMode } from "../contracts/modes.js";
import { continueCommand } from "../ui/hints.js";
import type { PlanAnswer } from "../ui/plan-prompt.js";
import type { Renderer } from "../ui/render.js";
import type { Session } from "./session.js";

/** The mode an accepted plan runs in unless the person picks another: the one plan mode was entered from. */
export function acceptMode(session: Pick<Session, "beforePlan">): ApprovalMode {
  return session.beforePlan ?? DEFAULT_APPROVAL;
}

/** The command that carries out the current thread's plan in a later run (a one-shot run's "not now", or no terminal). */
export function carryOutCommand(session: Pick<Session, "beforePlan" | "settings" | "threadId">): string {
  return continueCommand(
    `${session.settings.launchCommand} --approval ${acceptMode(session)}`,
    session.settings,
    session.threadId,
    PLAN_ACCEPTED_TASK,
  );
}

/** In a session, "not now" leaves plan mode on and the plan ready for these. */
export const SESSION_PLAN_LATER =
  "Still in plan mode: type changes to the plan, /plan accept [mode] to carry it out, or /plan off to leave plan mode.";

/** Whether a finished request leaves a plan to review: plan mode, and the model answered. */
export function hasPlanToReview(session: Pick<Session, "approval">, summary: RunSummary): boolean {
  return session.approval === "plan" && summary.reason === "done";
}

/**
 * After a plan-mode request on a terminal: asks what to do with the plan. Accepting switches
 * the same thread to the chosen mode and runs "Carry out the plan."; feedback is the next
 * plan-mode request, after which it asks again; "not now" leaves plan mode on. `turn` runs one
 * request the way the caller runs them (keys, cancelling). Returns the last request's summary.
 */
export async function reviewPlan(
  session: Session,
  renderer: Renderer,
  ask: (defaultMode: ApprovalMode) => Promise<PlanAnswer>,
  turn: (task: string) => Promise<RunSummary>,
  last: RunSummary,
  /** What to say when the person answers "not now": how to carry the plan out later from where they are. */
  later: string,
): Promise<RunSummary> {
  let summary = last;
  while (hasPlanToReview(session, summary)) {
    renderer.pause();
    const answer = await ask(acceptMode(session));
    if (answer.action === "keep") {
      renderer.note(later);
      return summary;
    }
    if (answer.action === "accept") {
      session.acceptPlan(answer.mode);
      renderer.note(`Plan accepted: approval mode ${answer.mode}.`);
      return turn(PLAN_ACCEPTED_TASK);
    }
    summary = await turn(answer.feedback);
  }
  return summary;
}
