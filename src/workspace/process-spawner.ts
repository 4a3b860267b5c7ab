import { spawn, type ChildProcess } from "node:child_process";
import type { Readable } from "node:stream";
import { processIdentity } from "../process-life.js";

/**
 * Starting a command's process. Node's spawn forks the whole calling process and blocks until
 * the child has exec'd: in a session's process (hundreds of MB of heap) that held the event loop
 * 10–50 ms per command, so the 20 commands of one turn started over 0.4 s (issue 30). A small
 * helper process (a bare Node running the few lines below) forks instead: it is sent each spawn
 * request and hands back the child's stdout and stderr pipes themselves (handles passed over
 * its IPC channel), so output, backpressure and group kills work exactly as with a direct child;
 * only the exit status comes as a message. The helpers (SPAWN_HELPERS) start with the first
 * command, which starts directly meanwhile; if one fails or stops, the process's later commands
 * start directly again. A process a lost helper started runs on (it has a session of its own, and
 * its pipes are ours): it counts as ended once its pid is gone, with its exit status unknown.
 */

/** A helper that stopped, and how: the exit statuses of the processes it started went with it. */
export interface HelperLoss {
  helperPid: number;
  /** "killed by SIGKILL", "exited with code 1", ...; filled in when the helper's exit is seen. */
  how: string;
}

/** How a started process ended: Node's exit code and signal. */
export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The helper that started it stopped before it said how the process ended: code and signal say nothing. */
  helperLost?: HelperLoss;
}

/**
 * The one wording of a status lost with its helper, for every place that reports one (execute_command,
 * process_output, stop_process, /ps): "exit status unknown (its spawn helper 4242 died: killed by SIGKILL)".
 */
export function unknownExitStatus(loss: HelperLoss): string {
  return `exit status unknown (its spawn helper ${loss.helperPid} died: ${loss.how})`;
}

/** How often the pid of a process whose helper stopped is looked at, to tell when it has ended. */
export const LOST_EXIT_POLL_MS = 100;

/** How long a command whose helper's channel closed waits for the helper's exit, which says how it stopped. */
const HELPER_EXIT_WAIT_MS = 2_000;

/** What to start: detached (its own process group), stdin closed, stdout and stderr piped. */
export interface ProcessRequest {
  file: string;
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
}

/** A started process: what the command runner needs of a ChildProcess. */
export interface StartedProcess {
  pid: number;
  stdout: Readable;
  stderr: Readable;
  /** Resolves when the process exits. */
  exited: Promise<ProcessExit>;
  /** Whether its exit has been seen. */
  hasExited(): boolean;
  /** Resolves if the process reports an error after it started (a direct child only). */
  failed: Promise<Error>;
}

export type ProcessStart = StartedProcess | { error: Error };

/**
 * Helpers started together. Each start waits for its child's exec, so on a busy machine most of
 * it is waiting for a CPU: two helpers overlap those waits, and the starts of a turn's 20
 * commands take about half as long as through one.
 */
export const SPAWN_HELPERS = 2;

/**
 * How long after the first command the helpers start. Their starts fork this process too (tens
 * of ms each for a session's heap): later than a quick first command's step, so they land in the
 * model's next turn (or while a longer command runs), not in that step.
 */
export const HELPER_START_DELAY_MS = 100;

/** How long the helper may take to say it is ready before commands stop waiting for it and start directly. */
export const HELPER_READY_MS = 10_000;

/**
 * The helper's program (CommonJS, run with `node -e`, so it needs no file of its own in any
 * build). It stops reading each pipe before handing it over: what it had read would be lost.
 * It exits when the session's end of the channel closes (the session exited or was killed).
 */
const HELPER_SOURCE = `
const { spawn } = require("node:child_process");
const reply = (m, handle) => { try { process.send(m, handle); } catch {} };
const errorOf = (e) => ({ message: String(e && e.message), code: e && e.code });
process.on("disconnect", () => process.exit(0));
process.on("message", (m) => {
  let c;
  try {
    c = spawn(m.file, m.args, { cwd: m.cwd, env: m.env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  } catch (e) {
    return reply({ id: m.id, error: errorOf(e) });
  }
  if (c.pid === undefined) return c.once("error", (e) => reply({ id: m.id, error: errorOf(e) }));
  c.on("error", () => {});
  c.stdout._handle.readStop();
  c.stderr._handle.readStop();
  reply({ id: m.id, pid: c.pid, pipe: "stdout" }, c.stdout);
  reply({ id: m.id, pipe: "stderr" }, c.stderr);
  c.once("exit", (code, signal) => reply({ id: m.id, exit: [code, signal] }));
});
reply({ ready: true });
`;

