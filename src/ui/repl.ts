import { createInterface, type Interface } from "node:readline";
import { PassThrough } from "node:stream";
import type { RunSummary } from "../agent/engine.js";
import type { Approver } from "../contracts/events.js";
import type { SlashResult } from "../contracts/slash.js";
import type { Settings } from "../settings.js";
import { endedHow, type BackgroundProcess } from "../workspace/processes.js";
import { PasteFilter, PasteStore } from "./paste.js";
import { block, print, printControl, render } from "./output.js";
import { trackQuestion } from "./questions.js";
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
/** The prompt after a line that ended in a backslash: the request goes on on this line. */
const CONTINUATION_PROMPT = "… ";

export interface ReplIo {
  input: NodeJS.ReadableStream & { isTTY?: boolean; setRawMode?: (mode: boolean) => void };
  output: NodeJS.WritableStream;
  /** Whether to ask approval questions on the terminal (false: decline them). */
  interactive: boolean;
  /** Builds the approver for a turn; `cancel` aborts that turn (Ctrl-C at a question). */
  approver: (cancel: () => void) => Approver;
  /**
   * Runs a slash command line (app/slash-commands.ts). `confirm` asks a yes/no question on the
   * terminal (absent off a terminal). A `request` result is run next, as if typed.
   */
  runCommand(line: string, confirm?: (question: string) => Promise<boolean>): Promise<SlashResult>;
  /** The slash commands Tab completes, with their one-line descriptions (read at each Tab). */
  completions?(): ReadonlyArray<{ name: string; summary: string }>;
  /** History kept between sessions (app/prompt-history.ts); absent: this session's only. */
  history?: { load(): string[]; add(line: string): void };
  /** The request a `!command` line stands for (the app's shell escape); absent: sent as typed. */
  shellEscape?(command: string): string;
  /** After each turn (e.g. a plan made on a terminal is reviewed); `runTurn` runs a further turn the same way. */
  afterTurn?(summary: RunSummary, runTurn: (text: string) => Promise<RunSummary>): Promise<void>;
  /** Connects the process's stop signals to the session (the app's signal policy); returns the disconnect. */
  watchSignals(controls: ReplControls): () => void;
}

/** What the REPL asks of the app's session (app/session.ts `Session`): a turn, the step limit, the processes left. */
export interface ReplSession {
  readonly settings: Pick<Settings, "maxSteps">;
  runTurn(task: string, signal: AbortSignal, approver: Approver): Promise<RunSummary>;
  running(): BackgroundProcess[];
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
    .map((p) => `${p.id}  pid ${p.pid}  ${p.running ? "running" : endedHow(p)}  ${p.url ?? "-"}  ${p.command}`)
    .join("\n");
}

/** Description lines Tab lists at most; more matches are counted. */
const MAX_COMPLETION_ROWS = 30;

/**
 * Tab at the prompt: a line that is a slash command's beginning (nothing after it) is completed as
 * far as the matching names agree; when they agree no further, they are listed with their
 * descriptions above the prompt (readline's own list shows names only).
 */
