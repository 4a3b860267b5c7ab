#!/usr/bin/env node
import { readFileSync } from "node:fs";
import { Command, CommanderError, Option } from "commander";
import { createSession, type Session } from "./app/session.js";
import type { StopReason } from "./agent/events.js";
import { describeModel } from "./agent/model.js";
import { listThreads } from "./memory/threads.js";
import {
  APPROVAL_MODES,
  DEFAULT_MAX_STEPS,
  ENGINES,
  isInteractiveTerminal,
  loadSettings,
  type Settings,
  type SettingsFlags,
} from "./settings.js";
import { withSavedAlwaysRules } from "./security/always.js";
import { loadProjectRules } from "./security/rules.js";
import { detectBubblewrap, INSTALL_HINT, SANDBOX_MODES } from "./security/sandbox.js";
import { createTerminalApprover, nonInteractiveApprover } from "./ui/approval-prompt.js";
import { createJsonRenderer, createPrettyRenderer, type Renderer } from "./ui/render.js";
import { pausingKeys, REPEATED_SIGNAL_MS, runRepl, watchKeys } from "./ui/repl.js";
import { formatThreads } from "./ui/threads-table.js";
import type { BackgroundProcess } from "./workspace/processes.js";
import { openWorkspace } from "./workspace/paths.js";

/** Grace for stdout to drain before a finished process is made to exit. */
const FORCED_EXIT_DELAY_MS = 1_000;

export const EXIT = { ok: 0, failure: 1, usage: 2, maxSteps: 3, interrupted: 130 } as const;

const REASON_EXIT: Record<StopReason, number> = {
  done: EXIT.ok,
  max_steps: EXIT.maxSteps,
  interrupted: EXIT.interrupted,
  error: EXIT.failure,
  loop_guard: EXIT.failure,
};

function packageVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string };
    return pkg.version;
  } catch {
    return "0.0.0";
  }
}

function buildProgram(version: string): Command {
  return new Command("mini-cursor")
    .description(
      "A terminal coding agent: give it a task in plain language and it reads, writes and runs things in the workspace until the task is done.\n" +
        "With neither OPENAI_API_KEY nor OPENAI_BASE_URL set, an embedded offline model runs that follows simple literal instructions.",
    )
    .usage("[options] [task...]")
    .argument("[task...]", "what the agent should do (quote it); without one, an interactive session starts")
    .option("-w, --workspace <dir>", "root for every tool (default: the directory you ran the command from)")
    .option("-m, --model <name>", "model name (env MINI_CURSOR_MODEL; provider from OPENAI_API_KEY / OPENAI_BASE_URL)")
    .option("-t, --thread <id>", "save the conversation under this id, or resume it")
    .option("-c, --continue", "resume the latest thread in this workspace")
    .addOption(new Option("--engine <name>", "graph (LangGraph) or loop (hand-rolled)").choices([...ENGINES]))
    .option("--max-steps <n>", `model turns per task before stopping (default ${DEFAULT_MAX_STEPS})`)
    .addOption(
      new Option("--approval <mode>", "suggest: ask before writes and commands; auto-edit: ask before commands; full-auto: ask only for dangerous commands (default auto-edit)").choices([
        ...APPROVAL_MODES,
      ]),
    )
    .addOption(
      new Option("--sandbox <mode>", "run commands in bubblewrap: auto (when installed, the default), on (refuse to start without it) or off").choices([
        ...SANDBOX_MODES,
      ]),
    )
    .option("--no-network", "commands get no network access (inside the sandbox)")
    .option("--record <file>", "save every model response of the run to this JSON Lines file (for --replay)")
    .option("--replay <file>", "answer from a recording instead of a model (no provider or key); the tools run for real")
    .option("--threads", "list the saved threads in the workspace and exit")
    .option("--json", "print one JSON object per event on stdout (JSON Lines) and nothing else there")
    .option("--no-color", "plain output (also NO_COLOR)")
    .option("--verbose", "show stack traces for errors (also DEBUG=1)")
    .version(version, "-v, --version")
    .helpOption("-h, --help", "show this help")
    .addHelpText(
      "after",
      `
Examples:
  npm start -- "list the files here"
  npm start -- --approval full-auto "create a React todo app with Vite"
  npm start -- --approval full-auto --replay demos/todo-app.jsonl "create a React todo app with Vite"
  npm start -- --thread demo "what is in package.json?"   then   npm start -- --thread demo "and its scripts?"

Exit codes: 0 done, 1 runtime failure (provider unreachable, bad configuration), 2 usage error,
3 step limit reached, 130 interrupted.`,
    )
    .exitOverride()
    .showSuggestionAfterError();
}

