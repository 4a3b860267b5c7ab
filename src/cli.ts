#!/usr/bin/env node
import { fstatSync, realpathSync, renameSync } from "node:fs";
import { createInterface } from "node:readline/promises";
import os from "node:os";
import path from "node:path";
import { INSTALL_ROOT, PROJECT_ROOT } from "./project-root.js";
import { shellQuote } from "./shell-quote.js";
import { CommanderError } from "commander";
import { buildProgram } from "./cli-program.js";
import { habitHint } from "./cli-habits.js";
import { configureParts } from "./app/configure.js";
import { EXIT } from "./app/exit-codes.js";
import { limitHeapGrowth } from "./app/heap-growth.js";
import { installSignalBackstop } from "./app/process-signals.js";
import { enableWarmUps } from "./app/warm-up.js";
import type { ThreadInfo } from "./memory/threads.js";
import { StateFileError } from "./memory/state-file-error.js";
import { stateDirFor, takeStateNotices } from "./memory/state-dir.js";
import {
  launchCommand,
  loadSettings,
  secretValues,
  type Settings,
  type SettingsFlags,
  workspaceNamedInEnvironment,
} from "./settings.js";
import { loadProjectRules } from "./security/rules.js";
import { type BubblewrapStatus, INSTALL_HINT, probeBubblewrap } from "./security/sandbox.js";
import { formatThreads } from "./ui/threads-table.js";
import { isInteractiveTerminal } from "./ui/terminal.js";
import { pipedInputProblem, readPipedInput, SILENT_STDIN_MS, withPipedText } from "./ui/piped-input.js";
import { isInside, openWorkspace } from "./workspace/paths.js";
import { addGatedSecrets } from "./workspace/output-gate.js";
import { onSkippedFiles, readRegularTextSync } from "./regular-file.js";
import { block, print, printJson, render } from "./ui/output.js";

/** A message on stderr, through the output gate like everything printed. */
const printErr = (text: string) => print(process.stderr, block(text));
/** A line of mini-cursor's own on stderr. */
const say = (text: string) => printErr(`mini-cursor: ${text}\n`);
/** Says why the run ends, and ends it with `code`. */
const fail = (text: string, code: number) => {
  say(text);
  return code;
};

/** Grace for stdout to drain before a finished process is made to exit. */
const FORCED_EXIT_DELAY_MS = 1_000;

function packageVersion(): string {
  try {
    const pkg = JSON.parse(readRegularTextSync(path.join(PROJECT_ROOT, "package.json"), { follow: true })) as {
      version: string;
    };
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
  /** `--each-line`: a piped session, one request (or /command) per line. */
  eachLine: boolean;
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
      printErr(stderr || `${err.message}\n`);
      // A flag of another agent's CLI: say what ours is (cli-habits.ts).
      const flag = err.code === "commander.unknownOption" ? /'([^']+)'/.exec(err.message)?.[1] : undefined;
      const hint = flag ? habitHint(flag, argv) : undefined;
      if (hint) printErr(`${hint}\n`);
      printErr("Run with --help to see the options.\n");
      return EXIT.usage;
    }
    throw err;
  }
  const opts = program.opts<
    SettingsFlags & {
      maxSteps?: string;
      threads?: boolean;
      undo?: boolean;
      force?: boolean;
      mcpList?: boolean;
      eachLine?: boolean;
    }
  >();
  const { undo, force, mcpList, eachLine, ...flags } = opts;
  const words = program.args as string[];
  // Codex's `codex exec "<task>"`: here the task alone runs once (sent on, "exec" would be part of it).
  if (words.length > 1 && words[0] === "exec") {
    printErr(
      `exec is Codex's subcommand (codex exec "<task>"). In mini-cursor a task given as an argument already runs once and exits: mini-cursor ${shellQuote(words.slice(1).join(" "))}\n`,
    );
    return EXIT.usage;
  }
  return {
    task: words.join(" ").trim(),
    threads: Boolean(opts.threads),
    undo: undo ? { force: Boolean(force) } : undefined,
    forceAlone: Boolean(force) && !undo,
    mcpList: Boolean(mcpList),
    eachLine: Boolean(eachLine),
    flags,
  };
}

