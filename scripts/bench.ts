/**
 * `npm run bench`: orchestration overhead, checkpoint storage, cold start, parallel commands and
 * memory on huge inputs, measured in one run with a zero-latency scripted model and real tools.
 * Prints a table and rewrites BENCHMARKS.md. `--quick` skips the 1 GB measurements.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { measureOverhead, VARIANTS, type OverheadResult, type Variant } from "./bench-overhead.js";
import { generateBigFile, measureColdStart, measureParallelCommands, median, ROOT, runProbe, type ColdStart, type ProbeResult } from "./bench-system.js";

const STEP_COUNTS = [10, 50, 200] as const;
/** Repeats of each overhead measurement; the median is reported. */
const REPEATS = 3;
/** Goals from issue 5/8. */
const GOAL_OVERHEAD_DELTA_MS = 2;
const GOAL_STORAGE_RATIO = 3;
const GOAL_COLD_START_MS = 600;

const f1 = (n: number) => n.toFixed(1);
const mb = (n: number) => `${(n / 1024 / 1024).toFixed(0)} MB`;
const log = (text: string) => process.stderr.write(`${text}\n`);

async function overheadTable(): Promise<Map<string, OverheadResult>> {
  const results = new Map<string, OverheadResult>();
  await measureOverhead("graph", 10); // warm up the JIT and module caches
  for (const steps of STEP_COUNTS) {
    for (const variant of VARIANTS) {
      log(`overhead: ${variant} × ${steps} steps`);
      const runs: OverheadResult[] = [];
      for (let i = 0; i < REPEATS; i++) runs.push(await measureOverhead(variant, steps));
      const mid = median(runs.map((r) => r.perStepMs));
      results.set(`${variant}/${steps}`, runs.find((r) => r.perStepMs === mid)!);
    }
  }
  return results;
}

function machine(): string {
  const cpu = os.cpus()[0]?.model ?? "unknown CPU";
  return `${os.cpus().length} × ${cpu}, ${(os.totalmem() / 1024 ** 3).toFixed(0)} GiB RAM, ${os.type()} ${os.release()}, Node ${process.version}`;
}

interface Report {
  overhead: Map<string, OverheadResult>;
  cold: ColdStart;
  parallel: { one: number; four: number };
  readTail?: ProbeResult & { baseline: ProbeResult };
  flood?: ProbeResult & { baseline: ProbeResult };
}