interface ParsedArgs {
  task: string;
  threads: boolean;
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
      if (err.code === "commander.helpDisplayed" || err.code === "commander.version" || err.exitCode === 0) return EXIT.ok;
      process.stderr.write(stderr || `${err.message}\n`);
      process.stderr.write("Run with --help to see the options.\n");
      return EXIT.usage;
    }
    throw err;
  }
  const opts = program.opts<SettingsFlags & { maxSteps?: string; threads?: boolean }>();
  return { task: (program.args as string[]).join(" ").trim(), threads: Boolean(opts.threads), flags: opts };
}

function createRenderer(settings: Settings, interactive: boolean): Renderer {
  return settings.json
    ? createJsonRenderer({ verbose: settings.verbose })
    : createPrettyRenderer({
        color: settings.color && Boolean(process.stdout.isTTY),
        spinner: interactive && Boolean(process.stdout.isTTY),
        verbose: settings.verbose,
      });
}

function showBanner(session: Session, renderer: Renderer, version: string): void {
  const { settings } = session;
  renderer.banner({
    version,
    workspace: settings.workspace,
    model: describeModel(settings),
    threadId: session.threadId,
    resumed: session.resumed,
    approval: session.approval,
    engine: settings.engine,
    sandbox: session.parts.sandbox.summary,
  });
}

function reportStopped(stopped: BackgroundProcess[], renderer: Renderer): void {
  for (const p of stopped) renderer.note(`Stopped background process ${p.id} (${p.command})${p.url ? ` at ${p.url}` : ""}.`);
}

/** Signals that stop a run: Ctrl-C, a kill, and SIGHUP (the terminal was closed). */
const STOP_SIGNALS: NodeJS.Signals[] = ["SIGINT", "SIGTERM", "SIGHUP"];

function onStopSignals(handler: (signal: NodeJS.Signals) => void): () => void {
  for (const signal of STOP_SIGNALS) process.on(signal, handler);
  return () => {
    for (const signal of STOP_SIGNALS) process.off(signal, handler);
  };
}

/** Resolves on the first stop signal. */
function nextSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const off = onStopSignals((signal) => {
      off();
      resolve(signal);
    });
  });
}

/**
 * Listens for the life of the process, beside the run's and the session's own handlers, so a
 * signal that comes while nobody else listens (while processes are being stopped on the way
 * out) neither kills Node outright nor lets tsx's hidden handler exit early. A repeat within
 * REPEATED_SIGNAL_MS is the same signal delivered twice (tsx relays SIGINT and SIGTERM to its
 * child) and is ignored; a later one is the user insisting, and exits at once: the exit hook of
 * the process runner still kills every process group.
 */
function installSignalBackstop(): void {
  let last = 0;
  onStopSignals((signal) => {
    const now = Date.now();
    const repeated = now - last < REPEATED_SIGNAL_MS;
    last = now;
    if (process.listenerCount(signal) > 1 || repeated) return;
    process.exit(EXIT.interrupted);
  });
}

/**
 * On a terminal, dev servers the task started stay up until Ctrl-C, so "open
 * http://localhost:5173" is true; without one they are stopped before exiting.
 */
async function keepServersUp(session: Session, renderer: Renderer): Promise<void> {
  const running = session.running();
  if (running.length === 0) return;
  renderer.note("Still running in the background:");
  for (const p of running) renderer.note(`  ${p.id}  ${p.url ?? "(no URL)"}  ${p.command}`);
  renderer.note("Press Ctrl-C to stop them and exit.");
  await nextSignal();
}

