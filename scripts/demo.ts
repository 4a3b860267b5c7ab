/**
 * `npm run demo -- [--workspace <dir>] [--engine graph|loop]`: the seed article's flagship task
 * ("create a React TodoList with Vite, install and start it") replayed from
 * demos/todo-app.jsonl through the real CLI (`npm start`'s code path) with --approval
 * full-auto, into a fresh directory (a new temporary one by default). No model or key is
 * needed; the commands run for real, so the npm registry must be reachable.
 *
 * On a terminal the dev server stays up until Ctrl-C (the CLI keeps it and lists its URL);
 * without one the CLI stops it before exiting. The exit code is the CLI's.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, realpathSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Command, CommanderError, Option } from "commander";
import { ENGINES, invocationDirectory } from "../src/settings.js";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
export const DEMO_RECORDING = path.join(ROOT, "demos", "todo-app.jsonl");
export const DEMO_TASK = "create a React todo app with Vite";
/** The folder the recorded run creates in the workspace. */
export const DEMO_APP_DIR = "react-todo-app";
const EXIT_USAGE = 2;
/** Signals the CLI gets too; a terminal's Ctrl-C reaches it as a key (raw mode), not through here. */
const FORWARDED: NodeJS.Signals[] = ["SIGINT", "SIGTERM", "SIGHUP"];

interface DemoOptions {
  workspace?: string;
  engine?: string;
}

function parse(argv: string[]): DemoOptions | number {
  const program = new Command("demo")
    .description(
      `Replay the recorded "${DEMO_TASK}" run (demos/todo-app.jsonl) into a fresh directory through the real CLI, ` +
        "with --approval full-auto: it scaffolds the app with npm create vite, writes the TodoList, installs, builds and starts the dev server. " +
        "No model or key needed; the npm registry must be reachable.",
    )
    .option("-w, --workspace <dir>", "where to build the app (created if missing; default: a new temporary directory)")
    .addOption(
      new Option("--engine <name>", "graph (LangGraph, the default) or loop (hand-rolled)").choices([...ENGINES]),
    )
    .helpOption("-h, --help", "show this help")
    .exitOverride();
  try {
    program.parse(argv, { from: "user" });
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode === 0 ? 0 : EXIT_USAGE;
    throw err;
  }
  return program.opts<DemoOptions>();
}

/** The workspace to replay into: a new temporary one, or the given one if the app is not there yet. */
function prepareWorkspace(requested: string | undefined): string {
  if (!requested) return realpathSync(mkdtempSync(path.join(os.tmpdir(), "mini-cursor-demo-")));
  const dir = path.resolve(invocationDirectory(), requested);
  mkdirSync(dir, { recursive: true });
  const app = path.join(dir, DEMO_APP_DIR);
  if (existsSync(app) && readdirSync(app).length > 0) {
    throw new Error(
      `${app} already exists; the demo needs a directory without it (or leave out --workspace for a temporary one).`,
    );
  }
  return dir;
}

function runCli(args: string[]): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(ROOT, "scripts", "start.mjs"), ...args], {
      cwd: ROOT,
      stdio: "inherit",
    });
    const forward = (signal: NodeJS.Signals) => {
      // The CLI stops its servers and exits by itself; this process only waits for it.
      if (child.exitCode === null) child.kill(signal);
    };
    for (const signal of FORWARDED) process.on(signal, forward);
    child.on("close", (code, signal) => {
      for (const s of FORWARDED) process.off(s, forward);
      resolve(code ?? (signal ? 128 + (os.constants.signals[signal] ?? 0) : 1));
    });
  });
}

async function main(): Promise<number> {
  const options = parse(process.argv.slice(2));
  if (typeof options === "number") return options;
  let workspace: string;
  try {
    workspace = prepareWorkspace(options.workspace);
  } catch (err) {
    process.stderr.write(`demo: ${(err as Error).message}\n`);
    return EXIT_USAGE;
  }
  process.stdout.write(`Replaying demos/todo-app.jsonl into ${workspace}\n\n`);
  const code = await runCli([
    "--replay",
    DEMO_RECORDING,
    "--approval",
    "full-auto",
    "--workspace",
    workspace,
    ...(options.engine ? ["--engine", options.engine] : []),
    DEMO_TASK,
  ]);
  const app = path.join(workspace, DEMO_APP_DIR);
  if (existsSync(path.join(app, "package.json"))) {
    process.stdout.write(`\nThe app is in ${app}\nStart it again with: cd ${app} && npm run dev\n`);
    if (!options.workspace)
      process.stdout.write(`(${workspace} is a temporary directory: remove it with rm -rf when you are done.)\n`);
  }
  return code;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`demo: ${(err as Error)?.stack ?? String(err)}\n`);
    process.exit(1);
  },
);
