import os from "node:os";
import { StringDecoder } from "node:string_decoder";
import type { Readable } from "node:stream";
import {
  createAnsiStripper,
  createOutputCapture,
  createTailRing,
  type CapturedOutput,
  type OutputCapture,
  type TailRing,
} from "./output-store.js";
import { startSlot, type CommandSlice } from "../contracts/start-slices.js";
import { redactorFor } from "./redact.js";
import { SESSION_ID, SESSION_VARIABLE } from "./session-processes.js";
import { KILL_CONFIRM_MS, type StopOutcome, rememberGroup, stopGroup, waitUntil } from "./process-group.js";
import type { BackgroundProcess, ProcessRegistry } from "./process-registry.js";
import { startProcess, type HelperLoss, type ProcessExit, type StartedProcess } from "./process-spawner.js";

// The registry and the process groups have their own files; importers keep this one path.
export {
  createProcessRegistry,
  endedHow,
  type BackgroundProcess,
  type ProcessRegistry,
} from "./process-registry.js";
export { groupAlive, KILL_CONFIRM_MS, KILL_GRACE_MS, type StopOutcome } from "./process-group.js";
export { unknownExitStatus, type HelperLoss } from "./process-spawner.js";

/**
 * The process runner behind execute_command: `bash -c` in its own process group with stdin
 * closed, a timeout that stops the whole group, bounded output capture, and dev servers left
 * running in the background in a ProcessRegistry that can stop every group it started.
 */

/** Timeout when the caller gives none. */
export const DEFAULT_TIMEOUT_MS = 120_000;
/** Longest timeout a caller may ask for; longer requests are clamped to this. */
export const MAX_TIMEOUT_MS = 600_000;
/** After the shell exits, how long output may stay quiet before leftovers are stopped. */
export const EXIT_DRAIN_IDLE_MS = 100;
/** After the shell exits, the longest we keep reading before stopping leftovers. */
export const EXIT_DRAIN_MAX_MS = 1_000;
/** After a server announces itself, how long we keep collecting before returning. */
export const BACKGROUND_SETTLE_MS = 500;
/** Output kept in memory for each background process. */
export const BACKGROUND_OUTPUT_CHARS = 100_000;
/** Longest partial line held back while looking for a server announcement. */
const MAX_ANNOUNCEMENT_LINE = 2_000;

/** Hints that keep tools from waiting for a human; MINI_CURSOR tells a command who runs it. */
export const NON_INTERACTIVE_ENV: Readonly<Record<string, string>> = {
  MINI_CURSOR: "1",
  PAGER: "cat",
  GIT_PAGER: "cat",
  GIT_TERMINAL_PROMPT: "0",
  GIT_EDITOR: "true",
  npm_config_yes: "true",
  // The update notice and the `npm fund` lines are noise in what the model reads. The audit
  // summary stays: vulnerabilities in the project's dependencies are something to act on.
  npm_config_update_notifier: "false",
  npm_config_fund: "false",
  DEBIAN_FRONTEND: "noninteractive",
  BROWSER: "none",
  // Python block-buffers a pipe, so a dev server's "Serving HTTP on ..." would never arrive.
  PYTHONUNBUFFERED: "1",
};