async function runOnce(settings: Settings, task: string, version: string): Promise<number> {
  const interactive = isInteractiveTerminal() && !settings.json;
  const renderer = createRenderer(settings, interactive);
  const session = createSession(settings, { renderer });
  showBanner(session, renderer, version);
  const abort = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => {
    if (abort.signal.aborted) return;
    renderer.pause();
    renderer.note(`\n${signal === "SIGINT" ? "Ctrl-C" : signal}: stopping the run…`);
    abort.abort();
  };
  const offSignals = onStopSignals(onSignal);
  // On a terminal Ctrl-C is read as a key and raised to this process alone: as a signal to the
  // whole group, the tsx wrapper (`npm run dev`) would relay it again, or SIGKILL us if we were
  // slow to acknowledge it.
  const keys = interactive && process.stdin.isTTY ? watchKeys(process.stdin, () => process.kill(process.pid, "SIGINT")) : undefined;
  try {
    const approver = interactive
      ? pausingKeys(
          withSavedAlwaysRules(createTerminalApprover(() => renderer.pause(), () => abort.abort()), settings.workspace, (t) => renderer.note(t)),
          keys,
        )
      : nonInteractiveApprover;
    const summary = await session.runTurn(task, abort.signal, approver);
    if (summary.reason === "max_steps") {
      renderer.note(
        `Reached the step limit (--max-steps ${settings.maxSteps}) before the task was finished. ` +
          `Continue with: npm start -- --thread ${session.threadId} "continue"`,
      );
    }
    const reason: StopReason = abort.signal.aborted ? "interrupted" : summary.reason;
    offSignals();
    if (reason !== "interrupted" && interactive) await keepServersUp(session, renderer);
    return REASON_EXIT[reason];
  } finally {
    keys?.stop();
    offSignals();
    reportStopped(await session.close(), renderer);
  }
}

async function runInteractive(settings: Settings, version: string): Promise<number> {
  const interactive = isInteractiveTerminal() && !settings.json;
  const renderer = createRenderer(settings, interactive);
  const session = createSession(settings, { renderer });
  showBanner(session, renderer, version);
  try {
    return await runRepl(session, renderer, {
      input: process.stdin,
      output: process.stdout,
      interactive,
      approver: (cancel) =>
        interactive
          ? withSavedAlwaysRules(createTerminalApprover(() => renderer.pause(), cancel), settings.workspace, (t) => renderer.note(t))
          : nonInteractiveApprover,
    });
  } finally {
    reportStopped(await session.close(), renderer);
  }
}

/** Why the run must not start: `--sandbox on` without bubblewrap, or an unreadable rules file. */
function securityProblem(settings: Settings): string | undefined {
  if (settings.sandbox === "on") {
    const status = detectBubblewrap(settings.network);
    if (!status.available) return `--sandbox on needs bubblewrap, but ${status.problem}. To use it, ${INSTALL_HINT}; or run with --sandbox auto.`;
  }
  try {
    loadProjectRules(settings.workspace);
  } catch (err) {
    return `cannot read the project rules: ${(err as Error).message}`;
  }
  return undefined;
}

export async function main(argv: string[]): Promise<number> {
  const version = packageVersion();
  const parsed = parseArgs(argv, version);
  if (typeof parsed === "number") return parsed;
  installSignalBackstop();
  let settings: Settings;
  try {
    settings = loadSettings(parsed.flags);
    await openWorkspace(settings.workspace);
  } catch (err) {
    process.stderr.write(`mini-cursor: ${(err as Error).message}\n`);
    return EXIT.usage;
  }
  try {
    if (parsed.threads) {
      process.stdout.write(`${formatThreads(listThreads(settings.workspace))}\n`);
      return EXIT.ok;
    }
    const unsafe = securityProblem(settings);
    if (unsafe) {
      process.stderr.write(`mini-cursor: ${unsafe}\n`);
      return EXIT.failure;
    }
    if (!parsed.task) return await runInteractive(settings, version);
    return await runOnce(settings, parsed.task, version);
  } catch (err) {
    process.stderr.write(`mini-cursor: ${(err as Error).message}\n`);
    if (settings.verbose) process.stderr.write(`${(err as Error).stack}\n`);
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
    process.stderr.write(`mini-cursor: ${(err as Error)?.message ?? String(err)}\n`);
    process.exitCode = EXIT.failure;
  },
);