function stdinIsSocket(): boolean {
  try {
    return fstatSync(0).isSocket();
  } catch {
    return false;
  }
}

/** The task as given: `-` means "read it from stdin", as for `codex exec -`. */
const TASK_FROM_STDIN = "-";

/**
 * The request a run starts with ("" opens a session), or why it cannot start. Text piped in is
 * read whole: with a task it is added to it, without one (or with `-`) it is the task. Only
 * `--each-line` keeps a piped session reading one request per line.
 */
async function taskWithInput(parsed: ParsedArgs, settings: Settings): Promise<string | { problem: string }> {
  if (parsed.eachLine) {
    if (parsed.task)
      return {
        problem:
          "--each-line reads the requests from stdin, one per line: give no task (put it on the first line of the input).",
      };
    return "";
  }
  const dash = parsed.task === TASK_FROM_STDIN;
  if (!dash && process.stdin.isTTY) return parsed.task;
  const waiting =
    parsed.task && !dash
      ? "mini-cursor: reading the input piped in (stdin), to add it to the task; it has not ended yet. If nothing is meant to be piped in, run with < /dev/null.\n"
      : "mini-cursor: reading the task from stdin until it ends (Ctrl-D on a terminal). For a session that reads one request per line, use --each-line.\n";
  // A shell pipe or a file was piped in on purpose; a socket is what a program that starts us
  // leaves open without meaning to (Node's spawn), so with a task its silence counts as nothing.
  const patient = dash || !parsed.task || !stdinIsSocket();
  const piped = await readPipedInput(process.stdin, {
    noticeMs: settings.waitNoticeMs,
    onWait: () => printErr(waiting),
    ...(patient ? {} : { giveUpIfSilentMs: SILENT_STDIN_MS }),
  });
  const problem = pipedInputProblem(piped);
  if (problem || !("text" in piped)) return { problem: problem ?? "" };
  if (parsed.task && !dash) return withPipedText(parsed.task, piped.text);
  const task = piped.text.trim();
  if (!task)
    return {
      problem:
        'no task: none was given and stdin gave no text. Give it as an argument (mini-cursor "list the files here"), pipe it in, or run mini-cursor on a terminal for a session.',
    };
  return task;
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

/**
 * Why this folder must not be the workspace: the whole file system, the home folder itself, or
 * (unless named with --workspace or MINI_CURSOR_WORKSPACE) mini-cursor's own folder, where
 * `npm start` runs from: a task there would change mini-cursor's own files and build its app
 * inside the clone.
 */
function workspaceProblem(workspace: string, named: { flag: boolean; env: boolean }): string | undefined {
  const root = realpathOrSelf(workspace);
  const how = named.flag ? `--workspace ${workspace}` : `The current folder (${workspace}), the default workspace,`;
  const choose = "Choose a project folder: cd into it, or pass --workspace path/to/project.";
  if (root === path.parse(root).root) {
    return `${how} is the root of the file system: every tool would work on the whole machine. ${choose}`;
  }
  if (root === realpathOrSelf(os.homedir())) {
    return `${how} is your home folder itself: every tool would work on all your files. ${choose}`;
  }
  const install = INSTALL_ROOT && realpathOrSelf(INSTALL_ROOT);
  if (!named.flag && !named.env && install && isInside(install, root)) {
    const where = root === install ? "is mini-cursor's own folder" : `is inside mini-cursor's own folder (${install})`;
    return (
      `The current folder (${workspace}), the default workspace, ${where}: the agent would work on mini-cursor's own files, and what it makes would land in there. ` +
      `Name the project it should work on: ${launchCommand()} --workspace path/to/project "your task" (the folder must exist: mkdir -p it first), or cd into the project and run mini-cursor there (npm link once makes the command). ` +
      `To work on mini-cursor itself, say so: --workspace ${shellQuote(workspace)}.`
    );
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
    onWait: say,
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
  say(err.message);
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  const aside = `${err.file}.damaged`;
  try {
    const answer = await rl.question(render(block(`Move it to ${aside} now and go on with an empty one? [y/N] `)));
    if (!/^y(es)?$/i.test(answer.trim())) return false;
  } finally {
    rl.close();
  }
  renameSync(err.file, aside);
  printErr(`Moved it to ${aside}.\n`);
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
    // Each part gets its slice of the settings now, before any work, and reads no environment later.
    configureParts();
    // From here on everything printed is cleaned of the key and the workspace's secrets.
    addGatedSecrets([...(settings.apiKey ? [settings.apiKey] : []), ...secretValues(settings.workspace)]);
    // A file mini-cursor did not read for itself (a FIFO, a device) is said; a run says it in its trace.
    onSkippedFiles(say);
    await openWorkspace(settings.workspace);
    const problem =
      workspaceProblem(settings.workspace, {
        flag: parsed.flags.workspace !== undefined,
        env: workspaceNamedInEnvironment(),
      }) ?? undoProblem(parsed, settings);
    if (problem) throw new Error(problem);
  } catch (err) {
    return fail((err as Error).message, EXIT.usage);
  }
  // Whether bubblewrap works is asked now, in the background: the answer is there, for
  // `--sandbox on` to refuse and for the banner, once the agent has loaded (app/tools.ts).
  // `--sandbox on` needs it before any run (--undo too); `auto` only when the agent runs.
  const wanted = settings.sandbox === "on" || (settings.sandbox === "auto" && !parsed.undo);
  const sandboxProbe = wanted && !parsed.threads && !parsed.mcpList ? probeBubblewrap(settings.network) : undefined;
  try {
    // The workspace's private state folder, made now: an earlier version's state moves here once, said in one line.
    stateDirFor(settings.workspace);
    for (const notice of takeStateNotices()) say(notice);
    // A thread that is not there is a usage error; a database that cannot be reached is not.
    const problem = await threadProblem(settings);
    if (problem) return fail(problem, EXIT.usage);
    if (parsed.threads) {
      const threads = await savedThreads(settings);
      // --json: JSON Lines, one thread per line, like every other --json output.
      if (settings.json) for (const t of threads) printJson(process.stdout, t);
      else print(process.stdout, block(`${formatThreads(threads)}\n`));
      return EXIT.ok;
    }
    if (parsed.mcpList) {
      const { mcpList } = await import("./app/run.js");
      print(process.stdout, block(await mcpList(settings, (text) => printErr(`${text}\n`))));
      return EXIT.ok;
    }
    if (parsed.flags.model && settings.provider === "offline" && !settings.replay) {
      printErr(
        `mini-cursor: --model ${parsed.flags.model} is not used: neither OPENAI_API_KEY nor OPENAI_BASE_URL is set, so the embedded offline model runs. Set one of them (see .env.example) to use ${parsed.flags.model}.\n`,
      );
    }
    const unsafe = await securityProblem(settings, sandboxProbe);
    if (unsafe) return fail(unsafe, EXIT.failure);
    if (parsed.undo) {
      const { runUndo } = await import("./app/run-undo.js");
      return await runUndo(settings, parsed.undo.force);
    }
    const task = await taskWithInput(parsed, settings);
    if (typeof task !== "string") return fail(task.problem, EXIT.usage);
    // Loaded only now, so --help, --version, --threads and usage errors stay fast.
    const { runInteractive, runOnce } = await import("./app/run.js");
    await sandboxProbe;
    enableWarmUps();
    const run = () => (task ? runOnce(settings, task, version) : runInteractive(settings, version));
    try {
      return await run();
    } catch (err) {
      if (!(err instanceof StateFileError) || !(await offerToMoveAside(err, settings))) throw err;
      return await run();
    }
  } catch (err) {
    say((err as Error).message);
    if (settings.verbose) printErr(`${(err as Error).stack}\n`);
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
    say((err as Error)?.message ?? String(err));
    process.exitCode = EXIT.failure;
  },
);
