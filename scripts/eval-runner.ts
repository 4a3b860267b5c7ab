import { configureParts } from "../src/app/configure.js";
/**
 * The process half of `npm run eval`: lays out a task's starting workspace, runs its check, and
 * runs the real CLI on it as a subprocess (`--json`, the task's approval mode) to make a
 * RunRecord. Each run gets its own folder: `<root>/<task>-<engine>-<label>-<repeat>/workspace`,
 * with the trace beside it; the CLI decides the sandbox as it always does.
 */
import { spawn } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { EngineName } from "../src/settings.js";
import { summarizeTrace, type RunRecord, type Task } from "./eval-lib.js";

// As the CLI does at start: each part of mini-cursor this script uses gets its slice of the settings.
configureParts();

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
export const TASKS_DIR = path.join(ROOT, "evals", "tasks");
const START = path.join(ROOT, "scripts", "start.mjs");

/** Default limit for one agent run (a real model on a small task takes well under this). */
export const DEFAULT_RUN_TIMEOUT_MS = 10 * 60_000;
/** Limit for setup.sh and for one check. */
export const CHECK_TIMEOUT_MS = 3 * 60_000;
/** Output kept from a check or a failed setup. */
const OUTPUT_TAIL_CHARS = 2_000;
/** Between SIGTERM and SIGKILL of a run that outlived its limit. */
const KILL_GRACE_MS = 3_000;
const REGISTRY_PING_TIMEOUT_MS = 20_000;
const DEFAULT_APPROVAL = "full-auto";

/** Where the model comes from: a task's recording, the embedded offline model, or a provider. */
export type ModelSource = { kind: "replay" } | { kind: "offline" } | { kind: "provider"; model?: string };

export function sourceLabel(source: ModelSource): string {
  return source.kind === "provider" ? (source.model ?? "default") : source.kind;
}

interface ProcessResult {
  code: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

/** Runs a process in its own group; on timeout the whole group is stopped. */
function run(
  command: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number },
): Promise<ProcessResult> {
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env,
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    let stdout = "";
    let stderr = "";
    let timedOut = false;
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const kill = (signal: NodeJS.Signals) => {
      try {
        process.kill(-child.pid!, signal);
      } catch {
        /* already gone */
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      kill("SIGTERM");
      setTimeout(() => kill("SIGKILL"), KILL_GRACE_MS).unref();
    }, options.timeoutMs);
    child.on("error", (err) => {
      clearTimeout(timer);
      resolve({ code: null, stdout, stderr: `${stderr}${err.message}\n`, timedOut });
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      // A check or a run may leave a server behind in its group; nothing of a finished run may outlive it.
      kill("SIGKILL");
      resolve({ code, stdout, stderr, timedOut });
    });
  });
}

const tail = (text: string) => (text.length > OUTPUT_TAIL_CHARS ? `…${text.slice(-OUTPUT_TAIL_CHARS)}` : text).trim();

/** The run's JSON Lines trace, beside its workspace (absent until the run has ended, and for a starting workspace). */
export function traceFileOf(workspace: string): string {
  return path.join(path.dirname(workspace), "trace.jsonl");
}

/** The environment of checks and setup scripts: this one, plus where things are. */
function scriptEnv(task: Task, workspace: string, finalFile: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    EVAL_TASK_DIR: task.dir,
    EVAL_WORKSPACE: workspace,
    EVAL_FINAL_FILE: finalFile,
    EVAL_TRACE_FILE: traceFileOf(workspace),
    NO_COLOR: "1",
  };
}

/**
 * Lays out the task's starting workspace in `<runDir>/workspace`: a copy of `workspace/`, then
 * `setup.sh` run there. Returns the workspace's real path. Throws when setup fails.
 */
export async function prepareWorkspace(task: Task, runDir: string): Promise<string> {
  const workspace = path.join(runDir, "workspace");
  mkdirSync(workspace, { recursive: true });
  const files = path.join(task.dir, "workspace");
  if (existsSync(files)) cpSync(files, workspace, { recursive: true });
  const real = realpathSync(workspace);
  const setup = path.join(task.dir, "setup.sh");
  if (existsSync(setup)) {
    const result = await run("bash", [setup], {
      cwd: real,
      env: scriptEnv(task, real, ""),
      timeoutMs: CHECK_TIMEOUT_MS,
    });
    if (result.code !== 0)
      throw new Error(`setup.sh of ${task.name} failed (exit ${result.code}): ${tail(result.stdout + result.stderr)}`);
  }
  return real;
}

export interface CheckResult {
  passed: boolean;
  output: string;
}

/** Runs the task's check in `workspace`; `finalText` is the agent's answer (EVAL_FINAL_FILE). */
export async function runCheck(task: Task, workspace: string, finalText: string): Promise<CheckResult> {
  const finalFile = path.join(path.dirname(workspace), "final.txt");
  writeFileSync(finalFile, finalText);
  const [command, args] = task.check.endsWith(".mjs") ? [process.execPath, [task.check]] : ["bash", [task.check]];
  const result = await run(command, args, {
    cwd: workspace,
    env: scriptEnv(task, workspace, finalFile),
    timeoutMs: CHECK_TIMEOUT_MS,
  });
  const output = tail(`${result.stdout}${result.stderr}${result.timedOut ? "\n(the check timed out)" : ""}`);
  return { passed: result.code === 0 && !result.timedOut, output };
}

export function makeRoot(): string {
  return realpathSync(mkdtempSync(path.join(os.tmpdir(), "mini-cursor-eval-")));
}

/** A check run on the untouched starting workspace, which must fail. */
export interface StartingCheck {
  task: string;
  /** True when the check passed there: the task is broken (it proves nothing). */
  broken: boolean;
  output: string;
}

