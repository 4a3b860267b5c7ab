#!/usr/bin/env node
import { readFileSync } from "node:fs";
import { Command, CommanderError, Option } from "commander";
import { createAgentParts } from "./app/agent.js";
import type { AgentEvent, StopReason } from "./agent/events.js";
import { describeModel } from "./agent/model.js";
import { findThread, latestThread, newThreadId, recordRun } from "./memory/threads.js";
import {
  APPROVAL_MODES,
  DEFAULT_MAX_STEPS,
  ENGINES,
  isInteractiveTerminal,
  loadSettings,
  type Settings,
  type SettingsFlags,
} from "./settings.js";
import { createTerminalApprover, nonInteractiveApprover } from "./ui/approval-prompt.js";
import { createJsonRenderer, createPrettyRenderer, type Renderer } from "./ui/render.js";
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
    .argument("[task...]", "what the agent should do (quote it)")
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
  npm start -- --thread demo "what is in package.json?"   then   npm start -- --thread demo "and its scripts?"

Exit codes: 0 done, 1 runtime failure (provider unreachable, bad configuration), 2 usage error,
3 step limit reached, 130 interrupted.`,
    )
    .exitOverride()
    .showSuggestionAfterError();
}

interface ParsedArgs {
  task: string;
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
  const opts = program.opts<SettingsFlags & { maxSteps?: string }>();
  return { task: (program.args as string[]).join(" ").trim(), flags: opts };
}

function resolveThread(settings: Settings, renderer: Renderer): { id: string; resumed: boolean } {
  if (settings.thread) return { id: settings.thread, resumed: Boolean(findThread(settings.workspace, settings.thread)) };
  if (settings.continueLatest) {
    const latest = latestThread(settings.workspace);
    if (latest) return { id: latest.id, resumed: true };
    renderer.note("No saved thread in this workspace yet; starting a new one.");
  }
  return { id: newThreadId(), resumed: false };
}

async function runOnce(settings: Settings, task: string, version: string): Promise<number> {
  const interactive = isInteractiveTerminal();
  const renderer = settings.json
    ? createJsonRenderer({ verbose: settings.verbose })
    : createPrettyRenderer({ color: settings.color && Boolean(process.stdout.isTTY), spinner: interactive && Boolean(process.stdout.isTTY), verbose: settings.verbose });
  const thread = resolveThread(settings, renderer);
  const emit = (event: AgentEvent) => renderer.event(event);
  const parts = createAgentParts(settings, { emit });
  renderer.banner({
    version,
    workspace: settings.workspace,
    model: describeModel(settings),
    threadId: thread.id,
    resumed: thread.resumed,
    approval: settings.approval,
    engine: settings.engine,
  });

  const abort = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => {
    if (abort.signal.aborted) return;
    renderer.pause();
    renderer.note(`\n${signal === "SIGINT" ? "Ctrl-C" : signal}: stopping the run…`);
    abort.abort();
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  try {
    const summary = await parts.engine.run({
      task,
      threadId: thread.id,
      approver: interactive && !settings.json ? createTerminalApprover(() => renderer.pause()) : nonInteractiveApprover,
      emit,
      signal: abort.signal,
    });
    recordRun(settings.workspace, thread.id, parts.engine.name, task, summary.steps);
    if (summary.reason === "max_steps") {
      renderer.note(
        `Reached the step limit (--max-steps ${settings.maxSteps}) before the task was finished. ` +
          `Continue with: npm start -- --thread ${thread.id} "continue"`,
      );
    }
    const reason: StopReason = abort.signal.aborted ? "interrupted" : summary.reason;
    return REASON_EXIT[reason];
  } finally {
    const stopped = await parts.tools.processes.stopAll();
    for (const p of stopped) renderer.note(`Stopped background process ${p.id} (${p.command})${p.url ? ` at ${p.url}` : ""}.`);
    await parts.close();
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
}

export async function main(argv: string[]): Promise<number> {
  const version = packageVersion();
  const parsed = parseArgs(argv, version);
  if (typeof parsed === "number") return parsed;
  let settings: Settings;
  try {
    settings = loadSettings(parsed.flags);
    await openWorkspace(settings.workspace);
  } catch (err) {
    process.stderr.write(`mini-cursor: ${(err as Error).message}\n`);
    return EXIT.usage;
  }
  if (!parsed.task) {
    process.stderr.write('mini-cursor: no task given. Usage: npm start -- "<task>" (see --help).\n');
    return EXIT.usage;
  }
  try {
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
