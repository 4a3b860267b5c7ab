import { createInterface, type Interface } from "node:readline";
import type { Approver } from "../agent/events.js";
import type { Session } from "../app/session.js";
import { findThread, listThreads } from "../memory/threads.js";
import { APPROVAL_MODES, type ApprovalMode } from "../settings.js";
import type { BackgroundProcess } from "../workspace/processes.js";
import type { Renderer } from "./render.js";
import { formatThreads } from "./threads-table.js";

/** Two Ctrl-C within this window exit even in the middle of a turn. */
export const DOUBLE_INTERRUPT_MS = 1_000;
/** Lines of history kept by the prompt. */
const HISTORY_SIZE = 500;
const PROMPT = "› ";

export const REPL_HELP = `Commands:
  /help              this list
  /new               start a fresh thread
  /threads           saved threads: id, first request, last update, steps
  /resume <id>       continue a saved thread
  /approval <mode>   suggest | auto-edit | full-auto
  /ps                background processes (dev servers) with their URLs
  /kill <id>         stop a background process
  /exit              stop background processes and leave (also Ctrl-D, or Ctrl-C at the prompt)
Anything else is a request for the agent. Ctrl-C during a turn cancels that turn.`;

export interface ReplIo {
  input: NodeJS.ReadableStream & { isTTY?: boolean; setRawMode?: (mode: boolean) => void };
  output: NodeJS.WritableStream;
  /** Whether to ask approval questions on the terminal (false: decline them). */
  interactive: boolean;
  /** Builds the approver for a turn; `cancel` aborts that turn (Ctrl-C at a question). */
  approver: (cancel: () => void) => Approver;
}

export function formatProcesses(processes: BackgroundProcess[]): string {
  if (processes.length === 0) return "No background processes.";
  return processes
    .map((p) => `${p.id}  pid ${p.pid}  ${p.running ? "running" : `exited (${p.exitCode})`}  ${p.url ?? "-"}  ${p.command}`)
    .join("\n");
}

type SlashResult = "continue" | "exit";

/** Runs one slash command; exported so tests can call it without a terminal. */
export async function runSlashCommand(line: string, session: Session, renderer: Renderer): Promise<SlashResult> {
  const [command, ...rest] = line.trim().split(/\s+/);
  const arg = rest.join(" ");
  switch (command) {
    case "/help":
      renderer.note(REPL_HELP);
      return "continue";
    case "/exit":
    case "/quit":
      return "exit";
    case "/new":
      renderer.note(`New thread ${session.newThread()}.`);
      return "continue";
    case "/threads":
      renderer.note(formatThreads(listThreads(session.settings.workspace), session.threadId));
      return "continue";
    case "/resume": {
      if (!arg) {
        renderer.note("Usage: /resume <id> (see /threads for ids).");
        return "continue";
      }
      const found = findThread(session.settings.workspace, arg);
      if (!found) {
        renderer.note(`No saved thread "${arg}" in this workspace; /threads lists them.`);
        return "continue";
      }
      session.threadId = found.id;
      session.resumed = true;
      renderer.note(`Resumed thread ${found.id}: ${found.firstRequest}`);
      return "continue";
    }
    case "/approval": {
      if (!APPROVAL_MODES.includes(arg as ApprovalMode)) {
        renderer.note(`Approval mode is ${session.approval}. Usage: /approval ${APPROVAL_MODES.join(" | ")}`);
        return "continue";
      }
      session.approval = arg as ApprovalMode;
      renderer.note(`Approval mode: ${session.approval}.`);
      return "continue";
    }
    case "/ps":
      renderer.note(formatProcesses(session.parts.tools.processes.list()));
      return "continue";
    case "/kill": {
      if (!arg) {
        renderer.note("Usage: /kill <id> (see /ps for ids).");
        return "continue";
      }
      const stopped = await session.parts.tools.processes.stop(arg);
      renderer.note(stopped ? `Stopped ${arg}.` : `No running background process "${arg}"; /ps lists them.`);
      return "continue";
    }
    default:
      renderer.note(`Unknown command ${command}. /help lists the commands.`);
      return "continue";
  }
}

/** Reads one line on a terminal with editing and history; null on Ctrl-C or Ctrl-D. */
function askLine(io: ReplIo, history: string[]): Promise<string | null> {
  return new Promise((resolve) => {
    const rl: Interface = createInterface({
      input: io.input,
      output: io.output,
      terminal: true,
      history,
      historySize: HISTORY_SIZE,
      removeHistoryDuplicates: true,
    });
    let done = false;
    const finish = (value: string | null) => {
      if (done) return;
      done = true;
      rl.close();
      resolve(value);
    };
    rl.on("SIGINT", () => {
      io.output.write("\n");
      finish(null);
    });
    rl.on("close", () => finish(null));
    rl.on("history", (h: string[]) => {
      history.splice(0, history.length, ...h);
    });
    rl.question(PROMPT, (answer) => finish(answer));
  });
}

/** Lines from a pipe, one request each, until end of input. */
async function* pipedLines(io: ReplIo): AsyncGenerator<string> {
  const rl = createInterface({ input: io.input, terminal: false });
  for await (const line of rl) yield line;
}

/**
 * The interactive session: one thread, a prompt, the same trace per turn. Ctrl-C during a turn
 * cancels the turn; at the prompt (or twice within a second) it leaves.
 */
export async function runRepl(session: Session, renderer: Renderer, io: ReplIo): Promise<number> {
  renderer.note('Type a request, or /help for commands. Ctrl-C cancels a turn; Ctrl-C at the prompt or /exit leaves.');
  const history: string[] = [];
  let turn: AbortController | undefined;
  let lastInterrupt = 0;
  let exitRequested = false;
  const onSignal = (signal: NodeJS.Signals) => {
    const now = Date.now();
    if (signal === "SIGTERM" || now - lastInterrupt < DOUBLE_INTERRUPT_MS || !turn) exitRequested = true;
    lastInterrupt = now;
    renderer.pause();
    if (turn && !turn.signal.aborted) {
      renderer.note("\nCancelling this turn…");
      turn.abort();
    }
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);

  const lines = io.input.isTTY ? undefined : pipedLines(io);
  try {
    while (!exitRequested) {
      let line: string | null;
      if (lines) {
        const next = await lines.next();
        line = next.done ? null : next.value;
      } else {
        line = await askLine(io, history);
      }
      if (line === null) break;
      const text = line.trim();
      if (!text) continue;
      if (text.startsWith("/")) {
        if ((await runSlashCommand(text, session, renderer)) === "exit") break;
        continue;
      }
      const controller = new AbortController();
      turn = controller;
      const summary = await session.runTurn(text, controller.signal, io.approver(() => controller.abort()));
      if (turn.signal.aborted) renderer.note("Turn cancelled; the conversation so far is kept.");
      else if (summary.reason === "max_steps") renderer.note(`Reached the step limit (${session.settings.maxSteps}); say "continue" to go on.`);
      turn = undefined;
      const running = session.running();
      if (running.length > 0) renderer.note(`Running in the background: ${running.map((p) => `${p.id}${p.url ? ` ${p.url}` : ""}`).join(", ")} (/ps, /kill <id>)`);
    }
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
  return 0;
}
