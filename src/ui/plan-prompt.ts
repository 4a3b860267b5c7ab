import type { ApprovalMode } from "../contracts/modes.js";
import { block, print } from "./output.js";
import { readAnswer } from "./approval-prompt.js";
import { fitQuestion } from "./text-width.js";

/** What the person decided about a plan made in plan mode. */
export type PlanAnswer =
  /** Carry it out on the same thread in this approval mode. */
  | { action: "accept"; mode: ApprovalMode }
  /** Revise it: the feedback is the next plan-mode request. */
  | { action: "refine"; feedback: string }
  /** Neither yet: back to the prompt, still in plan mode. */
  | { action: "keep" };

/** The modes an accepted plan can run in, by the letter that picks each. */
const MODE_KEYS: Record<string, Exclude<ApprovalMode, "plan">> = {
  s: "suggest",
  suggest: "suggest",
  e: "auto-edit",
  "auto-edit": "auto-edit",
  f: "full-auto",
  "full-auto": "full-auto",
};

/** Maps what was typed to a decision: a letter accepts (in that mode), Enter keeps planning, anything else is feedback. */
export function parsePlanAnswer(answer: string, defaultMode: ApprovalMode): PlanAnswer {
  const text = answer.trim();
  if (text === "") return { action: "keep" };
  const lower = text.toLowerCase();
  if (["a", "y", "yes", "accept"].includes(lower)) return { action: "accept", mode: defaultMode };
  const mode = MODE_KEYS[lower];
  if (mode) return { action: "accept", mode };
  return { action: "refine", feedback: text };
}

/** The question after a plan, naming the mode an accept runs in. */
export function planQuestion(defaultMode: ApprovalMode): { text: string; prompt: string } {
  return {
    text: "\n? The plan is ready (plan mode: nothing was changed or run).\n",
    prompt: `  [a]ccept and carry it out (${defaultMode}) / accept in [s]uggest, auto-[e]dit or [f]ull-auto / or type what to change / Enter: not now: `,
  };
}

/** Asks on a terminal; Ctrl-C or a closed input count as "not now". */
export async function askPlanAnswer(
  input: NodeJS.ReadableStream,
  output: NodeJS.WritableStream,
  defaultMode: ApprovalMode,
): Promise<PlanAnswer> {
  // As wide as the terminal at most, wrapped between choices (ui/text-width.ts).
  const question = fitQuestion(planQuestion(defaultMode), (output as { columns?: number }).columns);
  print(output, block(question.text));
  const answer = await readAnswer(question.prompt, undefined, input, output);
  if (answer === null) {
    print(output, block("\n"));
    return { action: "keep" };
  }
  return parsePlanAnswer(answer, defaultMode);
}