/** Starts `request` as a direct child of this process. */
async function spawnDirect(request: ProcessRequest): Promise<ProcessStart> {
  let child: ChildProcess;
  try {
    child = spawn(request.file, request.args, {
      cwd: request.cwd,
      env: request.env,
      detached: true, // its own process group, so one kill(-pid) reaches every descendant
      stdio: ["ignore", "pipe", "pipe"],
    });
  } catch (error) {
    return { error: error as Error };
  }
  const exited = new Promise<ProcessExit>((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  const failed = new Promise<Error>((resolve) => child.once("error", resolve));
  const pid = child.pid;
  if (pid === undefined) {
    const error = await failed;
    child.stdout?.destroy();
    child.stderr?.destroy();
    return { error };
  }
  return {
    pid,
    stdout: child.stdout!,
    stderr: child.stderr!,
    exited,
    hasExited: () => child.exitCode !== null || child.signalCode !== null,
    failed,
  };
}

// ---------------------------------------------------------------------------------------------
// The helper

interface Waiting {
  start: (result: ProcessStart) => void;
  exit: (exit: ProcessExit) => void;
  pid?: number;
  stdout?: Readable;
  started: boolean;
  ended: boolean;
}

interface HelperMessage {
  ready?: boolean;
  id?: number;
  error?: { message: string; code?: string };
  pid?: number;
  pipe?: "stdout" | "stderr";
  exit?: [number | null, NodeJS.Signals | null];
}

interface Helper {
  child: ChildProcess;
  /** Set once it stopped. */
  loss?: HelperLoss;
  ready: Promise<boolean>;
  isReady: boolean;
  /** Requests it has not answered yet, and commands it started that have not exited. */
  waiting: Map<number, Waiting>;
}

/** Requests `h` has not answered yet: the next request goes to the helper with the fewest. */
const starting = (h: Helper) => [...h.waiting.values()].filter((w) => !w.started).length;

let helpers: Helper[] = [];
/** Set once a helper failed: this process's commands start directly from then on. */
let helperBroken = false;
/** Set between the first command and the helpers' start. */
let helperStarting = false;
let nextId = 0;

/** The channel keeps this process alive only while a command started through it has not exited. */
function holdWhileWaiting(h: Helper): void {
  const channel = h.child.channel as { ref(): void; unref(): void } | null | undefined;
  if (h.waiting.size > 0) channel?.ref();
  else channel?.unref();
}

function onHelperMessage(h: Helper, m: HelperMessage, handle: unknown, markReady: () => void): void {
  if (m.ready) return markReady();
  const w = m.id === undefined ? undefined : h.waiting.get(m.id);
  if (!w) {
    (handle as Readable | undefined)?.destroy?.();
    return;
  }
  const answered = () => {
    h.waiting.delete(m.id!);
    holdWhileWaiting(h);
  };
  if (m.error) {
    answered();
    w.start({ error: Object.assign(new Error(m.error.message), m.error.code ? { code: m.error.code } : {}) });
  } else if (m.pipe === "stdout") {
    w.pid = m.pid;
    w.stdout = handle as Readable;
  } else if (m.pipe === "stderr") {
    w.started = true;
    const exited = new Promise<ProcessExit>((resolve) => {
      w.exit = (exit) => {
        w.ended = true;
        resolve(exit);
      };
    });
    w.start({
      pid: w.pid!,
      stdout: w.stdout!,
      stderr: handle as Readable,
      exited,
      hasExited: () => w.ended,
      failed: new Promise<Error>(() => {}),
    });
  } else if (m.exit) {
    answered();
    w.exit({ code: m.exit[0], signal: m.exit[1] });
  }
}

/** "killed by SIGKILL", "exited with code 3": what its exit event says, or what stopped it before that. */
function howStopped(child: ChildProcess, before: string): string {
  if (child.signalCode) return `killed by ${child.signalCode}`;
  if (child.exitCode !== null) return `exited with code ${child.exitCode}`;
  return before;
}

/**
 * A process the lost helper started: it is no child of ours to wait for, so it has ended when
 * its pid is gone (or is a zombie, or is another process's). Looked at every LOST_EXIT_POLL_MS,
 * and at once when its output ends. Not its output's end alone: a process may close its stdout
 * and run on, or leave a descendant outside its group holding the pipe after it exits.
 */
function watchLostProcess(w: Waiting, loss: HelperLoss, helper: ChildProcess): void {
  const pid = w.pid!;
  const identity = processIdentity(pid);
  let timer: NodeJS.Timeout | undefined;
  const check = () => {
    if (identity !== undefined && processIdentity(pid) === identity) return;
    clearInterval(timer);
    w.stdout?.off("close", check);
    let ended = false;
    const end = () => {
      if (!ended) w.exit({ code: null, signal: null, helperLost: loss });
      ended = true;
    };
    if (helper.exitCode !== null || helper.signalCode !== null) return end();
    // Its channel closed first (a busy machine sees the exit later): its exit says how it stopped
    // (onHelperLost's listener, added before this one, has set `loss.how` by then).
    const late = setTimeout(end, HELPER_EXIT_WAIT_MS);
    helper.once("exit", () => (clearTimeout(late), end()));
  };
  if (identity === undefined) return check();
  timer = setInterval(check, LOST_EXIT_POLL_MS);
  w.stdout?.once("close", check);
}

/**
 * The helper stopped: commands it had not yet reported started fail to start (whether they ran
 * is unknown), and those running end with an unknown exit status when their processes do.
 */
function onHelperLost(h: Helper, before: string): void {
  helpers = helpers.filter((other) => other !== h);
  helperBroken = true;
  const loss: HelperLoss = { helperPid: h.child.pid ?? 0, how: howStopped(h.child, before) };
  h.loss = loss;
  // Its exit event may come after the channel's close: the loss then says how it ended.
  if (h.child.exitCode === null && h.child.signalCode === null) {
    h.child.once("exit", () => (loss.how = howStopped(h.child, before)));
  }
  for (const w of h.waiting.values()) {
    if (!w.started) {
      w.start({
        error: new Error(
          "the helper process that starts commands stopped before it said whether this command started; run it again",
        ),
      });
    } else watchLostProcess(w, loss, h.child);
  }
  h.waiting.clear();
}

function startHelper(): Helper | undefined {
  let child: ChildProcess;
  try {
    // Its own process group, so a Ctrl-C at the terminal (which the session handles) does not
    // stop it; an environment of its own, as its children get theirs with each request.
    child = spawn(process.execPath, ["-e", HELPER_SOURCE], {
      detached: true,
      env: {},
      stdio: ["ignore", "ignore", "ignore", "ipc"],
    });
  } catch {
    helperBroken = true;
    return undefined;
  }
  let markReady!: () => void;
  let timer: NodeJS.Timeout | undefined;
  const h: Helper = {
    child,
    isReady: false,
    waiting: new Map(),
    ready: new Promise<boolean>((resolve) => {
      markReady = () => {
        clearTimeout(timer);
        h.isReady = true;
        resolve(true);
      };
      const lost = (before: string) => {
        clearTimeout(timer);
        if (h.loss) return;
        onHelperLost(h, before);
        resolve(false);
      };
      child.on("error", (error) => lost(`it failed: ${error.message}`));
      child.once("exit", () => lost("it exited"));
      child.once("disconnect", () => lost("its channel to the session closed"));
      timer = setTimeout(() => {
        // Too slow to be of use: commands keep starting directly, and it is stopped.
        child.kill("SIGKILL");
        lost(`it was not ready within ${HELPER_READY_MS / 1000} s, so it was stopped`);
      }, HELPER_READY_MS);
      timer.unref();
    }),
  };
  child.on("message", (m: HelperMessage, handle: unknown) => onHelperMessage(h, m, handle, markReady));
  child.unref();
  holdWhileWaiting(h);
  return h;
}

function startHelpers(): void {
  while (!helperBroken && helpers.length < SPAWN_HELPERS) {
    const h = startHelper();
    if (h) helpers.push(h);
  }
}

/**
 * The ready helper with the fewest requests in flight; undefined while none is ready, or after
 * one failed. The first call starts them HELPER_START_DELAY_MS later.
 */
function readyHelper(): Helper | undefined {
  if (helperBroken) return undefined;
  if (helpers.length === 0 && !helperStarting) {
    helperStarting = true;
    setTimeout(() => {
      helperStarting = false;
      startHelpers();
    }, HELPER_START_DELAY_MS).unref();
  }
  let best: Helper | undefined;
  for (const h of helpers) if (h.isReady && (!best || starting(h) < starting(best))) best = h;
  return best;
}

function spawnThroughHelper(h: Helper, request: ProcessRequest): Promise<ProcessStart> {
  const id = ++nextId;
  return new Promise<ProcessStart>((start) => {
    h.waiting.set(id, { start, exit: () => {}, started: false, ended: false });
    holdWhileWaiting(h);
    try {
      h.child.send({ id, ...request });
    } catch {
      // The channel closed under us: onHelperLost settles this request.
    }
  });
}

/**
 * Starts `request` detached with stdin closed and stdout and stderr piped: through the helper
 * once it is ready, directly until then (and for good once it has failed).
 */
export function startProcess(request: ProcessRequest): Promise<ProcessStart> {
  const h = readyHelper();
  return h ? spawnThroughHelper(h, request) : spawnDirect(request);
}

/** Starts the helpers if they are not running and says whether all are ready (tests; a session may warm them up). */
export async function spawnHelperReady(): Promise<boolean> {
  startHelpers();
  if (helperBroken || helpers.length === 0) return false;
  const started = [...helpers];
  // The caller waits on them: their channels keep this process alive until they answer.
  for (const h of started) (h.child.channel as { ref(): void } | null | undefined)?.ref();
  const ready = await Promise.all(started.map((h) => h.ready));
  for (const h of started) holdWhileWaiting(h);
  return ready.every(Boolean) && !helperBroken;
}

/** The pids of the helpers running (tests). */
export function spawnHelperPids(): number[] {
  return helpers.flatMap((h) => (h.child.pid === undefined ? [] : [h.child.pid]));
}