/** Runs the task's check on a fresh starting workspace under `root` (removed afterwards). */
export async function checkStartingWorkspace(task: Task, root: string): Promise<StartingCheck> {
  const runDir = mkdtempSync(path.join(root, `${task.name}-start-`));
  try {
    const workspace = await prepareWorkspace(task, runDir);
    const result = await runCheck(task, workspace, "");
    return { task: task.name, broken: result.passed, output: result.output };
  } finally {
    rmSync(runDir, { recursive: true, force: true });
  }
}

/** The CLI's environment: a provider run keeps the user's; replay and offline runs drop every provider setting. */
export function cliEnv(source: ModelSource, base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...base, NO_COLOR: "1" };
  delete env.INIT_CWD;
  if (source.kind !== "provider") {
    for (const key of Object.keys(env))
      if (key.startsWith("OPENAI_") || key.startsWith("MINI_CURSOR_")) delete env[key];
    env.MINI_CURSOR_DOTENV = "off";
  }
  return env;
}

/** The CLI's environment for one task: its own user config (hooks, MCP servers) and slash commands folder when task.json names them. */
export function taskEnv(task: Task, env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return {
    ...env,
    ...(task.userConfig ? { MINI_CURSOR_USER_CONFIG: path.join(task.dir, task.userConfig) } : {}),
    ...(task.commands ? { MINI_CURSOR_COMMANDS_DIR: path.join(task.dir, task.commands) } : {}),
  };
}

/** The CLI's arguments for one run. */
export function cliArgs(task: Task, engine: EngineName, source: ModelSource, workspace: string): string[] {
  const args = [
    "--workspace",
    workspace,
    "--json",
    "--no-color",
    "--engine",
    engine,
    "--approval",
    task.approval ?? DEFAULT_APPROVAL,
  ];
  if (task.maxSteps) args.push("--max-steps", String(task.maxSteps));
  if (source.kind === "replay") args.push("--replay", task.replay ?? path.join(task.dir, "replay.jsonl"));
  if (source.kind === "provider" && source.model) args.push("--model", source.model);
  args.push(task.request);
  return args;
}

export interface RunOptions {
  task: Task;
  engine: EngineName;
  source: ModelSource;
  repeat: number;
  /** Folder that holds every run's folder. */
  root: string;
  /** Keep the folders of passed runs too. */
  keep?: boolean;
}

/** One run: fresh workspace, the CLI on the task, the check. Failed runs keep their folder. */
export async function runTask(options: RunOptions): Promise<RunRecord> {
  const { task, engine, source, repeat, root } = options;
  const runDir = path.join(root, `${task.name}-${engine}-${sourceLabel(source).replace(/[^\w.-]+/g, "_")}-${repeat}`);
  mkdirSync(runDir, { recursive: true });
  const trace = traceFileOf(path.join(runDir, "workspace"));
  const base: RunRecord = {
    task: task.name,
    engine,
    model: sourceLabel(source),
    repeat,
    passed: false,
    exitCode: null,
    reason: "not run",
    steps: 0,
    toolCalls: 0,
    approvals: 0,
    tokensIn: 0,
    tokensOut: 0,
    tokensEstimated: false,
    wallMs: 0,
    finalText: "",
    checkOutput: "",
  };
  let record: RunRecord;
  try {
    const workspace = await prepareWorkspace(task, runDir);
    if (source.kind === "replay" && !task.replay) throw new Error(`task ${task.name} has no replay.jsonl`);
    const started = performance.now();
    const result = await run(process.execPath, [START, ...cliArgs(task, engine, source, workspace)], {
      cwd: workspace,
      env: taskEnv(task, cliEnv(source)),
      timeoutMs: task.timeoutMs ?? DEFAULT_RUN_TIMEOUT_MS,
    });
    const wallMs = performance.now() - started;
    writeFileSync(trace, result.stdout);
    writeFileSync(path.join(runDir, "stderr.txt"), result.stderr);
    const summary = summarizeTrace(result.stdout);
    const check = await runCheck(task, workspace, summary.finalText);
    const error = result.timedOut
      ? `the run did not finish within ${task.timeoutMs ?? DEFAULT_RUN_TIMEOUT_MS} ms`
      : (summary.error ?? (summary.reason ? undefined : tail(result.stderr) || "the CLI ended without run_end"));
    record = {
      ...base,
      // run_start says "gpt-4o via https://…"; the table groups by the model's name.
      model: source.kind === "provider" && summary.model ? summary.model.replace(/ via .*$/, "") : base.model,
      passed: check.passed,
      exitCode: result.code,
      reason: result.timedOut ? "timeout" : (summary.reason ?? "no run_end"),
      steps: summary.steps,
      toolCalls: summary.toolCalls,
      approvals: summary.approvals,
      tokensIn: summary.tokensIn,
      tokensOut: summary.tokensOut,
      tokensEstimated: summary.tokensEstimated,
      ...(summary.cost !== undefined ? { cost: summary.cost } : {}),
      wallMs,
      finalText: summary.finalText,
      checkOutput: check.output,
      ...(error ? { error } : {}),
    };
  } catch (err) {
    record = { ...base, reason: "harness error", error: (err as Error).message };
  }
  if (record.passed && !options.keep) rmSync(runDir, { recursive: true, force: true });
  else Object.assign(record, { workspace: path.join(runDir, "workspace"), trace });
  return record;
}

/** Whether the npm registry answers (`npm ping`, with npm's own proxy and certificate settings). */
export async function registryReachable(): Promise<boolean> {
  const result = await run("npm", ["ping"], {
    cwd: os.tmpdir(),
    env: process.env,
    timeoutMs: REGISTRY_PING_TIMEOUT_MS,
  });
  return result.code === 0 && !result.timedOut;
}