export function completeSlash(
  line: string,
  commands: ReadonlyArray<{ name: string; summary: string }>,
  list: (text: string) => void,
): [string[], string] {
  if (!/^\/\S*$/.test(line)) return [[], line];
  const matches = commands.filter((c) => c.name.startsWith(line));
  if (matches.length === 0) return [[], line];
  if (matches.length === 1) return [[`${matches[0]!.name} `], line];
  let common = matches[0]!.name;
  for (const { name } of matches) while (!name.startsWith(common)) common = common.slice(0, -1);
  if (common.length > line.length) return [[common], line];
  const width = Math.max(...matches.map((c) => c.name.length));
  const rows = matches.slice(0, MAX_COMPLETION_ROWS).map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`);
  const more = matches.length - rows.length;
  list([...rows, ...(more > 0 ? [`  … ${more} more`] : [])].join("\n"));
  return [[], line];
}

/** What askLine shares with the session: history, pastes, and how Ctrl-C at the prompt counts. */
interface PromptState {
  history: string[];
  pastes: PasteStore;
  /** When the last lone Ctrl-C at an empty prompt was pressed (0: none pending). */
  ctrlCAt: number;
  /** True (and the session is leaving) when this Ctrl-C is the second of two within a second. */
  secondOfTwo(): boolean;
  /** A line was entered: a Ctrl-C that came before it no longer pairs with the next one. */
  lineEntered(): void;
}

/**
 * The terminal as the line editor should read it: pastes (bracketed paste mode) become
 * placeholders; everything else passes as typed. Raw mode is the real terminal's.
 */
function editorInput(io: ReplIo, pastes: PasteStore): { input: PassThrough; detach(): void } {
  const input = Object.assign(new PassThrough(), {
    isTTY: true,
    setRawMode: (mode: boolean) => io.input.setRawMode?.(mode),
  });
  const filter = new PasteFilter((text) => pastes.placeholder(text));
  const onData = (chunk: Buffer | string) => {
    const text = filter.feed(chunk);
    if (text) input.write(text);
  };
  // Only to a terminal: `mini-cursor | tee log` must not get escape sequences in the log.
  const terminalOut = Boolean((io.output as { isTTY?: boolean }).isTTY);
  io.input.on("data", onData);
  io.input.resume();
  if (terminalOut) printControl(io.output, "bracketedPasteOn");
  return {
    input,
    detach() {
      if (terminalOut) printControl(io.output, "bracketedPasteOff");
      io.input.off("data", onData);
      io.input.pause();
    },
  };
}

/**
 * Reads one request on a terminal with editing and history; null on Ctrl-D, on a second Ctrl-C
 * at an empty prompt, or when `leave` settles first (a SIGTERM while the prompt waits). As in a
 * shell, Ctrl-C on a typed line throws the line away and prompts again; a line ending in `\`
 * goes on on the next one, and a pasted block arrives whole.
 */
function askLine(io: ReplIo, state: PromptState, leave: Promise<unknown>): Promise<string | null> {
  return new Promise((resolve) => {
    const editor = editorInput(io, state.pastes);
    const completions = io.completions;
    const rl: Interface = createInterface({
      input: editor.input,
      output: io.output,
      terminal: true,
      history: state.history,
      historySize: HISTORY_SIZE,
      removeHistoryDuplicates: true,
      ...(completions
        ? {
            completer: (line: string): [string[], string] =>
              completeSlash(line, completions(), (text) => {
                print(io.output, block(`\n${text}\n`));
                rl.prompt(true);
              }),
          }
        : {}),
    });
    /** The lines before this one, when earlier lines ended in a backslash. */
    const parts: string[] = [];
    let done = false;
    const finish = (value: string | null) => {
      if (done) return;
      done = true;
      rl.close();
      editor.detach();
      resolve(value === null ? null : state.pastes.expand(value));
    };
    rl.on("SIGINT", () => {
      const typed = rl.line;
      const empty = typed === "" && parts.length === 0;
      const now = Date.now();
      if (empty && (state.secondOfTwo() || now - state.ctrlCAt < EXIT_CONFIRM_MS)) {
        print(io.output, block("\n"));
        finish(null);
        return;
      }
      state.ctrlCAt = empty ? now : 0;
      // Leave what was typed on its line, marked as dropped, and start a fresh prompt.
      print(io.output, block(empty ? `\n${CTRL_C_AGAIN}\n` : "^C\n"));
      parts.length = 0;
      rl.setPrompt(PROMPT);
      rl.write(null, { ctrl: true, name: "e" });
      rl.write(null, { ctrl: true, name: "u" });
      rl.prompt();
    });
    rl.on("close", () => finish(null));
    rl.on("history", (h: string[]) => {
      state.history.splice(0, state.history.length, ...h);
      if (h[0] !== undefined) io.history?.add(h[0]);
    });
    rl.on("line", (line: string) => {
      if (line.endsWith("\\")) {
        parts.push(line.slice(0, -1));
        rl.setPrompt(CONTINUATION_PROMPT);
        rl.prompt();
        return;
      }
      // A request in between: the next Ctrl-C at an empty prompt is a first one again, also when
      // it comes within a second of the Ctrl-C that cancelled the last turn.
      state.ctrlCAt = 0;
      state.lineEntered();
      finish([...parts, line].join("\n"));
    });
    rl.setPrompt(PROMPT);
    rl.prompt();
    void leave.then(() => {
      if (done) return;
      print(io.output, block("\n"));
      finish(null);
    });
  });
}

/** A yes/no question on the terminal; anything but y/yes is no. */
function askYesNo(io: ReplIo, question: string): Promise<boolean> {
  return new Promise((resolve) => {
    const rl = trackQuestion(createInterface({ input: io.input, output: io.output, terminal: true }));
    let answered = false;
    rl.on("close", () => !answered && resolve(false));
    // The question may name files of the workspace: it is gated like everything printed.
    rl.question(render(block(question)), (answer) => {
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
 * An approver (or another question) that lets its question read the terminal, then goes back to
 * watching keys (also after Ctrl-C at the question: the cancelled turn is still being wound up).
 */
export function pausingKeys<A extends unknown[], R>(
  ask: (...args: A) => Promise<R>,
  keys: KeyWatch | undefined,
): (...args: A) => Promise<R> {
  if (!keys) return ask;
  return async (...args) => {
    keys.suspend();
    try {
      return await ask(...args);
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
export async function runRepl(session: ReplSession, renderer: Renderer, io: ReplIo): Promise<ReplEnd> {
  renderer.note(
    "Type a request, or /help for commands. End a line with \\ to go on on the next one; a pasted block is sent whole. " +
      "Ctrl-C cancels a turn (twice within a second leaves); Ctrl-C twice at an empty prompt, Ctrl-D or /exit leaves.",
  );
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
    // Twice within a second leaves as interrupted, also when the turn ended in between.
    if (twice) requestExit("interrupted");
    else if (!turn) requestExit("left");
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
  const prompt: PromptState = {
    // Only a terminal's prompt has history; a piped session reads none and writes none.
    history: piped ? [] : (io.history?.load() ?? []),
    pastes: new PasteStore(),
    ctrlCAt: 0,
    // The turn ended before the second press arrived: it is still the second of two.
    secondOfTwo: () => {
      if (Date.now() - lastInterrupt >= DOUBLE_INTERRUPT_MS) return false;
      requestExit("interrupted");
      return true;
    },
    lineEntered: () => {
      lastInterrupt = 0;
    },
  };
  const readKeys = Boolean(io.input.isTTY && io.input.setRawMode);
  /** Work as a turn runs: keys watched, an approver that asks as in a turn, Ctrl-C aborts it, not the session. */
  const asTurn = async <T>(work: (signal: AbortSignal, approver: Approver) => Promise<T>): Promise<T> => {
    const controller = new AbortController();
    turn = controller;
    const keys = readKeys ? watchKeys(io.input, interrupt) : undefined;
    try {
      return await work(
        controller.signal,
        pausingKeys(
          io.approver(() => controller.abort()),
          keys,
        ),
      );
    } finally {
      keys?.stop();
      turn = undefined;
    }
  };
  /** One request as a turn. */
  const runTurn = async (text: string): Promise<RunSummary> => {
    let signal!: AbortSignal;
    const summary = await asTurn((s, approver) => session.runTurn(text, (signal = s), approver));
    if (signal.aborted) renderer.note("Turn cancelled; the conversation so far is kept.");
    else if (summary.reason === "max_steps")
      renderer.note(`Reached the step limit (${session.settings.maxSteps}); say "continue" to go on.`);
    return summary;
  };
  const nextLine = async (): Promise<string | null> => {
    if (!piped) return askLine(io, prompt, leave);
    const parts: string[] = [];
    for (;;) {
      const next = await Promise.race([piped.lines.next(), leave.then(() => null)]);
      if (next === null || next.done) return parts.length > 0 ? parts.join("\n") : null;
      // As at the terminal, a trailing backslash continues the request on the next line.
      if (!next.value.endsWith("\\")) return [...parts, next.value].join("\n");
      parts.push(next.value.slice(0, -1));
    }
  };
  try {
    while (exitCode === undefined) {
      const line = await nextLine();
      if (line === null || exitCode !== undefined) break;
      let text = line.trim();
      if (!text) continue;
      if (text.startsWith("!") && text.length > 1 && io.shellEscape) text = io.shellEscape(text.slice(1).trim());
      if (text.startsWith("/")) {
        const confirm = io.interactive && !piped ? (question: string) => askYesNo(io, question) : undefined;
        const result = await io.runCommand(text, confirm);
        if (result === "exit") break;
        if (result === "continue") continue;
        if ("work" in result) {
          await asTurn(result.work);
          continue;
        }
        if ("prepare" in result) {
          // A request that needs the approver first (a command file's `!`cmd``).
          const prepared = await asTurn(async (signal, approver) => {
            const request = await result.prepare(signal, approver);
            return signal.aborted ? undefined : request;
          });
          if (prepared === undefined) continue;
          text = prepared;
        } else text = result.request;
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