function render(r: Report): { table: string; markdown: string } {
  const o = (v: Variant, s: number) => r.overhead.get(`${v}/${s}`)!;
  const rows = VARIANTS.map((v) => `| ${v} | ${STEP_COUNTS.map((s) => f1(o(v, s).perStepMs)).join(" | ")} |`);
  const loop200 = o("loop", 200).perStepMs;
  const sqlite200 = o("graph+sqlite", 200);
  const graph200 = o("graph", 200).perStepMs;
  const storageRatio = sqlite200.storageBytes! / sqlite200.transcriptBytes;
  const goals = [
    [`graph per-step overhead within ${GOAL_OVERHEAD_DELTA_MS} ms of the loop at 200 steps (no checkpointer)`, `${f1(graph200 - loop200)} ms`, graph200 - loop200 <= GOAL_OVERHEAD_DELTA_MS],
    [`the same with SQLite checkpoints (the CLI default)`, `${f1(sqlite200.perStepMs - loop200)} ms`, sqlite200.perStepMs - loop200 <= GOAL_OVERHEAD_DELTA_MS],
    [`checkpoint storage ≤ ${GOAL_STORAGE_RATIO}× the transcript after 200 steps`, `${storageRatio.toFixed(2)}×`, storageRatio <= GOAL_STORAGE_RATIO],
    [`time to first model request for npm start < ${GOAL_COLD_START_MS} ms`, `${r.cold.npmStartMs.toFixed(0)} ms`, r.cold.npmStartMs < GOAL_COLD_START_MS],
  ] as const;
  const lines = [
    `## Orchestration overhead per step (ms; wall time minus model and tool time, median of ${REPEATS})`,
    "",
    `| engine | ${STEP_COUNTS.map((s) => `${s} steps`).join(" | ")} |`,
    `|---|${STEP_COUNTS.map(() => "---:").join("|")}|`,
    ...rows,
    "",
    "## Checkpoint storage after a 200-step session",
    "",
    "| store | bytes | × transcript |",
    "|---|---:|---:|",
    `| transcript (JSON of the messages) | ${sqlite200.transcriptBytes} | 1.00 |`,
    `| graph + SQLite (compact checkpointer) | ${sqlite200.storageBytes} | ${storageRatio.toFixed(2)} |`,
    `| loop (JSON file) | ${o("loop", 200).storageBytes} | ${(o("loop", 200).storageBytes! / o("loop", 200).transcriptBytes).toFixed(2)} |`,
    "",
    "## Cold start: launch to first model request (median of 5)",
    "",
    "| command | ms |",
    "|---|---:|",
    `| npm start | ${r.cold.npmStartMs.toFixed(0)} |`,
    `| node dist/cli.bundle.js | ${r.cold.distMs.toFixed(0)} |`,
    `| bare node (launch to exit) | ${r.cold.bareNodeMs.toFixed(0)} |`,
    `| node importing @langchain/langgraph + @langchain/openai (launch to exit) | ${r.cold.importLangChainMs.toFixed(0)} |`,
    "",
    "## Four independent 1-second commands in one model turn",
    "",
    "| commands | wall ms | × one |",
    "|---|---:|---:|",
    `| 1 | ${r.parallel.one.toFixed(0)} | 1.00 |`,
    `| 4 | ${r.parallel.four.toFixed(0)} | ${(r.parallel.four / r.parallel.one).toFixed(2)} |`,
  ];
  if (r.readTail && r.flood) {
    lines.push(
      "",
      "## Huge inputs (each in its own process)",
      "",
      "| measure | time | peak RSS | peak RSS of the same process doing nothing |",
      "|---|---:|---:|---:|",
      `| read_file, last 20 lines of a 1 GB file | ${r.readTail.ms.toFixed(0)} ms | ${mb(r.readTail.peakRssBytes)} | ${mb(r.readTail.baseline.peakRssBytes)} |`,
      `| execute_command printing 1 GB | ${(r.flood.ms / 1000).toFixed(1)} s | ${mb(r.flood.peakRssBytes)} | ${mb(r.flood.baseline.peakRssBytes)} |`,
    );
  }
  lines.push("", "## Goals", "", "| goal | measured | met |", "|---|---:|:---:|", ...goals.map(([g, m, ok]) => `| ${g} | ${m} | ${ok ? "yes" : "no"} |`));
  const table = lines.join("\n");
  const markdown = `# Benchmarks

Measured by \`npm run bench\` on ${new Date().toISOString().slice(0, 10)}, on ${machine()}.
A zero-latency scripted model drives real tools in temporary workspaces; every step is one
\`list_directory\` call, so the numbers isolate what each engine adds around the model and the tools.

${table}

## What the numbers mean

- **Overhead per step** is everything that is neither the model nor a tool: building requests,
  fitting the context, events, and for the graph its channels, reducers and checkpoints.
  "graph" runs without a checkpointer, "graph+memory" with LangGraph's MemorySaver,
  "graph+sqlite" with the CLI's compact SQLite checkpointer, "loop" with its JSON-file memory.
- **Storage**: LangGraph saves the whole state after every node, so the stock SQLite saver grows
  with the square of the session (about 90 MB after 200 steps here). The compact checkpointer
  stores each message once and keeps only the newest checkpoints, so it grows linearly while
  resuming and interrupts work as before.
- **Cold start** is dominated by loading modules, and npm itself adds a few hundred
  milliseconds in front. \`npm start\` runs \`dist/cli.bundle.js\` (the CLI and its JavaScript
  dependencies in one file, built by \`npm run build\`, which \`npm ci\` runs) when it is up to
  date with \`src/\` (tsx otherwise), and the CLI loads the agent only once there is something to
  run. The bundle halves the time to the first request against the unbundled \`dist/cli.js\`.
- **Parallel commands**: tool calls of one model turn run concurrently in both engines.
- **Huge inputs**: \`read_file\` reads windows without loading the file, and command output is
  streamed to a file with only a bounded head and tail in memory.
`;
  return { table, markdown };
}

async function main(): Promise<void> {
  const quick = process.argv.includes("--quick");
  log("building dist/ for the cold-start measurement…");
  execFileSync("npm", ["run", "build", "--silent"], { cwd: ROOT, stdio: "inherit" });
  const overhead = await overheadTable();
  log("cold start…");
  const cold = await measureColdStart();
  log("parallel commands…");
  await measureParallelCommands(1); // warm up: the first command pays for loading the parser and sandbox checks
  const parallel = { one: await measureParallelCommands(1), four: await measureParallelCommands(4) };
  const report: Report = { overhead, cold, parallel };
  if (!quick) {
    const dir = mkdtempSync(path.join(os.tmpdir(), "mini-cursor-big-"));
    try {
      log("generating a 1 GB file…");
      const file = path.join(dir, "big.log");
      const lines = generateBigFile(file);
      log("read_file of its last lines…");
      report.readTail = { ...(await runProbe("read-tail", file, String(lines))), baseline: await runProbe("baseline", dir) };
      rmSync(file);
      log("a command printing 1 GB…");
      report.flood = { ...(await runProbe("flood", dir)), baseline: await runProbe("baseline", dir) };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const { table, markdown } = render(report);
  process.stdout.write(`${table}\n`);
  if (!quick) writeFileSync(path.join(ROOT, "BENCHMARKS.md"), markdown);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`bench: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  },
);
