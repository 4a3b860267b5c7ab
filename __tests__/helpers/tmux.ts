import { execFile, spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import http from "node:http";
import path from "node:path";
import { promisify } from "node:util";
import { baseEnv, collect, PROJECT_ROOT, TSX_LOADER, type CliResult } from "./cli.js";
import { processAlive } from "../../src/process-life.js";
import { waitFor } from "./tmp.js";

/**
 * Helpers for the session, signal and pseudo-terminal tests: a tmux server on a private socket
 * (a real terminal the CLI can be typed into), and small process and HTTP probes.
 */

const run = promisify(execFile);

export const TMUX = "/usr/bin/tmux";

/** Fails with a clear message when tmux is missing; installs nothing. */
export function requireTmux(): void {
  if (!existsSync(TMUX)) {
    throw new Error(
      `tmux is not installed (looked for ${TMUX}). The pseudo-terminal tests drive the CLI through tmux; ` +
        "install it with `apt-get install -y tmux` (Debian) and run them again.",
    );
  }
}

/** Quotes a string for sh. */
export function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

export interface OpenSession {
  child: ChildProcess;
  /** Settles when the CLI has exited (SIGKILLs its group after 60 s). */
  result: Promise<CliResult>;
  stdout(): string;
  /** Writes one line to its stdin. */
  send(line: string): void;
  /** Waits until stdout matches; returns the match. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpExecArray>;
}

/**
 * Starts the CLI with stdin left open (a session reads one line per request with --each-line), in its own process group, in one
 * Node process as `npm start` runs it (tsx's loader hook, not the tsx wrapper process, which
 * relays a group's SIGINT or SIGTERM a second time and SIGKILLs a child slow to acknowledge).
 */
export function openSession(args: string[], env: NodeJS.ProcessEnv = baseEnv()): OpenSession {
  const child = spawn(process.execPath, ["--import", TSX_LOADER, path.join(PROJECT_ROOT, "src", "cli.ts"), ...args], {
    cwd: PROJECT_ROOT,
    env,
    stdio: ["pipe", "pipe", "pipe"],
    detached: true,
  });
  let stdout = "";
  child.stdout!.on("data", (d: Buffer) => (stdout += d.toString()));
  return {
    child,
    result: collect(child, 60_000),
    stdout: () => stdout,
    send: (line) => child.stdin!.write(`${line}\n`),
    waitFor: (pattern, timeoutMs = 30_000) =>
      waitForValue(() => pattern.exec(stdout) ?? undefined, timeoutMs).catch(() => {
        throw new Error(`stdout never matched ${pattern}:\n${stdout}`);
      }),
  };
}

/** A string no other process has on its command line, to find a test's processes by. */
export function uniqueMarker(): string {
  // A number, so it can be sleep's argument: `sleep 30.123456789` sleeps 30 s and is easy to find.
  return `30.${String(randomBytes(4).readUInt32BE()).padStart(10, "0")}`;
}

/**
 * A command to interrupt: a shell that waits on a child; both carry `marker` on their command
 * lines (found through /proc, so it works whatever PID namespace a sandbox gives them).
 */
export function longCommand(marker: string): string {
  return `sleep ${marker} & wait; echo never`;
}

/** A dev server the offline model can start with `run \`...\``: it prints its local URL and answers "ok". */
export function serverCommand(marker: string): string {
  return `node -e "require('http').createServer((q,s)=>s.end('ok')).listen(0,'127.0.0.1',function(){console.log('Local: http://127.0.0.1:'+this.address().port+'/')})" ${marker}`;
}

export interface FoundProcess {
  pid: number;
  argv: string[];
}

/**
 * Live processes (zombies excluded) with `marker` on their command line. The tmux server is
 * left out: it keeps the command line of the client that started it. A process in the middle
 * of exiting has no command line any more, so it may be missed while it closes its files.
 */
export function processesWith(marker: string): FoundProcess[] {
  const found: FoundProcess[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let argv: string[];
    try {
      argv = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0").filter(Boolean);
    } catch {
      continue;
    }
    if (argv.length === 0 || !argv.join(" ").includes(marker) || path.basename(argv[0]!) === "tmux") continue;
    const pid = Number(entry);
    if (pid !== process.pid && pidAlive(pid)) found.push({ pid, argv });
  }
  return found;
}

/** Waits until the `sleep <marker>` of longCommand runs. */
export async function waitForSleep(marker: string, timeoutMs = 90_000): Promise<FoundProcess> {
  return waitForValue(() => processesWith(marker).find((p) => path.basename(p.argv[0]!) === "sleep"), timeoutMs);
}

/** Waits until no process with `marker` on its command line is left; throws naming the survivors. */
export async function waitNoneLeft(marker: string, timeoutMs = 10_000): Promise<void> {
  try {
    await waitFor(() => processesWith(marker).length === 0, timeoutMs);
  } catch {
    const left = processesWith(marker).map((p) => `${p.pid} ${p.argv.join(" ")}`);
    throw new Error(`processes left after ${timeoutMs} ms:\n${left.join("\n")}`);
  }
}

/** Waits until nothing listens at `url` any more (a closing server may still reset a connection). */
export async function waitRefused(url: string, timeoutMs = 5_000): Promise<void> {
  let last: unknown;
  try {
    await waitFor(async () => {
      last = await httpGet(url, 1_000);
      return "error" in (last as object) && (last as { error: string }).error === "ECONNREFUSED";
    }, timeoutMs);
  } catch {
    throw new Error(`${url} still answers after ${timeoutMs} ms: ${JSON.stringify(last)}`);
  }
}

/** SIGKILL to every process with `marker` on its command line (test clean-up). */
export function killMarked(marker: string): void {
  for (const p of processesWith(marker)) {
    try {
      process.kill(p.pid, "SIGKILL");
    } catch {
      // gone
    }
  }
}

/** Like waitFor, for checks that return the value they wait for (undefined until then). */
export async function waitForValue<T>(
  check: () => T | undefined | Promise<T | undefined>,
  timeoutMs = 10_000,
): Promise<T> {
  return (await waitFor(check, timeoutMs)) as T;
}

/** A live process; zombies count as dead (PID 1 in some containers never reaps orphans). */
export const pidAlive = processAlive;

/** Waits until none of `pids` is alive; throws naming the survivors. */
export async function waitAllDead(pids: number[], timeoutMs = 10_000): Promise<void> {
  try {
    await waitFor(() => pids.every((p) => !pidAlive(p)), timeoutMs);
  } catch {
    throw new Error(`still alive after ${timeoutMs} ms: ${pids.filter(pidAlive).join(", ")}`);
  }
}

/** SIGKILL to a process group, ignoring one that is already gone. */
export function killGroup(pgid: number | undefined): void {
  if (!pgid) return;
  try {
    process.kill(-pgid, "SIGKILL");
  } catch {
    // already gone
  }
}

/** GET a URL: status and body, or the connection error. */
export function httpGet(url: string, timeoutMs = 5_000): Promise<{ status: number; body: string } | { error: string }> {
  return new Promise((resolve) => {
    const req = http.get(url, { timeout: timeoutMs, agent: false }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (d: string) => (body += d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("timeout", () => req.destroy(new Error("timeout")));
    req.on("error", (err: NodeJS.ErrnoException) => resolve({ error: err.code ?? err.message }));
  });
}

/** A pane's size in character cells. */
export interface PaneSize {
  columns: number;
  rows: number;
}
const DEFAULT_PANE: PaneSize = { columns: 200, rows: 50 };
/** The width people's terminals open at. */
export const NARROW_PANE: PaneSize = { columns: 80, rows: 24 };

export interface TmuxTerminal {
  readonly socket: string;
  /** Starts `command` (run by sh) in a pane of `size` (200x50 by default); the pane stays after it exits. */
  start(command: string, size?: PaneSize): Promise<void>;
  /**
   * The whole pane: scrollback and screen, trailing blanks dropped, lines the terminal wrapped
   * joined (`joined: false` keeps them as the rows they take on the screen).
   */
  screen(options?: { joined?: boolean }): Promise<string>;
  /** Types text literally (no key names). */
  type(text: string): Promise<void>;
  /** Presses keys by tmux name: "Enter", "C-c", "C-d". */
  press(...keys: string[]): Promise<void>;
  /** Pastes text as a terminal does (bracketed when the program asked for it), line breaks kept. */
  paste(text: string): Promise<void>;
  /** Polls the screen until `check` holds; on timeout throws with what the screen showed. */
  waitForScreen(check: RegExp | ((screen: string) => boolean), what: string, timeoutMs?: number): Promise<string>;
  /** Kills the tmux server (and with it the pane: its processes get SIGHUP). */
  kill(): Promise<void>;
}

/** A tmux server on a private socket, started with the test's clean environment. */
export function createTmux(env: NodeJS.ProcessEnv = baseEnv()): TmuxTerminal {
  const socket = `mc-test-${process.pid}-${randomBytes(4).toString("hex")}`;
  const tmux = async (...args: string[]) => (await run(TMUX, ["-L", socket, ...args], { env })).stdout;
  const session = "mc";

  const screen = async ({ joined = true }: { joined?: boolean } = {}) => {
    const text = await tmux("capture-pane", "-p", ...(joined ? ["-J"] : []), "-S", "-", "-t", session);
    return text
      .split("\n")
      .map((l) => l.trimEnd())
      .join("\n")
      .trimEnd();
  };

  return {
    socket,
    async start(command, size = DEFAULT_PANE) {
      await tmux(
        "-f",
        "/dev/null",
        "new-session",
        "-d",
        "-s",
        session,
        "-x",
        String(size.columns),
        "-y",
        String(size.rows),
        command,
        ";",
        "set-option",
        "-t",
        session,
        "remain-on-exit",
        "on",
      );
    },
    screen,
    async type(text) {
      await tmux("send-keys", "-t", session, "-l", text);
    },
    async press(...keys) {
      await tmux("send-keys", "-t", session, ...keys);
    },
    async paste(text) {
      // -p: bracketed if the program turned bracketed paste mode on; -r: line breaks sent as they are.
      await tmux("set-buffer", "-b", "mc-paste", text);
      await tmux("paste-buffer", "-p", "-r", "-d", "-b", "mc-paste", "-t", session);
    },
    async waitForScreen(check, what, timeoutMs = 30_000) {
      const test = typeof check === "function" ? check : (s: string) => check.test(s);
      let last = "";
      try {
        return (await waitFor(
          async () => {
            last = await screen().catch(() => last);
            return test(last) ? last : undefined;
          },
          timeoutMs,
          100,
        )) as string;
      } catch {
        throw new Error(`tmux: ${what} did not show within ${timeoutMs} ms. The screen:\n${last}`);
      }
    },
    async kill() {
      await tmux("kill-server").catch(() => undefined);
      // tmux leaves its socket file behind.
      rmSync(path.join(env.TMUX_TMPDIR || "/tmp", `tmux-${process.getuid!()}`, socket), { force: true });
    },
  };
}

/** Whether the last non-empty line of the screen is the session's prompt. */
export function atPrompt(screen: string): boolean {
  const lines = screen.split("\n").filter((l) => l.trim() !== "");
  return lines.at(-1)?.trim() === "›";
}

/** How many times `needle` occurs in `text`. */
export function count(text: string, needle: string): number {
  return text.split(needle).length - 1;
}

/** Where a pane started by startCliInPane writes the CLI's exit status. */
export const paneExitFile = (workspace: string): string => path.join(workspace, "exit-code");

/**
 * Starts the CLI in the pane as a person would, in the project folder with `--workspace
 * <workspace>` and `args`; when it ends the pane writes `EXITED:<status>` to paneExitFile.
 * `oneProcess` runs tsx as a loader inside one Node process (instead of tsx's wrapper and a child),
 * so a signal sent to the CLI's pid reaches the process that shows the questions.
 */
export async function startCliInPane(
  term: TmuxTerminal,
  workspace: string,
  args: string[],
  { oneProcess = false, size }: { oneProcess?: boolean; size?: PaneSize } = {},
): Promise<void> {
  const launcher = oneProcess ? [process.execPath, "--import", TSX_LOADER] : ["node_modules/.bin/tsx"];
  const cli = [...launcher, "src/cli.ts", "--workspace", workspace, ...args].map(shellQuote).join(" ");
  await term.start(
    `cd ${shellQuote(PROJECT_ROOT)} && ${cli}; echo EXITED:$? > ${shellQuote(paneExitFile(workspace))}`,
    size,
  );
}

/** The `EXITED:<status>` line of a pane started by startCliInPane, once the CLI has ended. */
export function paneExitCode(workspace: string, timeoutMs = 60_000): Promise<string> {
  const file = paneExitFile(workspace);
  return waitForValue(() => (existsSync(file) ? readFileSync(file, "utf8").trim() : undefined), timeoutMs);
}
