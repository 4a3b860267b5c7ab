#!/usr/bin/env node
import { readFileSync, realpathSync, renameSync } from "node:fs";
import { createInterface } from "node:readline/promises";
import os from "node:os";
import path from "node:path";
import { PROJECT_ROOT } from "./project-root.js";
import { CommanderError } from "commander";
import { buildProgram } from "./cli-program.js";
import { EXIT } from "./app/exit-codes.js";
import { limitHeapGrowth } from "./app/heap-growth.js";
import { installSignalBackstop } from "./app/process-signals.js";
import { enableWarmUps } from "./app/warm-up.js";
import type { ThreadInfo } from "./memory/threads.js";
import { StateFileError } from "./memory/state-file-error.js";
import { stateDirFor, takeStateNotices } from "./memory/state-dir.js";
import { isInteractiveTerminal, loadSettings, secretValues, type Settings, type SettingsFlags } from "./settings.js";
import { loadProjectRules } from "./security/rules.js";
import { type BubblewrapStatus, INSTALL_HINT, probeBubblewrap } from "./security/sandbox.js";
import { formatThreads } from "./ui/threads-table.js";
import { openWorkspace } from "./workspace/paths.js";
import { addGatedSecrets, gateText } from "./workspace/output-gate.js";

/** Grace for stdout to drain before a finished process is made to exit. */
const FORCED_EXIT_DELAY_MS = 1_000;

function packageVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(path.join(PROJECT_ROOT, "package.json"), "utf8")) as { version: string };
    return pkg.version;
  } catch {
    return "0.0.0";
  }
}

interface ParsedArgs {
  task: string;
  threads: boolean;
  undo: { force: boolean } | undefined;
  /** `--force` given without `--undo`: a usage error. */
  forceAlone: boolean;
  mcpList: boolean;
  flags: SettingsFlags;
}

function parseArgs(argv: string[], version: string): ParsedArgs | number {
  const program = buildProgram(version);
  let stderr = "";
  program.configureOutput({ writeErr: (text) => (stderr += text) });
  try {
    program.parse(argv, { from: "user" });
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === "commander.helpDisplayed" || err.code === "commander.version" || err.exitCode === 0)
        return EXIT.ok;
      process.stderr.write(stderr || `${err.message}\n`);
      process.stderr.write("Run with --help to see the options.\n");
      return EXIT.usage;
    }
    throw err;
  }
  const opts = program.opts<
    SettingsFlags & { maxSteps?: string; threads?: boolean; undo?: boolean; force?: boolean; mcpList?: boolean }
  >();
  const { undo, force, mcpList, ...flags } = opts;
  return {
    task: (program.args as string[]).join(" ").trim(),
    threads: Boolean(opts.threads),
    undo: undo ? { force: Boolean(force) } : undefined,
    forceAlone: Boolean(force) && !undo,
    mcpList: Boolean(mcpList),
    flags,
  };
}

/** `--undo` needs a thread to undo on, and no task; `--force` means nothing without it. */
function undoProblem(parsed: ParsedArgs, settings: Settings): string | undefined {
  if (parsed.forceAlone)
    return "--force only goes with --undo (it overwrites files changed by hand while undoing); add --undo, or leave --force out.";
  if (!parsed.undo) return undefined;
  if (!settings.thread && !settings.continueLatest)
    return "--undo needs the thread: add --thread <id> or --continue (--threads lists them).";
  if (parsed.task) return "--undo takes no task: run the task afterwards, on the same thread.";
  return undefined;
}

/** Why the run must not start: `--sandbox on` without bubblewrap, or an unreadable rules file. */
async function securityProblem(
  settings: Settings,
  sandboxProbe: Promise<BubblewrapStatus> | undefined,
): Promise<string | undefined> {
  if (settings.sandbox === "on") {
    const status = await (sandboxProbe ?? probeBubblewrap(settings.network));
    if (!status.available)
      return `--sandbox on needs bubblewrap, but ${status.problem}. To use it, ${INSTALL_HINT}; or run with --sandbox auto.`;
  }
  try {
    loadProjectRules(settings.workspace);
  } catch (err) {
    return `cannot read the project rules: ${(err as Error).message}`;
  }
  return undefined;
}

