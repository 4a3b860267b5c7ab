import type { ApprovalRequest, ApprovalResponse } from "./events.js";

/**
 * Studio's one-time approval codes as the runtime carries them (graph/studio-secret.ts makes
 * them, the approve node asks through a session, studio/codes-socket.ts lists the waiting ones).
 */

/** A code printed for a call that still waits for it: what `npm run studio -- codes` lists. */
export interface WaitingApproval {
  threadId: string;
  tool: string;
  reason: string;
  /** The sub-agent that asks (its label), when one does. */
  askedBy?: string;
  code: string;
}

/**
 * One server's codes; `print` writes to the dev server's terminal the notice (gated already but
 * for the code) and the code, which only there is shown unmasked.
 */
export interface StudioApprovalCodes {
  /**
   * A question session for one run of the approve node on one thread, in one conversation of it
   * (read-tracker.ts `conversationOf`: the thread, or a sub-agent's in it; the thread when not given).
   */
  session(threadId: string, conversation?: string): ApprovalSession;
  /** Read-only: the codes printed and not yet spent, oldest first (for the person only: studio/codes-socket.ts). */
  waiting(): WaitingApproval[];
}

export interface ApprovalSession {
  /** Asks through LangGraph's interrupt(); an approval counts only with this interrupt's code. */
  ask(request: ApprovalRequest): ApprovalResponse;
  /** The node finished: every interrupt it answered is settled, its code spent. */
  settle(): void;
}
