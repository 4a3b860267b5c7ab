import { createInterface, type Interface } from "node:readline";
import type { RunSummary } from "../agent/engine.js";
import type { Approver } from "../agent/events.js";
import type { Session } from "../app/session.js";
import type { SlashResult } from "../app/slash-commands.js";
import type { BackgroundProcess } from "../workspace/processes.js";
import type { Renderer } from "./render.js";

/** Two Ctrl-C within this window exit even in the middle of a turn. */
export const DOUBLE_INTERRUPT_MS = 1_000;
/** At an empty prompt, a second Ctrl-C within this window leaves (the first one only says so). */
export const EXIT_CONFIRM_MS = 2_000;
/** What the first Ctrl-C at an empty prompt says. */
export const CTRL_C_AGAIN = "(press Ctrl-C again to exit, or type /exit)";
/** Lines of history kept by the prompt. */
const HISTORY_SIZE = 500;
const PROMPT = "› ";

export interface ReplIo {
  input: NodeJS.ReadableStream & { isTTY?: boolean; setRawMode?: (mode: boolean) => void };
  output: NodeJS.WritableStream;
  /** Whether to ask approval questions on the terminal (false: decline them). */
  interactive: boolean;
  /** Builds the approver for a turn; `cancel` aborts that turn (Ctrl-C at a question). */
  approver: (cancel: () => void) => Approver;
  /** Runs a line that starts with "/" (the app's command table); "exit" leaves the session. */
  /**
   * Runs a slash command line (app/slash-commands.ts). `confirm` asks a yes/no question on the
   * terminal (absent off a terminal). A `request` result is run next, as if typed.
   */
  runCommand(line: string, confirm?: (question: string) => Promise<boolean>): Promise<SlashResult>;
  /** After each turn (e.g. a plan made on a terminal is reviewed); `runTurn` runs a further turn the same way. */
  afterTurn?(summary: RunSummary, runTurn: (text: string) => Promise<RunSummary>): Promise<void>;
  /** Connects the process's stop signals to the session (the app's signal policy); returns the disconnect. */
  watchSignals(controls: ReplControls): () => void;
}

/** How the app's signal policy steers the session. */
export interface ReplControls {
  /** Ctrl-C: cancels the turn; with no turn, or twice within DOUBLE_INTERRUPT_MS, leaves. */
  interrupt(): void;
  /** Cancels any turn and leaves as interrupted (SIGTERM, the terminal closed). */
  leave(why: string): void;
}

/** How the session ended: the person left, or a signal or a double Ctrl-C ended it. */
export type ReplEnd = "left" | "interrupted";

export function formatProcesses(processes: BackgroundProcess[]): string {
  if (processes.length === 0) return "No background processes.";
  return processes
    .map(
      (p) =>
        `${p.id}  pid ${p.pid}  ${p.running ? "running" : `exited (${p.exitCode})`}  ${p.url ?? "-"}  ${p.command}`,
    )
    .join("\n");
}

/**
 * Reads one line on a terminal with editing and history; null on Ctrl-D, on a second Ctrl-C at
 * an empty prompt, or when `leave` settles first (a SIGTERM while the prompt waits). As in a
 * shell, Ctrl-C on a typed line throws the line away and prompts again.
 */
function askLine(
  io: ReplIo,
  history: string[],
  leave: Promise<unknown>,
  ctrlC: { at: number },
): Promise<string | null> {
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

/** A yes/no question on the terminal; anything but y/yes is no. */
function askYesNo(io: ReplIo, question: string): Promise<boolean> {
  return new Promise((resolve) => {
    const rl = createInterface({ input: io.input, output: io.output, terminal: true });
    let answered = false;
    rl.on("close", () => !answered && resolve(false));
    rl.question(question, (answer) => {
      answered = true;
      rl.close();
      resolve(/^y(es)?$/i.test(answer.trim()));
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
 * The interactive session: one thread, a prompt, the same trace per turn. Ctrl-C during a turn
 * cancels the turn; at the prompt (or twice within a second) it leaves. What a signal means is
 * the app's (io.watchSignals); leaving cancels any turn first, so close() still stops every
 * process. Resolves with how the session ended.
 */
export async function runRepl(session: Session, renderer: Renderer, io: ReplIo): Promise<ReplEnd> {
  renderer.note(
    "Type a request, or /help for commands. Ctrl-C cancels a turn; Ctrl-C twice at an empty prompt, Ctrl-D or /exit leaves.",
  );
  const history: string[] = [];
  let turn: AbortController | undefined;
  let lastInterrupt = 0;
  let exitCode: ReplEnd | undefined;
  let wakeLeave!: () => void;
  const leave = new Promise<void>((resolve) => (wakeLeave = resolve));
  const requestExit = (code: ReplEnd) => {
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
    if (!turn) requestExit("left");
    else if (twice) requestExit("interrupted");
    cancelTurn("\nCancelling this turn…");
  };
  const unwatchSignals = io.watchSignals({
    interrupt,
    leave: (why) => {
      requestExit("interrupted");
      cancelTurn(`\n${why}: cancelling this turn and leaving…`);
    },
  });

  const piped = io.input.isTTY ? undefined : pipedLines(io);
  const ctrlAtPrompt = { at: 0 };
  const readKeys = Boolean(io.input.isTTY && io.input.setRawMode);
  /** One request as a turn: keys watched, Ctrl-C cancels it. */
  const runTurn = async (text: string): Promise<RunSummary> => {
    const controller = new AbortController();
    turn = controller;
    const keys = readKeys ? watchKeys(io.input, interrupt) : undefined;
    const approver = pausingKeys(
      io.approver(() => controller.abort()),
      keys,
    );
    let summary: RunSummary;
    try {
      summary = await session.runTurn(text, controller.signal, approver);
    } finally {
      keys?.stop();
      turn = undefined;
    }
    if (controller.signal.aborted) renderer.note("Turn cancelled; the conversation so far is kept.");
    else if (summary.reason === "max_steps")
      renderer.note(`Reached the step limit (${session.settings.maxSteps}); say "continue" to go on.`);
    return summary;
  };
  const nextLine = async (): Promise<string | null> => {
    if (!piped) return askLine(io, history, leave, ctrlAtPrompt);
    const next = await Promise.race([piped.lines.next(), leave.then(() => null)]);
    return next === null || next.done ? null : next.value;
  };
  try {
    while (exitCode === undefined) {
      const line = await nextLine();
      if (line === null || exitCode !== undefined) break;
      let text = line.trim();
      if (!text) continue;
      if (text.startsWith("/")) {
        const confirm = io.interactive && !piped ? (question: string) => askYesNo(io, question) : undefined;
        const result = await io.runCommand(text, confirm);
        if (result === "exit") break;
        if (result === "continue") continue;
        text = result.request;
      }
      const summary = await runTurn(text);
      await io.afterTurn?.(summary, runTurn);
      const running = session.running();
      if (running.length > 0)
        renderer.note(
          `Running in the background: ${running.map((p) => `${p.id}${p.url ? ` ${p.url}` : ""}`).join(", ")} (/ps, /kill <id>)`,
        );
    }
  } finally {
    unwatchSignals();
    piped?.close();
  }
  return exitCode ?? "left";
}