/**
 * A reader that stops early (`mini-cursor --help | head -3`) closes our stdout: the run ends
 * quietly, as `git log | head` does, instead of with an EPIPE stack trace. The exit hook of the
 * process runner still stops every command the run started.
 */
function endQuietlyOnClosedOutput(): void {
  const onError = (err: NodeJS.ErrnoException) => {
    if (err.code === "EPIPE") process.exit(EXIT.ok);
    throw err;
  };
  process.stdout.on("error", onError);
  process.stderr.on("error", (err: NodeJS.ErrnoException) => {
    if (err.code !== "EPIPE") throw err;
  });
}

function realpathOrSelf(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}

/** Why this folder must not be the workspace: the whole file system, or the home folder itself. */
function workspaceProblem(workspace: string, fromFlag: boolean): string | undefined {
  const root = realpathOrSelf(workspace);
  const how = fromFlag ? `--workspace ${workspace}` : `The current folder (${workspace}), the default workspace,`;
  const choose = "Choose a project folder: cd into it, or pass --workspace path/to/project.";
  if (root === path.parse(root).root) {
    return `${how} is the root of the file system: every tool would work on the whole machine. ${choose}`;
  }
  if (root === realpathOrSelf(os.homedir())) {
    return `${how} is your home folder itself: every tool would work on all your files. ${choose}`;
  }
  return undefined;
}

/** A thread id of the form mini-cursor makes (20261129-a1b2c3): naming one that is not here is a mistake, not a new name. */
const GENERATED_THREAD_ID = /^\d{8}-[0-9a-f]{6}$/;

/** The saved threads (threads.json, or the PostgreSQL checkpointer's table). */
async function savedThreads(settings: Settings): Promise<ThreadInfo[]> {
  // Loaded here: the checkpointers' libraries would slow --help and usage errors.
  const { openMemory } = await import("./memory/backend.js");
  const memory = await openMemory(settings, {
    noticeMs: settings.waitNoticeMs,
    onWait: (text) => process.stderr.write(gateText(`mini-cursor: ${text}\n`)),
  });
  try {
    return await memory.threads.list();
  } finally {
    await memory.close();
  }
}

/** `--thread ID` naming a thread mini-cursor made that this workspace does not hold. */
async function threadProblem(settings: Settings): Promise<string | undefined> {
  const id = settings.thread;
  if (!id || !GENERATED_THREAD_ID.test(id)) return undefined;
  const saved = await savedThreads(settings);
  if (saved.some((t) => t.id === id)) return undefined;
  const here =
    saved.length === 0
      ? "There are no saved threads here yet"
      : `--threads shows ${saved.length} here: ${saved
          .slice(0, 5)
          .map((t) => t.id)
          .join(", ")}${saved.length > 5 ? ", …" : ""}`;
  return `there is no thread ${id} in the workspace ${settings.workspace}. ${here}. If it was started in another folder, pass that folder with --workspace; to start a new thread, leave --thread out.`;
}

/**
 * On a terminal, a damaged thread database is offered to be moved aside (to `<file>.damaged`)
 * so the run can go on with an empty one; anywhere else the message says how to do it.
 */
async function offerToMoveAside(err: StateFileError, settings: Settings): Promise<boolean> {
  if (!isInteractiveTerminal() || settings.json) return false;
  process.stderr.write(gateText(`mini-cursor: ${err.message}\n`));
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  const aside = `${err.file}.damaged`;
  try {
    const answer = await rl.question(`Move it to ${aside} now and go on with an empty one? [y/N] `);
    if (!/^y(es)?$/i.test(answer.trim())) return false;
  } finally {
    rl.close();
  }
  renameSync(err.file, aside);
  process.stderr.write(`Moved it to ${aside}.\n`);
  return true;
}

