import { randomInt, timingSafeEqual } from "node:crypto";
import { interrupt, isGraphInterrupt } from "@langchain/langgraph";
import type { ApprovalRequest, ApprovalResponse } from "../contracts/events.js";
import type { ApprovalSession, StudioApprovalCodes, WaitingApproval } from "../contracts/approval-codes.js";
import { normalizeResponse } from "../policy/approval-answer.js";
import { addGatedSecrets, gateText } from "../workspace/output-gate.js";

/**
 * Studio approval codes. LangGraph's dev server API has no authentication: any process on the
 * machine (a "dev server" the agent itself started) can find an interrupted thread and resume it.
 * And the dev server keeps every resume: `GET /threads/<id>/runs` returns it and its ops file
 * under `.langgraph_api/` holds it. So an approval counts only with a code that is
 *   - made per interrupt (conversation + tool call + which question about it: an edit asked about
 *     again gets a new code; two sub-agents' calls that share an id, as servers that number a
 *     response's calls give them, each get their own), in this process's memory, and printed only to the
 *     dev server's terminal (never put in an environment, a file, an interrupt value or a trace);
 *   - good for that one interrupt: using it (right or wrong) settles it when the approve node
 *     finishes, so the copy the dev server keeps, replayed later (a fork of the thread from the
 *     checkpoint before the answer, a copied thread, another interrupt), is refused.
 * While one approve node asks several questions LangGraph re-runs it once per answer and hands
 * the earlier answers back; those replays are unsettled and count again, by design.
 */

/** Code alphabet without look-alikes (0/O, 1/I/L), typed by a person from the terminal. */
const ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789";
/** 10 characters of 31: about 50 bits, and one guess per interrupt (a wrong one settles it). */
const CODE_LENGTH = 10;

export function createApprovalCode(): string {
  let code = "";
  for (let i = 0; i < CODE_LENGTH; i++) code += ALPHABET[randomInt(ALPHABET.length)];
  return `${code.slice(0, CODE_LENGTH / 2)}-${code.slice(CODE_LENGTH / 2)}`;
}

/** Case, spaces and dashes do not matter when typed back. */
function canonical(code: string): string {
  return code.toUpperCase().replace(/[\s-]/g, "");
}

export function sameCode(given: unknown, code: string): boolean {
  if (typeof given !== "string") return false;
  const a = Buffer.from(canonical(given));
  const b = Buffer.from(canonical(code));
  return a.length === b.length && timingSafeEqual(a, b);
}

export const STUDIO_APPROVE_WITH =
  'Resume with {"decision": "approve", "code": "<the one-time code printed for this call in the terminal running npm run studio>"} (or "always"), or {"decision": "edit", "args": {<all of the call\'s arguments, as you want them>}, "code": "<the same code>"} to run it changed; {"decision": "deny"} needs no code.';

export const STUDIO_CODE_MISSING =
  "the approval did not carry this call's one-time Studio approval code (printed in the terminal running npm run studio), so it was treated as a refusal";

/** The lines the dev server prints when a call waits for an answer. */
export function approvalCodeNotice(request: ApprovalRequest, threadId: string, code: string): string {
  // The tool name and reason come from the model: through the output gate. The code must not be
  // (it is one of the gate's secrets, masked everywhere else, traces included).
  const asker = request.askedBy ? ` of sub-agent ${request.askedBy}` : "";
  return (
    gateText(`mini-cursor: ${request.tool}${asker} in thread ${threadId} waits for approval (${request.reason}).\n`) +
    `  One-time approval code: ${code}\n` +
    `  To approve it in Studio, resume with {"decision": "approve", "code": "${code}"}` +
    ` (or {"decision": "edit", "args": {…}, "code": "${code}"} to run it with your arguments).\n`
  );
}

interface Pending {
  printed: boolean;
  settled: boolean;
  /** What waits for it, with its code, for the person's list (waiting()). */
  shown: WaitingApproval;
}

export type { ApprovalSession, StudioApprovalCodes, WaitingApproval };

export function createStudioApprovalCodes(print: (text: string, code: string) => void): StudioApprovalCodes {
  const pending = new Map<string, Pending>();
  return {
    session(threadId, conversation = threadId) {
      const asked: string[] = [];
      /** Questions this node run asked per call: an edit asked about again is a new interrupt with a code of its own. */
      const rounds = new Map<string, number>();
      return {
        ask(request) {
          const round = rounds.get(request.toolCallId) ?? 0;
          rounds.set(request.toolCallId, round + 1);
          const key = `${threadId}\0${conversation}\0${request.toolCallId}\0${round}`;
          let entry = pending.get(key);
          if (!entry || entry.settled) {
            const code = createApprovalCode();
            const { tool, reason, askedBy } = request;
            entry = {
              printed: false,
              settled: false,
              shown: { threadId, tool, reason, code, ...(askedBy ? { askedBy } : {}) },
            };
            pending.set(key, entry);
            // The resume that carries it is traced (Studio's LangSmith tracer gates every payload).
            const bare = canonical(code);
            addGatedSecrets([code, code.toLowerCase(), bare, bare.toLowerCase()]);
          }
          asked.push(key);
          let value: unknown;
          try {
            value = interrupt({ ...request, approveWith: STUDIO_APPROVE_WITH });
          } catch (err) {
            if (isGraphInterrupt(err) && !entry.printed) {
              entry.printed = true;
              print(approvalCodeNotice(request, threadId, entry.shown.code), entry.shown.code);
            }
            throw err;
          }
          return studioResponse(value, entry.shown.code);
        },
        settle() {
          for (const key of asked) {
            const entry = pending.get(key);
            if (entry) entry.settled = true;
          }
        },
      };
    },
    waiting() {
      return [...pending.values()].filter((e) => e.printed && !e.settled).map((e) => ({ ...e.shown }));
    },
  };
}

/** A resume as an answer: approvals ("always" and edits too) need the code; a denial never does. */
export function studioResponse(value: unknown, code: string): ApprovalResponse {
  const response = normalizeResponse(value);
  const given = (value ?? {}) as { code?: unknown };
  if (response.decision !== "deny" && !sameCode(given.code, code))
    return { decision: "deny", feedback: STUDIO_CODE_MISSING };
  return response;
}
