import { spawn, type ChildProcess } from "node:child_process";
import { chownSync, mkdtempSync, rmSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { asUser } from "./as-user.js";

export const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const CLI = path.join(PROJECT_ROOT, "src", "cli.ts");
/** tsx's loader by path, so tests may run the CLI from any directory. */
export const TSX_LOADER = pathToFileURL(path.join(PROJECT_ROOT, "node_modules", "tsx", "dist", "loader.mjs")).href;

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  /** Another copy of the CLI's entry (an install of its own); the project's src/cli.ts by default. */
  cli?: string;
  env?: NodeJS.ProcessEnv;
  input?: string;
  cwd?: string;
  timeoutMs?: number;
  /** A program the CLI runs under, with its arguments (`["faketime", "-f", "-2d"]`). */
  under?: string[];
}

/** Longer than any test waits: the CLI announces no wait unless a test sets MINI_CURSOR_WAIT_NOTICE_MS. */
export const QUIET_WAITS_MS = 3_600_000;

/** The environment a CLI test starts from: no provider, no colour, nothing inherited that matters. */
export function baseEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: "1" };
  for (const key of Object.keys(env)) {
    if (key.startsWith("OPENAI_") || key.startsWith("MINI_CURSOR_") || key === "INIT_CWD" || key === "DEBUG")
      delete env[key];
  }
  // A developer's own .env (a real key, say) must not change what the tests run. A busy machine
  // must not either: a scripted answer slower than 2 s would add a "waiting for…" line to the
  // output, so waits are announced only in the tests that ask for it.
  return { ...env, MINI_CURSOR_DOTENV: "off", MINI_CURSOR_WAIT_NOTICE_MS: String(QUIET_WAITS_MS), ...extra };
}

/**
 * Starts the CLI from source in one node process (tsx as a loader, as `npm start` does when
 * dist/ is stale) in its own process group. Not the tsx wrapper: it relays signals and kills a
 * child that is slow to acknowledge them, which under load measures tsx instead of the CLI.
 */
export function startCli(args: string[], options: CliOptions = {}): ChildProcess {
  const [file, ...argv] = [
    ...(options.under ?? []),
    process.execPath,
    "--import",
    TSX_LOADER,
    options.cli ?? CLI,
    ...args,
  ];
  const child = spawn(file!, argv, {
    cwd: options.cwd ?? PROJECT_ROOT,
    env: options.env ?? baseEnv(),
    stdio: ["pipe", "pipe", "pipe"],
    detached: true,
  });
  if (options.input !== undefined) child.stdin!.end(options.input);
  else child.stdin!.end();
  return child;
}

/** Collects a started CLI's output until it exits; kills its group if it outlives the deadline. */
export function collect(child: ChildProcess, timeoutMs = 60_000): Promise<CliResult> {
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        /* already gone */
      }
      reject(new Error(`CLI did not exit within ${timeoutMs} ms\nstdout:\n${stdout}\nstderr:\n${stderr}`));
    }, timeoutMs);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

export function runCli(args: string[], options: CliOptions = {}): Promise<CliResult> {
  return collect(startCli(args, options), options.timeoutMs);
}

/** The ordinary user the attack tests run as besides root (`nobody`). */
export const NOBODY = 65534;
/** Tests that change to another user (setpriv) need root. */
export const RUNNING_AS_ROOT = process.getuid?.() === 0;

/** One line of `--json` output. */
export type JsonEvent = { type: string } & Record<string, unknown>;

export interface UserCliResult extends CliResult {
  /** The `--json` events, one per stdout line (empty when the output is not JSON Lines). */
  events: JsonEvent[];
}

/**
 * The CLI as uid `uid` (`setpriv --reuid --regid --clear-groups`; as this process when
 * undefined), with a state home of its own that this user can write, removed afterwards: jest's
 * per-file state home (state-home.ts) belongs to root. Everything else it reads (the workspace,
 * HOME, config folders) the test makes readable for that user. With `--json`, the events are parsed.
 */
export async function runCliAs(
  uid: number | undefined,
  args: string[],
  options: CliOptions = {},
): Promise<UserCliResult> {
  let stateHome: string | undefined;
  let child: ChildProcess;
  if (uid === undefined) child = startCli(args, options);
  else {
    stateHome = mkdtempSync("/var/tmp/mini-cursor-user-state-");
    chownSync(stateHome, uid, uid);
    const env: NodeJS.ProcessEnv = { ...(options.env ?? baseEnv()), XDG_STATE_HOME: stateHome };
    delete env.MINI_CURSOR_STATE_HOME;
    // The project's CLI as that user, wherever the clone lives (helpers/as-user.ts).
    child = spawn(...asUser(uid, [process.execPath, "--import", TSX_LOADER, options.cli ?? CLI, ...args]), {
      cwd: options.cwd ?? PROJECT_ROOT,
      env,
      stdio: ["pipe", "pipe", "pipe"],
      detached: true,
    });
    if (options.input !== undefined) child.stdin!.end(options.input);
    else child.stdin!.end();
  }
  try {
    const result = await collect(child, options.timeoutMs);
    return { ...result, events: args.includes("--json") ? jsonEvents(result.stdout) : [] };
  } finally {
    if (stateHome) rmSync(stateHome, { recursive: true, force: true });
  }
}

/** JSON Lines output as events. */
export function jsonEvents(stdout: string): JsonEvent[] {
  return stdout
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as JsonEvent);
}