export async function main(argv: string[]): Promise<number> {
  limitHeapGrowth();
  endQuietlyOnClosedOutput();
  const version = packageVersion();
  const parsed = parseArgs(argv, version);
  if (typeof parsed === "number") return parsed;
  installSignalBackstop();
  let settings: Settings;
  try {
    settings = loadSettings(parsed.flags);
    // From here on everything printed is cleaned of the key and the workspace's secrets.
    addGatedSecrets([...(settings.apiKey ? [settings.apiKey] : []), ...secretValues(settings.workspace)]);
    await openWorkspace(settings.workspace);
    const problem =
      workspaceProblem(settings.workspace, parsed.flags.workspace !== undefined) ?? undoProblem(parsed, settings);
    if (problem) throw new Error(problem);
  } catch (err) {
    process.stderr.write(gateText(`mini-cursor: ${(err as Error).message}\n`));
    return EXIT.usage;
  }
  // Whether bubblewrap works is asked now, in the background: the answer is there, for
  // `--sandbox on` to refuse and for the banner, once the agent has loaded (app/tools.ts).
  // `--sandbox on` needs it before any run (--undo too); `auto` only when the agent runs.
  const wanted = settings.sandbox === "on" || (settings.sandbox === "auto" && !parsed.undo);
  const sandboxProbe = wanted && !parsed.threads && !parsed.mcpList ? probeBubblewrap(settings.network) : undefined;
  try {
    // The workspace's private state folder, made now: an earlier version's state moves here once, said in one line.
    stateDirFor(settings.workspace);
    for (const notice of takeStateNotices()) process.stderr.write(`mini-cursor: ${notice}\n`);
    // A thread that is not there is a usage error; a database that cannot be reached is not.
    const problem = await threadProblem(settings);
    if (problem) {
      process.stderr.write(gateText(`mini-cursor: ${problem}\n`));
      return EXIT.usage;
    }
    if (parsed.threads) {
      const threads = await savedThreads(settings);
      // --json: JSON Lines, one thread per line, like every other --json output.
      if (settings.json) process.stdout.write(threads.map((t) => `${JSON.stringify(t)}\n`).join(""));
      else process.stdout.write(`${formatThreads(threads)}\n`);
      return EXIT.ok;
    }
    if (parsed.mcpList) {
      const { mcpList } = await import("./app/run.js");
      process.stdout.write(await mcpList(settings, (text) => process.stderr.write(gateText(`${text}\n`))));
      return EXIT.ok;
    }
    if (parsed.flags.model && settings.provider === "offline" && !settings.replay) {
      process.stderr.write(
        `mini-cursor: --model ${parsed.flags.model} is not used: neither OPENAI_API_KEY nor OPENAI_BASE_URL is set, so the embedded offline model runs. Set one of them (see .env.example) to use ${parsed.flags.model}.\n`,
      );
    }
    const unsafe = await securityProblem(settings, sandboxProbe);
    if (unsafe) {
      process.stderr.write(gateText(`mini-cursor: ${unsafe}\n`));
      return EXIT.failure;
    }
    if (parsed.undo) {
      const { runUndo } = await import("./app/run-undo.js");
      return await runUndo(settings, parsed.undo.force);
    }
    // Loaded only now, so --help, --version, --threads and usage errors stay fast.
    const { runInteractive, runOnce } = await import("./app/run.js");
    await sandboxProbe;
    enableWarmUps();
    const run = () => (parsed.task ? runOnce(settings, parsed.task, version) : runInteractive(settings, version));
    try {
      return await run();
    } catch (err) {
      if (!(err instanceof StateFileError) || !(await offerToMoveAside(err, settings))) throw err;
      return await run();
    }
  } catch (err) {
    process.stderr.write(gateText(`mini-cursor: ${(err as Error).message}\n`));
    if (settings.verbose) process.stderr.write(gateText(`${(err as Error).stack}\n`));
    return EXIT.failure;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
    // A stray handle (a socket, a timer in a dependency) must not keep a finished run alive.
    setTimeout(() => process.exit(code), FORCED_EXIT_DELAY_MS).unref();
  },
  (err: unknown) => {
    process.stderr.write(gateText(`mini-cursor: ${(err as Error)?.message ?? String(err)}\n`));
    process.exitCode = EXIT.failure;
  },
);
