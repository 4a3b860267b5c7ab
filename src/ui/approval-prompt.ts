import { createInterface } from "node:readline/promises";
import type { ApprovalRequest, ApprovalResponse, Approver } from "../agent/events.js";
import { UNATTENDED_RESPONSE } from "../agent/approval.js";
import { diffLines, formatArgs } from "./render.js";

/** Maps what a person typed to a decision; anything that is not y/n/a is feedback (a denial with a reason). */
export function parseApprovalAnswer(answer: string): ApprovalResponse | undefined {
  const text = answer.trim();
  if (text === "") return undefined;
  const lower = text.toLowerCase();
  if (["y", "yes", "是", "好"].includes(lower)) return { decision: "approve" };
  if (["n", "no", "否", "不"].includes(lower)) return { decision: "deny" };
  if (["a", "always"].includes(lower)) return { decision: "always" };
  return { decision: "deny", feedback: text };
}

/** Asks on the terminal; `before` lets the renderer stop its spinner first. */
export function createTerminalApprover(before: () => void, onCancel?: () => void): Approver {
  return async (request: ApprovalRequest) => {
    before();
    const rl = createInterface({ input: process.stdin, output: process.stdout, terminal: true });
    try {
      process.stdout.write(`\n? Allow ${request.tool} ${formatArgs(request.args)}\n  (${request.reason})\n`);
      // What an edit would change, as a unified diff, so the answer is an informed one.
      if (request.preview) process.stdout.write(`${diffLines(request.preview).map((l) => `    ${l}`).join("\n")}\n`);
      for (;;) {
        const answer = await new Promise<string | null>((resolve) => {
          rl.once("SIGINT", () => resolve(null));
          rl.once("close", () => resolve(null));
          rl.question("  [y]es / [n]o / [a]lways for this session / or type feedback: ").then(resolve, () => resolve(null));
        });
        if (answer === null) {
          // The question's line stays as it was typed; what follows starts on a new line.
          process.stdout.write("\n");
          // Ctrl-C at the question cancels the whole turn, as it does anywhere else.
          onCancel?.();
          return { decision: "deny", feedback: "the user cancelled the question" };
        }
        const response = parseApprovalAnswer(answer);
        if (response) return response;
      }
    } finally {
      rl.close();
    }
  };
}

/** Without a terminal nobody can be asked: the call is not run (the engine says what would allow it). */
export const nonInteractiveApprover: Approver = async () => ({ ...UNATTENDED_RESPONSE });