// Local URLs with a port (dev servers), and the words servers use to say they are up.
const LOCAL_URL = /\bhttps?:\/\/(?:localhost|127(?:\.\d{1,3}){3}|0\.0\.0\.0|\[::1?\]):\d{2,5}(?:\/[^\s"'<>)\]]*)?/i;
const READY_LINE = /\b(?:ready|listening|started server|server (?:is )?(?:running|started))\b/i;

/** The program and arguments to start; a sandbox swaps this (e.g. to wrap it in bubblewrap). */
export interface SpawnSpec {
  file: string;
  args: string[];
}

export type SpawnSpecBuilder = (script: string, cwd: string) => SpawnSpec;

export const bashSpawnSpec: SpawnSpecBuilder = (script) => ({ file: "bash", args: ["-c", script] });

/**
 * The script bash runs. Sending stderr into stdout inside the shell keeps the two in the order
 * they were written (two pipes read by Node can arrive out of order). On the same line, so
 * bash's error messages keep the model's line numbers; a syntax error on that line still
 * reaches us on the stderr pipe.
 */
export function buildShellScript(command: string): string {
  return `exec 2>&1; ${command}`;
}

/** Commands' environments when a caller gives none, handed over once at start (app/configure.ts). */
const commandSlice = startSlot<CommandSlice>("the environment commands get");
export const useCommandEnvironment = commandSlice.set;
/** The process's environment as it started (`base`) and the same scrubbed of secrets (`scrubbed`). */
export const commandEnvironment = commandSlice.get;

/** The child's environment: the base, plus hints that nothing should wait for a human. */
export function buildEnv(base: NodeJS.ProcessEnv = commandEnvironment().base): NodeJS.ProcessEnv {
  return { ...base, ...NON_INTERACTIVE_ENV, [SESSION_VARIABLE]: SESSION_ID };
}

/** Exit status as a shell reports it: 128 + the signal number for a killed process. */
export function exitStatus(code: number | null, signal: NodeJS.Signals | null): number {
  if (code !== null) return code;
  const number = signal ? os.constants.signals[signal] : undefined;
  return number ? 128 + number : 1;
}

/**
 * Watches output for a dev server saying it is up and remembers the first local URL. Whole
 * chunks are searched (not line by line) so a flood of short lines stays cheap; only complete
 * lines count, so a URL split across two chunks is not read with half its port.
 */
function createAnnouncementWatcher() {
  let partial = "";
  const check = (text: string) => {
    const found = LOCAL_URL.exec(text);
    if (found) watcher.url ??= found[0];
    if (found || READY_LINE.test(text)) watcher.announced = true;
  };
  const watcher = {
    announced: false,
    url: undefined as string | undefined,
    feed(text: string): void {
      if (watcher.announced && watcher.url) return;
      const window = partial + text;
      const lineEnd = Math.max(window.lastIndexOf("\n"), window.lastIndexOf("\r"));
      if (lineEnd !== -1) check(window.slice(0, lineEnd + 1));
      partial = window.slice(lineEnd + 1).slice(-MAX_ANNOUNCEMENT_LINE);
    },
    /** Looks at the unfinished last line too (a server may print its URL without a newline). */
    flush(): void {
      check(partial);
    },
  };
  return watcher;
}

export interface RunCommandOptions {
  command: string;
  /** Absolute directory to run in (already confined by the caller). */
  cwd: string;
  /** Workspace root: truncated output is saved in its state folder's `output/` (memory/state-dir.ts). */
  workspaceRoot: string;
  /** Base environment; defaults to the process's own (settings.ts). The non-interactive hints are added to it. */
  env?: NodeJS.ProcessEnv;
  /** Clamped to MAX_TIMEOUT_MS; DEFAULT_TIMEOUT_MS when omitted. */
  timeoutMs?: number;
  /** Aborting stops the whole group, like a timeout. */
  signal?: AbortSignal;
  /** Live output, ANSI codes stripped. */
  onOutput?: (chunk: { stream: "stdout" | "stderr"; text: string }) => void;
  /** Adopts dev servers and lets stopAll reach this command while it runs. */
  registry?: ProcessRegistry;
  /** Leave announced servers running in the background (default true; needs `registry`). */
  allowBackground?: boolean;
  /** How to start the shell; defaults to plain `bash -c`. */
  spawnSpec?: SpawnSpecBuilder;
  /** Secret values redacted from the output before it is saved, shown or returned. */
  redact?: readonly string[];
}

export interface CommandResult {
  status: "exited" | "timed_out" | "cancelled" | "background" | "failed_to_start";
  /** Exit status of the shell; 128 + signal when killed; null when it never started or `helperLost`. */
  exitCode: number | null;
  /** The signal that ended the shell, if one did. */
  signal: NodeJS.Signals | null;
  output: CapturedOutput;
  durationMs: number;
  /** The timeout that applied, after clamping. */
  timeoutMs: number;
  /** True when the requested timeout was above MAX_TIMEOUT_MS. */
  timeoutClamped: boolean;
  /** For timed_out and cancelled: the signal it took to stop the group. */
  stoppedWith?: StopOutcome;
  /** For background: the registry entry. */
  background?: BackgroundProcess;
  /** For failed_to_start: why. */
  error?: Error;
  /** Its exit status was lost with the helper that started it (process-spawner.ts). */
  helperLost?: HelperLoss;
  /** Stopped, but its end was not seen within KILL_CONFIRM_MS (stuck in the kernel, or its end went unreported). */
  exitUnseen?: true;
}

type Ending =
  | { kind: "exit"; code: number | null; signal: NodeJS.Signals | null }
  | { kind: "timeout" }
  | { kind: "cancel" }
  | { kind: "background" }
  | { kind: "error"; error: Error };

/** Clamps a requested timeout; non-positive or missing values mean the default. */
export function effectiveTimeout(requested: number | undefined): { timeoutMs: number; clamped: boolean } {
  if (requested === undefined || !Number.isFinite(requested) || requested <= 0) {
    return { timeoutMs: DEFAULT_TIMEOUT_MS, clamped: false };
  }
  return requested > MAX_TIMEOUT_MS
    ? { timeoutMs: MAX_TIMEOUT_MS, clamped: true }
    : { timeoutMs: Math.ceil(requested), clamped: false };
}

const emptyOutput = (): CapturedOutput => ({ text: "", totalChars: 0, totalLines: 0, truncated: false });

/** One pipe's bytes turned into text: UTF-8 decoded across chunk edges, escape codes removed. */
function textReader(
  stream: "stdout" | "stderr",
  sink: (stream: "stdout" | "stderr", text: string, unredacted: string) => void,
  secrets: readonly string[] = [],
) {
  const decoder = new StringDecoder("utf8");
  const strip = createAnsiStripper();
  // Before anything sees the text (the saved file, the terminal, the model): a secret printed
  // in two pieces is held back until it can be told apart, then redacted whole. The server
  // announcement watcher reads the text before that hold: a held tail (say a port's last digits
  // and the newline, when a secret starts with them) would hide a complete "listening on" line
  // from it for as long as the server prints nothing more.
  const redactor = redactorFor(secrets).stream();
  return {
    data: (buf: Buffer) => {
      const text = strip(decoder.write(buf));
      sink(stream, redactor.push(text), text);
    },
    end: () => {
      const text = strip(decoder.end(), true);
      sink(stream, redactor.push(text) + redactor.flush(), text);
    },
  };
}

/**
 * Routes the child's output: into the capture (pausing the pipes while the file catches up)
 * and to the live listener while in the foreground; into a ring once in the background.
 */
function createOutputRouter(child: StartedProcess, capture: OutputCapture, options: RunCommandOptions) {
  const pipes: Readable[] = [child.stdout, child.stderr];
  const watcher = createAnnouncementWatcher();
  let ring: TailRing | undefined;
  let lastData = Date.now();
  let paused = false;
  let onAnnounce: (() => void) | undefined;

  const resume = () => {
    paused = false;
    pipes.forEach((p) => p.resume());
  };
  capture.onDrain(resume);

  const sink = (stream: "stdout" | "stderr", text: string, unredacted: string) => {
    const before = watcher.announced;
    if (!ring) watcher.feed(unredacted);
    if (text) lastData = Date.now();
    if (text && ring) ring.push(text);
    else if (text) {
      if (!capture.write(text)) {
        paused = true;
        pipes.forEach((p) => p.pause());
      }
      try {
        options.onOutput?.({ stream, text });
      } catch {
        // A broken listener must not break the command.
      }
    }
    if (!before && watcher.announced) onAnnounce?.();
  };

  const ended = pipes.map((pipe, i) => {
    const reader = textReader(i === 0 ? "stdout" : "stderr", sink, options.redact);
    pipe.on("data", reader.data);
    return new Promise<void>((resolve) => {
      pipe.once("end", () => {
        reader.end();
        resolve();
      });
      pipe.once("close", () => resolve());
    });
  });

  return {
    watcher,
    ended: Promise.all(ended).then(() => undefined),
    set onAnnounce(listener: () => void) {
      onAnnounce = listener;
    },
    /** True once output has been quiet (and not held back by us) for `idleMs`. */
    idleFor: (idleMs: number) => !paused && Date.now() - lastData >= idleMs,
    /** From now on output goes only to a ring (the command lives on in the background). */
    toRing(seed: string): TailRing {
      ring = createTailRing(BACKGROUND_OUTPUT_CHARS);
      ring.push(seed);
      if (paused) resume();
      return ring;
    },
    destroy: () => pipes.forEach((p) => p.destroy()),
  };
}

type OutputRouter = ReturnType<typeof createOutputRouter>;

/** After the shell exits: read what is still in the pipes, briefly, then stop any leftovers. */
async function drainAndStopLeftovers(pid: number, router: OutputRouter): Promise<void> {
  const drained = router.ended.then(() => true);
  // Quiet counts from the exit too: output written just before it may not have been read yet
  // (a busy event loop), and a fast command has no earlier data to measure from.
  const exitedAt = Date.now();
  const quiet = waitUntil(
    () => router.idleFor(EXIT_DRAIN_IDLE_MS) && Date.now() - exitedAt >= EXIT_DRAIN_IDLE_MS,
    EXIT_DRAIN_MAX_MS,
  );
  await Promise.race([drained, quiet]);
  await stopGroup(pid);
  router.destroy();
}

/**
 * Runs `command` with bash in its own process group and resolves when the shell exits, the
 * timeout passes, the signal aborts, or (with a registry) the command announces a server and
 * is left running in the background. Never rejects: failures come back as `failed_to_start`.
 */
export async function runCommand(options: RunCommandOptions): Promise<CommandResult> {
  const startedAt = Date.now();
  const { timeoutMs, clamped } = effectiveTimeout(options.timeoutMs);
  const result: ResultMaker = (fields) => ({
    signal: null,
    ...fields,
    timeoutMs,
    timeoutClamped: clamped,
    durationMs: Date.now() - startedAt,
  });

  if (options.signal?.aborted) {
    return result({ status: "cancelled", exitCode: null, output: emptyOutput(), stoppedWith: "none" });
  }
  // The shell starts in a new process group (process-spawner.ts) once it has a pid or has failed.
  const spec = (options.spawnSpec ?? bashSpawnSpec)(buildShellScript(options.command), options.cwd);
  const child = await startProcess({ file: spec.file, args: spec.args, cwd: options.cwd, env: buildEnv(options.env) });
  if ("error" in child) {
    return result({ status: "failed_to_start", exitCode: null, output: emptyOutput(), error: child.error });
  }
  const { pid, exited } = child;
  rememberGroup(pid);
  const capture = createOutputCapture(options.workspaceRoot);
  const router = createOutputRouter(child, capture, options);

  // stopAll reaches a running command too, and waits until it has been fully cleaned up.
  let finished!: () => void;
  const cleanedUp = new Promise<void>((resolve) => (finished = resolve));
  const ending = waitForEnding(child, timeoutMs, options, router);
  const untrack = options.registry?.track(() => {
    ending.cancel();
    return cleanedUp;
  });
  try {
    const end = await ending.promise;
    if (end.kind === "background") {
      return await leaveInBackground(options, child, router, capture, startedAt, result);
    }
    const stoppedWith = end.kind === "exit" ? undefined : await stopGroup(pid);
    const { code, signal, helperLost, unseen } = await exitedWithin(exited, KILL_CONFIRM_MS);
    await drainAndStopLeftovers(pid, router);
    const output = await capture.finish();
    if (end.kind === "error") {
      return result({ status: "failed_to_start", exitCode: null, signal, output, error: end.error });
    }
    return result({
      status: STATUS_OF[end.kind],
      // A number is made up for neither: the model is told the status is unknown (execute-command.ts).
      exitCode: helperLost || unseen ? null : exitStatus(code, signal),
      signal,
      output,
      stoppedWith,
      ...(helperLost ? { helperLost } : {}),
      ...(unseen ? { exitUnseen: true } : {}),
    });
  } finally {
    untrack?.();
    finished();
  }
}

const STATUS_OF = { exit: "exited", timeout: "timed_out", cancel: "cancelled" } as const;

type ResultMaker = (
  fields: Omit<CommandResult, "durationMs" | "timeoutMs" | "timeoutClamped" | "signal"> & {
    signal?: NodeJS.Signals | null;
  },
) => CommandResult;

/** The exit, or `unseen` if the process is stuck past `ms` (e.g. in uninterruptible IO). */
function exitedWithin(exited: Promise<ProcessExit>, ms: number): Promise<ProcessExit & { unseen?: true }> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<ProcessExit & { unseen: true }>((resolve) => {
    timer = setTimeout(() => resolve({ code: null, signal: null, unseen: true }), ms);
  });
  return Promise.race([exited, late]).finally(() => clearTimeout(timer));
}

/** Whichever comes first decides how the command ends: exit, timeout, abort or announcement. */
function waitForEnding(
  child: StartedProcess,
  timeoutMs: number,
  options: RunCommandOptions,
  router: OutputRouter,
): { promise: Promise<Ending>; cancel: () => void } {
  let settle!: (ending: Ending) => void;
  const promise = new Promise<Ending>((resolve) => (settle = resolve));
  void child.exited.then(({ code, signal }) => settle({ kind: "exit", code, signal }));
  void child.failed.then((error) => settle({ kind: "error", error }));
  const timer = setTimeout(() => settle({ kind: "timeout" }), timeoutMs);
  let settleTimer: NodeJS.Timeout | undefined;
  if ((options.allowBackground ?? true) && options.registry) {
    router.onAnnounce = () => {
      settleTimer = setTimeout(() => settle({ kind: "background" }), BACKGROUND_SETTLE_MS);
    };
  }
  const cancel = () => settle({ kind: "cancel" });
  options.signal?.addEventListener("abort", cancel, { once: true });
  // Aborted while the process was being started (through the helper, that takes a while).
  if (options.signal?.aborted) cancel();
  void promise.then(() => {
    clearTimeout(timer);
    clearTimeout(settleTimer);
    options.signal?.removeEventListener("abort", cancel);
  });
  return { promise, cancel };
}

/** Hands a running server to the registry and returns what it printed so far. */
async function leaveInBackground(
  options: RunCommandOptions,
  { pid, exited, hasExited }: StartedProcess,
  router: OutputRouter,
  capture: OutputCapture,
  startedAt: number,
  result: ResultMaker,
): Promise<CommandResult> {
  router.watcher.flush();
  const ring = router.toRing(capture.tail());
  const output = await capture.finish();
  const ended = exited.then(async ({ code, signal, helperLost }) => {
    await drainAndStopLeftovers(pid, router);
    return helperLost ? { exitCode: null, helperLost } : { exitCode: exitStatus(code, signal) };
  });
  const background = options.registry!.adopt({
    pid,
    command: options.command,
    cwd: options.cwd,
    url: router.watcher.url === undefined ? undefined : redactorFor(options.redact ?? []).redact(router.watcher.url),
    startedAt,
    output: ring,
    exited: ended,
    async stop() {
      if (!hasExited()) await stopGroup(pid);
      await ended;
    },
  });
  return result({ status: "background", exitCode: null, output, background });
}
