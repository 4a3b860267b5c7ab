import { configureParts } from "../src/app/configure.js";
/**
 * `npm run compare -- [options] "<task>"`: the same task, model and tools through both engines,
 * each in its own copy of the workspace and its own process (so peak memory is its own).
 */
import { spawn } from "node:child_process";
import { cpSync, mkdtempSync, rmSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Command, CommanderError, Option } from "commander";
import { DEFAULT_MAX_STEPS, invocationDirectory } from "../src/settings.js";
import { APPROVAL_MODES } from "../src/contracts/modes.js";
import { STATE_DIR_NAME } from "../src/memory/state-dir.js";
import { engineFiles, formatComparison, formatEngineParts, linesOfCode, type EngineResult } from "./compare-lib.js";

// As the CLI does at start: each part of mini-cursor this script uses gets its slice of the settings.
configureParts();

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
/** Folders not copied into the per-engine workspaces. */
const SKIPPED = new Set([STATE_DIR_NAME, "node_modules", ".git"]);
/** Exit status of a usage error (no task, an unknown flag), as the CLI uses. */
const USAGE_EXIT = 2;
const USAGE =
  'Usage: npm run compare -- [--workspace <dir>] [--json] "<task>"   (e.g. npm run compare -- "list the files here"), or npm run compare -- --parts';

function copyWorkspace(source: string, engine: string): string {
  const target = mkdtempSync(path.join(os.tmpdir(), `mini-cursor-compare-${engine}-`));
  cpSync(source, target, { recursive: true, filter: (src) => !SKIPPED.has(path.basename(src)) || src === source });
  return target;
}

function runEngine(
  engine: "graph" | "loop",
  workspace: string,
  approval: string,
  maxSteps: string,
  task: string,
): Promise<EngineResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ["--import", "tsx", path.join(ROOT, "scripts", "compare-run.ts"), engine, workspace, approval, maxSteps, task],
      {
        cwd: ROOT,
        stdio: ["ignore", "pipe", "inherit"],
      },
    );
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.on("close", (code) => {
      const line = out.trim().split("\n").at(-1) ?? "";
      try {
        resolve({
          ...(JSON.parse(line) as Omit<EngineResult, "linesOfCode">),
          linesOfCode: linesOfCode(engineFiles(ROOT, engine)),
        });
      } catch {
        reject(new Error(`the ${engine} run failed (exit ${code})`));
      }
    });
  });
}

async function main(): Promise<number> {
  const program = new Command("compare")
    .description("Run one task through the LangGraph engine and the hand-rolled loop and compare them.")
    .argument("[task...]", "the task")
    .option("-w, --workspace <dir>", "workspace to copy for each engine (default: where you ran the command)")
    .addOption(
      new Option(
        "--approval <mode>",
        "approval mode for both runs (nobody is asked: calls that need approval are declined)",
      )
        .choices([...APPROVAL_MODES])
        .default("full-auto"),
    )
    .option("--max-steps <n>", "step limit for both runs", String(DEFAULT_MAX_STEPS))
    .option("--json", "print the results as JSON")
    .option("--parts", "print only what each engine writes by hand and what LangGraph provides (no run)")
    .exitOverride();
  try {
    program.parse();
  } catch (err) {
    if (!(err instanceof CommanderError)) throw err;
    if (err.exitCode === 0) return 0;
    // A usage error (no task, a bad flag) is exit 2, as in the CLI, with what to type.
    process.stderr.write(`${USAGE}\n`);
    return USAGE_EXIT;
  }
  const opts = program.opts<{
    workspace?: string;
    approval: string;
    maxSteps: string;
    json?: boolean;
    parts?: boolean;
  }>();
  if (opts.parts) {
    process.stdout.write(`${formatEngineParts(ROOT)}\n`);
    return 0;
  }
  const task = (program.args as string[]).join(" ");
  if (!task) {
    process.stderr.write(`error: missing required argument 'task'\n${USAGE}\n`);
    return USAGE_EXIT;
  }
  const source = path.resolve(invocationDirectory(), opts.workspace ?? ".");
  // Checked before any copy is made, so a wrong path leaves no temp folder behind.
  if (!statSync(source, { throwIfNoEntry: false })?.isDirectory()) {
    process.stderr.write(
      `compare: the workspace ${source} is not a directory that exists; pass one with --workspace <dir>.\n`,
    );
    return USAGE_EXIT;
  }
  const results: EngineResult[] = [];
  for (const engine of ["graph", "loop"] as const) {
    const workspace = copyWorkspace(source, engine);
    try {
      if (!opts.json) process.stderr.write(`running ${engine} in ${workspace}…\n`);
      results.push(await runEngine(engine, workspace, opts.approval, opts.maxSteps, task));
    } finally {
      rmSync(workspace, { recursive: true, force: true });
    }
  }
  if (opts.json) process.stdout.write(`${JSON.stringify({ task, results }, null, 2)}\n`);
  else process.stdout.write(`\nTask: ${task}\n\n${formatComparison(results)}\n\n${formatEngineParts(ROOT)}\n`);
  return results.every((r) => r.outcome === "done") ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`compare: ${(err as Error).message}\n`);
    process.exit(1);
  },
);
