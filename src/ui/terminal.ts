import { createInterface } from "node:readline/promises";
import type { ApprovalMode } from "../contracts/modes.js";
import { askPlanAnswer, type PlanAnswer } from "./plan-prompt.js";
import { block, ownCode, print, render } from "./output.js";
import { trackQuestion } from "./questions.js";
import { type KeyWatch, watchKeys } from "./repl.js";

/**
 * The process's own terminal, for the front ends outside ui/ (app/, studio/): they ask and print
 * through these, so that only ui/ and cli.ts touch stdin, stdout and stderr (npm run lint checks it).
 */

/** The streams an interactive session reads requests from and prints to. */
export function terminalStreams(): { input: NodeJS.ReadStream; output: NodeJS.WriteStream } {
  return { input: process.stdin, output: process.stdout };
}

/**
 * Asks one line on the terminal; "" when it is closed before an answer (end of input, or a
 * SIGTERM/SIGHUP closing every open question: ui/questions.ts).
 */
export async function askOnTerminal(question: string): Promise<string> {
  const rl = trackQuestion(createInterface({ input: process.stdin, output: process.stdout, terminal: true }));
  try {
    return await new Promise<string>((resolve) => {
      rl.once("close", () => resolve(""));
      rl.question(render(block(question))).then(resolve, () => resolve(""));
    });
  } finally {
    rl.close();
  }
}

/** A plan made on the terminal: accept (in which mode), refine, or not now (ui/plan-prompt.ts). */
export function askPlanOnTerminal(mode: ApprovalMode): Promise<PlanAnswer> {
  return askPlanAnswer(process.stdin, process.stdout, mode);
}

/** Ctrl-C read as a key on the terminal (ui/repl.ts watchKeys); undefined off a terminal. */
export function watchTerminalKeys(onCtrlC: () => void): KeyWatch | undefined {
  return process.stdin.isTTY ? watchKeys(process.stdin, onCtrlC) : undefined;
}

/** A line for the person at the terminal that is not part of the run's output (stderr). */
export function noticeOnTerminal(text: string): void {
  print(process.stderr, block(text));
}

/** A notice that shows one of our one-time codes to the person at this terminal (Studio's approval codes). */
export function codeNoticeOnTerminal(text: string, code: string): void {
  const parts = text.split(code);
  print(
    process.stderr,
    parts.flatMap((part, i) => (i === 0 ? [block(part)] : [ownCode(code), block(part)])),
  );
}

/** True when both stdin and stdout are terminals (so we may ask questions and animate). */
export function isInteractiveTerminal(): boolean {
  return Boolean(process.stdin.isTTY && process.stdout.isTTY);
}
