import { createInterface, type Interface } from "node:readline";
import type { Approver } from "../agent/events.js";
import type { Session } from "../app/session.js";
import { findThreadIn } from "../memory/thread-store.js";
import { APPROVAL_MODES, type ApprovalMode } from "../settings.js";
import type { BackgroundProcess } from "../workspace/processes.js";
import type { Renderer } from "./render.js";
import { formatThreads } from "./threads-table.js";

/** Two Ctrl-C within this window exit even in the middle of a turn. */
export const DOUBLE_INTERRUPT_MS = 1_000;
/** At an empty prompt, a second Ctrl-C within this window leaves (the first one only says so). */
export const EXIT_CONFIRM_MS = 2_000;
/** What the first Ctrl-C at an empty prompt says. */
export const CTRL_C_AGAIN = "(press Ctrl-C again to exit, or type /exit)";
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
  /exit              stop background processes and leave (also Ctrl-D, or Ctrl-C twice at an empty prompt)
Anything else is a request for the agent. Ctrl-C during a turn cancels that turn; at the prompt it clears the line.`;

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
      renderer.note(formatThreads(await session.threads.list(), session.threadId));
      return "continue";
    case "/resume": {
      if (!arg) {
        renderer.note("Usage: /resume <id> (see /threads for ids).");
        return "continue";
      }
      const found = await findThreadIn(session.threads, arg);
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

/**
 * Reads one line on a terminal with editing and history; null on Ctrl-D, on a second Ctrl-C at
 * an empty prompt, or when `leave` settles first (a SIGTERM while the prompt waits). As in a
 * shell, Ctrl-C on a typed line throws the line away and prompts again.
 */
function askLine(io: ReplIo, history: string[], leave: Promise<unknown>, ctrlC: { at: number }): Promise<string | null> {
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
      const typed = rl.line;
      const now = Date.now();
      if (typed === "" && now - ctrlC.at < EXIT_CONFIRM_MS) {
        io.output.write("\n");
        finish(null);
        return;
      }
      ctrlC.at = typed === "" ? now : 0;
      // Leave what was typed on its line, marked as dropped, and start a fresh prompt.
      io.output.write(typed === "" ? `\n${CTRL_C_AGAIN}\n` : "^C\n");
      rl.write(null, { ctrl: true, name: "e" });
      rl.write(null, { ctrl: true, name: "u" });
      rl.prompt();
    });
    rl.on("close", () => finish(null));
    rl.on("history", (h: string[]) => {
      history.splice(0, history.length, ...h);
    });
    rl.question(PROMPT, (answer) => {
      // A request in between: the next Ctrl-C at an empty prompt is a first one again.
      ctrlC.at = 0;
      finish(answer);
    });
    void leave.then(() => {
      if (done) return;
      io.output.write("\n");
      finish(null);
    });
  });
}

/** Lines from a pipe, one request each, until end of input. */
function pipedLines(io: ReplIo): { lines: AsyncIterator<string>; close: () => void } {
  const rl = createInterface({ input: io.input, terminal: false });
  return { lines: rl[Symbol.asyncIterator](), close: () => rl.close() };
}

/** Keys read during a turn; see watchKeys. */
export interface KeyWatch {
  /** Lets someone else read the terminal (an approval question). */
  suspend(): void;
  resume(): void;
  /** Back to a normal terminal; keys typed ahead go back to the input for the next prompt. */
  stop(): void;
}

const CTRL_C = 0x03;

/**
 * During a turn on a terminal, reads keys in raw mode so Ctrl-C arrives as a key rather than as
 * SIGINT to the whole foreground process group. As a signal it also reaches whatever runs us:
 * the tsx wrapper process (`npm run dev`, `npx tsx src/cli.ts`) relays it to us a second time,
 * which read as "Ctrl-C twice" and ended the session, and SIGKILLs us when we are slow to
 * acknowledge, which would leave our processes running. Anything else typed during the turn
 * is kept for the next prompt, as a terminal would.
 */
export function watchKeys(input: ReplIo["input"], onCtrlC: () => void): KeyWatch {
  const typed: Buffer[] = [];
  let reading = false;
  const onData = (chunk: Buffer | string) => {
    const bytes = typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk;
    let from = 0;
    for (let i = 0; i < bytes.length; i++) {
      if (bytes[i] !== CTRL_C) continue;
      if (i > from) typed.push(bytes.subarray(from, i));
      from = i + 1;
      onCtrlC();
    }
    if (from < bytes.length) typed.push(bytes.subarray(from));
  };
  const watch: KeyWatch = {
    suspend() {
      if (!reading) return;
      reading = false;
      input.off("data", onData);
      input.pause();
    },
    resume() {
      if (reading) return;
      reading = true;
      input.setRawMode?.(true);
      input.on("data", onData);
      input.resume();
    },
    stop() {
      watch.suspend();
      input.setRawMode?.(false);
      if (typed.length > 0) input.unshift(Buffer.concat(typed));
      typed.length = 0;
    },
  };
  watch.resume();
  return watch;
}

/**
 * An approver that lets its question read the terminal, then goes back to watching keys (also
 * after Ctrl-C at the question: the cancelled turn is still being wound up).
 */
export function pausingKeys(ask: Approver, keys: KeyWatch | undefined): Approver {
  if (!keys) return ask;
  return async (request) => {
    keys.suspend();
    try {
      return await ask(request);
    } finally {
      keys.resume();
    }
  };
}

/**
 * A signal repeated within this window is the same one delivered twice: the tsx wrapper process
 * relays SIGINT and SIGTERM to its child after the child already got them from the group.
 */
export const REPEATED_SIGNAL_MS = 500;
/** Exit status when a signal (or Ctrl-C twice during a turn) ended the session. */
const EXIT_INTERRUPTED = 130;
const SESSION_SIGNALS: NodeJS.Signals[] = ["SIGINT", "SIGTERM", "SIGHUP"];

/**
 * The interactive session: one thread, a prompt, the same trace per turn. Ctrl-C during a turn
 * cancels the turn; at the prompt (or twice within a second) it leaves. SIGTERM and SIGHUP (the
 * terminal closed) cancel any turn and leave, so close() still stops every process. Resolves
 * with the exit status: 0 when the person left, 130 when a signal or a double Ctrl-C ended it.
 */
export async function runRepl(session: Session, renderer: Renderer, io: ReplIo): Promise<number> {
  renderer.note("Type a request, or /help for commands. Ctrl-C cancels a turn; Ctrl-C twice at an empty prompt, Ctrl-D or /exit leaves.");
  const history: string[] = [];
  let turn: AbortController | undefined;
  let lastInterrupt = 0;
  let lastSignal = { name: "", at: 0 };
  let exitCode: number | undefined;
  let wakeLeave!: () => void;
  const leave = new Promise<void>((resolve) => (wakeLeave = resolve));
  const requestExit = (code: number) => {
    exitCode ??= code;
    wakeLeave();
  };
  const cancelTurn = (note: string) => {
    renderer.pause();
    if (turn && !turn.signal.aborted) {
      renderer.note(note);
      turn.abort();
    }
  };
  /** Ctrl-C, as a key or as SIGINT: cancels the turn; with no turn, or twice within a second, leaves. */
  const interrupt = () => {
    const now = Date.now();
    const twice = now - lastInterrupt < DOUBLE_INTERRUPT_MS;
    lastInterrupt = now;
    if (!turn) requestExit(0);
    else if (twice) requestExit(EXIT_INTERRUPTED);
    cancelTurn("\nCancelling this turn…");
  };
  const onSignal = (signal: NodeJS.Signals) => {
    const now = Date.now();
    if (signal === lastSignal.name && now - lastSignal.at < REPEATED_SIGNAL_MS) return;
    lastSignal = { name: signal, at: now };
    if (signal === "SIGINT") return interrupt();
    requestExit(EXIT_INTERRUPTED);
    cancelTurn(`\n${signal}: cancelling this turn and leaving…`);
  };
  for (const signal of SESSION_SIGNALS) process.on(signal, onSignal);

  const piped = io.input.isTTY ? undefined : pipedLines(io);
  const ctrlAtPrompt = { at: 0 };
  const readKeys = Boolean(io.input.isTTY && io.input.setRawMode);
  const nextLine = async (): Promise<string | null> => {
    if (!piped) return askLine(io, history, leave, ctrlAtPrompt);
    const next = await Promise.race([piped.lines.next(), leave.then(() => null)]);
    return next === null || next.done ? null : next.value;
  };
  try {
    while (exitCode === undefined) {
      const line = await nextLine();
      if (line === null || exitCode !== undefined) break;
      const text = line.trim();
      if (!text) continue;
      if (text.startsWith("/")) {
        if ((await runSlashCommand(text, session, renderer)) === "exit") break;
        continue;
      }
      const controller = new AbortController();
      turn = controller;
      const keys = readKeys ? watchKeys(io.input, interrupt) : undefined;
      const approver = pausingKeys(io.approver(() => controller.abort()), keys);
      let summary: Awaited<ReturnType<Session["runTurn"]>>;
      try {
        summary = await session.runTurn(text, controller.signal, approver);
      } finally {
        keys?.stop();
        turn = undefined;
      }
      if (controller.signal.aborted) renderer.note("Turn cancelled; the conversation so far is kept.");
      else if (summary.reason === "max_steps") renderer.note(`Reached the step limit (${session.settings.maxSteps}); say "continue" to go on.`);
      const running = session.running();
      if (running.length > 0) renderer.note(`Running in the background: ${running.map((p) => `${p.id}${p.url ? ` ${p.url}` : ""}`).join(", ")} (/ps, /kill <id>)`);
    }
  } finally {
    for (const signal of SESSION_SIGNALS) process.off(signal, onSignal);
    piped?.close();
  }
  return exitCode ?? 0;
}
