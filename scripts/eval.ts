import { configureParts } from "../src/app/configure.js";
/**
 * `npm run eval -- [options]`: the task suite in evals/tasks/ through the real CLI, with either
 * engine and any model, each run in a fresh workspace and judged by the task's check; a table of
 * success rate (Wilson 95% interval), tokens, cost, time, tool calls and approvals per engine and
 * model. See evals/README.md.
 *
 * Exit codes: 0 every run ran (and, with --replay or --offline, passed), 1 a run failed with
 * --replay or --offline, 2 the harness could not do its job (usage, a broken task, a run that
 * could not be set up).
 */
import { rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { Command, CommanderError, Option } from "commander";
import { ENGINES, invocationDirectory, loadSettings, type EngineName } from "../src/settings.js";
import {
  formatPerTask,
  formatSummary,
  loadTasks,
  selectTasks,
  summarize,
  type RunRecord,
  type Task,
} from "./eval-lib.js";
import {
  checkStartingWorkspace,
  makeRoot,
  registryReachable,
  runTask,
  sourceLabel,
  TASKS_DIR,
  type ModelSource,
  type StartingCheck,
} from "./eval-runner.js";

// As the CLI does at start: each part of mini-cursor this script uses gets its slice of the settings.
configureParts();

const EXIT_OK = 0;
const EXIT_FAILED = 1;
const EXIT_HARNESS = 2;
const DEFAULT_CONCURRENCY = 2;
const BAR_WIDTH = 24;

interface EvalOptions {
  engine: "graph" | "loop" | "both";
  model?: string;
  tasks?: string;
  repeat: string;
  concurrency: string;
  replay?: boolean;
  offline?: boolean;
  json?: string;
  keep?: boolean;
  tasksDir: string;
}

function parse(argv: string[]): EvalOptions | number {
  const program = new Command("eval")
    .description(
      "Run the task suite (evals/tasks/) through the real CLI and compare engines and models: each run in a fresh temporary workspace, " +
        "judged by the task's check. With --replay every task plays its recorded trajectory (no model, no key); with --offline the embedded offline model runs.",
    )
    .addOption(new Option("--engine <name>", "graph, loop or both").choices([...ENGINES, "both"]).default("both"))
    .option(
      "-m, --model <names>",
      "model name(s) for the configured provider, comma-separated (default: MINI_CURSOR_MODEL or the CLI's default)",
    )
    .option("--tasks <names>", "only these tasks, comma-separated (default: all)")
    .option("--repeat <n>", "runs of each task per engine and model", "1")
    .option("--concurrency <n>", "runs at once", String(DEFAULT_CONCURRENCY))
    .option("--replay", "answer from each task's replay.jsonl instead of a model")
    .option(
      "--offline",
      "use the embedded offline model (no key); for the tasks tagged offline unless --tasks says otherwise",
    )
    .option("--json <file>", "write every run's record to this file")
    .option("--keep", "keep the workspaces of passed runs too (failed runs always keep theirs)")
    .option("--tasks-dir <dir>", "folder of task folders (default: evals/tasks)", TASKS_DIR)
    .helpOption("-h, --help", "show this help")
    .exitOverride();
  try {
    program.parse(argv, { from: "user" });
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode === 0 ? EXIT_OK : EXIT_HARNESS;
    throw err;
  }
  return program.opts<EvalOptions>();
}

function positive(value: string, flag: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${flag} must be a whole number of at least 1, got "${value}"`);
  return n;
}

const list = (value: string | undefined) =>
  (value ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);

/** Runs `jobs` with at most `limit` at once, in order of start. */
async function pool<T, R>(items: T[], limit: number, job: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await job(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/** Progress on stderr: a redrawn bar on a terminal, one line per finished run otherwise. */
function progress(total: number): (line: string) => void {
  let done = 0;
  const tty = Boolean(process.stderr.isTTY);
  return (line) => {
    done++;
    if (tty) {
      const filled = Math.round((done / total) * BAR_WIDTH);
      process.stderr.write(`\r\x1b[K[${"#".repeat(filled)}${"-".repeat(BAR_WIDTH - filled)}] ${done}/${total} ${line}`);
      if (done === total) process.stderr.write("\n");
    } else process.stderr.write(`[${done}/${total}] ${line}\n`);
  };
}

function describeFailure(r: RunRecord): string {
  const lines = [
    `✗ ${r.task} (${r.engine}, ${r.model}, run ${r.repeat}): ${r.error ?? `the check failed (the agent stopped: ${r.reason})`}`,
  ];
  if (r.checkOutput)
    lines.push(
      ...r.checkOutput
        .split("\n")
        .slice(-5)
        .map((l) => `    ${l}`),
    );
  if (r.workspace) lines.push(`    workspace ${r.workspace}`, `    trace     ${r.trace}`);
  return lines.join("\n");
}

async function main(argv: string[]): Promise<number> {
  const opts = parse(argv);
  if (typeof opts === "number") return opts;
  if (opts.replay && opts.offline) throw new Error("--replay and --offline exclude each other: choose one");
  if ((opts.replay || opts.offline) && opts.model)
    throw new Error("--model names a provider's model; it cannot go with --replay or --offline");
  const repeat = positive(opts.repeat, "--repeat");
  const concurrency = positive(opts.concurrency, "--concurrency");
  const engines: EngineName[] = opts.engine === "both" ? [...ENGINES] : [opts.engine];
  const sources: ModelSource[] = opts.replay
    ? [{ kind: "replay" }]
    : opts.offline
      ? [{ kind: "offline" }]
      : list(opts.model).length > 0
        ? list(opts.model).map((model) => ({ kind: "provider" as const, model }))
        : [{ kind: "provider" }];

  // Without a provider the CLI would quietly run the offline model and the table would measure that.
  if (sources[0]!.kind === "provider" && loadSettings({}).provider === "offline") {
    throw new Error(
      "no model provider is configured: set OPENAI_API_KEY (and OPENAI_BASE_URL for a provider other than OpenAI) in the environment or .env, " +
        "or run with --replay (the recorded trajectories) or --offline (the embedded offline model)",
    );
  }
  const all = loadTasks(path.resolve(invocationDirectory(), opts.tasksDir));
  let tasks: Task[] = selectTasks(all, list(opts.tasks));
  if (opts.offline && list(opts.tasks).length === 0) tasks = tasks.filter((t) => t.tags.includes("offline"));
  if (tasks.some((t) => t.network) && !(await registryReachable())) {
    const skipped = tasks.filter((t) => t.network).map((t) => t.name);
    process.stderr.write(
      `The npm registry does not answer (npm ping): skipping ${skipped.join(", ")}, which need it.\n`,
    );
    tasks = tasks.filter((t) => !t.network);
  }
  if (tasks.length === 0) throw new Error("no tasks to run");

  const root = makeRoot();
  process.stderr.write(`Checking that every check fails on its starting workspace (${tasks.length} tasks)…\n`);
  const starting: StartingCheck[] = await pool(tasks, concurrency, (t) => checkStartingWorkspace(t, root));
  const broken = starting.filter((s) => s.broken);
  if (broken.length > 0) {
    for (const b of broken)
      process.stderr.write(
        `✗ task ${b.task} is broken: its check passes on the untouched starting workspace, so it proves nothing.\n`,
      );
    rmSync(root, { recursive: true, force: true });
    return EXIT_HARNESS;
  }

  const jobs = tasks.flatMap((task) =>
    sources.flatMap((source) =>
      engines.flatMap((engine) => Array.from({ length: repeat }, (_, i) => ({ task, engine, source, repeat: i + 1 }))),
    ),
  );
  process.stderr.write(
    `Running ${jobs.length} run${jobs.length === 1 ? "" : "s"} (${tasks.length} tasks × ${engines.join("+")} × ${sources.map(sourceLabel).join("+")} × ${repeat}), ${concurrency} at once, in ${root}\n`,
  );
  const tick = progress(jobs.length);
  const records = await pool(jobs, concurrency, async (job) => {
    const record = await runTask({ ...job, root, keep: opts.keep });
    tick(
      `${record.passed ? "✓" : "✗"} ${record.task} ${record.engine} ${record.model} (${(record.wallMs / 1000).toFixed(1)} s)`,
    );
    return record;
  });

  if (opts.json) {
    const file = path.resolve(invocationDirectory(), opts.json);
    writeFileSync(file, `${JSON.stringify({ root, records }, null, 2)}\n`);
    process.stderr.write(`Wrote ${records.length} run records to ${file}\n`);
  }
  process.stdout.write(`\n${formatSummary(summarize(records))}\n\n${formatPerTask(records)}\n`);
  const failed = records.filter((r) => !r.passed);
  if (failed.length > 0) process.stdout.write(`\n${failed.map(describeFailure).join("\n")}\n`);
  // Passed runs removed their folders; the root stays only when a failed (or --keep) run is in it.
  if (records.every((r) => !r.workspace)) rmSync(root, { recursive: true, force: true });
  if (records.some((r) => r.reason === "harness error")) return EXIT_HARNESS;
  if ((opts.replay || opts.offline) && failed.length > 0) return EXIT_FAILED;
  return EXIT_OK;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`eval: ${(err as Error).message}\n`);
    process.exit(EXIT_HARNESS);
  },
);
