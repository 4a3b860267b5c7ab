import { configureParts } from "../src/app/configure.js";
/**
 * Scale measurements of long sessions and busy steps (issue 30, goals 4, 5 and 6): compaction
 * with a 16k window over hundreds of steps, peak memory and stored thread at 200 and 2000 steps,
 * and 20 × `sleep 1` in one turn beside the same sleeps in a shell.
 */
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { SUMMARY_PROMPT } from "../src/context/compaction.js";
import { spawnHelperReady } from "../src/workspace/process-spawner.js";
import type { ChatRequest } from "../__tests__/helpers/openai-server.js";
import { measureParallelCommands } from "./bench-system.js";
import { benchCliArgs, benchCliEnv } from "./bench-scale-cli.js";
import { startBenchServer } from "./bench-server.js";
import { timeCommand, within, type ScaleContext, type ScaleMeasurement, type ScaleRow } from "./bench-scale-lib.js";

// As the CLI does at start: each part of mini-cursor this script uses gets its slice of the settings.
configureParts();

/** Issue 30's goals. */
const GOAL_STEPS_BETWEEN_COMPACTIONS = 20;
const GOAL_AFTER_SHARE = 0.5;
const GOAL_RSS_RATIO = 1.2;
const GOAL_PARALLEL_MS = 1_500;
/** The small window of the issue (a local model's). */
const SMALL_WINDOW = 16_000;
const PARALLEL_SLEEPS = 20;
/** Files the scripted session reads in turn (a different one each step, so the loop guard stays quiet). */
const SESSION_FILES = 50;
/** The stored thread may grow at most this much more than what was said (10% for noise). */
const GOAL_STORED_VS_SAID = 1.1;

const sessionSteps = (ctx: ScaleContext) =>
  ctx.quick ? { short: 50, long: 500, compaction: 150 } : { short: 200, long: 2_000, compaction: 400 };

/** What a provider would count: the request's JSON, messages and tool schemas, at 4 characters a token. */
const providerCount = (request: ChatRequest) =>
  Math.ceil((JSON.stringify(request.messages).length + JSON.stringify(request.tools ?? []).length) / 4);
const isSummary = (request: ChatRequest) => request.messages[0]?.content === SUMMARY_PROMPT;

interface Session {
  steps: number;
  peakRssMb: number;
  /** Model requests in order: summary or not, and the provider's count of each. */
  requests: { summary: boolean; tokens: number }[];
  compactions: { tokensBefore: number; tokensAfter: number }[];
  /** Bytes of the workspace's state folder after the run, and of every message said in it. */
  storedBytes: number;
  saidBytes: number;
}

/** Peak resident memory of a running process so far (VmHWM), in MB; 0 once it is gone. */
function peakRssMb(pid: number): number {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

function folderBytes(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    total += entry.isDirectory() ? folderBytes(p) : statSync(p).size;
  }
  return total;
}

/** One CLI session of `steps` read_file steps with a 16k window against the scripted server. */
export async function runSession(steps: number, engine: string): Promise<Session> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "mini-cursor-bench-steps-"));
  const workspace = path.join(dir, "ws");
  const stateHome = path.join(dir, "state");
  mkdirSync(workspace);
  for (let i = 0; i < SESSION_FILES; i++)
    writeFileSync(path.join(workspace, `f${i}.txt`), `line ${i} of a file the session reads\n`.repeat(12));
  const requests: Session["requests"] = [];
  let said = 0;
  let done = 0;
  const server = await startBenchServer((request) => {
    const tokens = providerCount(request);
    requests.push({ summary: isSummary(request), tokens });
    const usage = { prompt_tokens: tokens, completion_tokens: 20 };
    if (isSummary(request))
      return { content: `Read files f0..f${SESSION_FILES - 1} in turn; all fine. Open: go on.`, usage };
    said += JSON.stringify(request.messages.at(-1) ?? "").length;
    done++;
    return done <= steps
      ? {
          content: `step ${done}`,
          toolCalls: [{ name: "read_file", args: { filePath: `f${done % SESSION_FILES}.txt` } }],
          usage,
        }
      : { content: "All read.", usage };
  });
  try {
    const child = spawn(
      process.execPath,
      benchCliArgs({
        entry: path.join("dist", "cli.bundle.cjs"),
        workspace,
        engine,
        maxSteps: steps + 5,
        task: "read the files one by one",
      }),
      {
        cwd: workspace,
        env: benchCliEnv(server.url, {
          MINI_CURSOR_CONTEXT_TOKENS: String(SMALL_WINDOW),
          MINI_CURSOR_STATE_HOME: stateHome,
        }),
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    let peak = 0;
    const poll = setInterval(() => (peak = Math.max(peak, peakRssMb(child.pid!))), 50);
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    clearInterval(poll);
    if (code !== 0) throw new Error(`${engine} session of ${steps} steps: exit ${code}: ${stderr.slice(0, 300)}`);
    const events = stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { type: string; tokensBefore?: number; tokensAfter?: number });
    return {
      steps,
      peakRssMb: peak,
      requests,
      compactions: events
        .filter((e) => e.type === "compaction")
        .map((e) => ({ tokensBefore: e.tokensBefore!, tokensAfter: e.tokensAfter! })),
      storedBytes: folderBytes(stateHome),
      saidBytes: said,
    };
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Rows of compaction with a 16k window: how often, how far down, and whether the trace tells the truth. */
function compactionRows(s: Session, engine: string): ScaleRow[] {
  const at = s.requests.flatMap((r, i) => (r.summary ? [i] : []));
  const gaps = at.slice(1).map((i, k) => i - at[k]! - 1);
  const minGap = gaps.length ? Math.min(...gaps) : s.steps;
  const afters = at.map((i) => s.requests[i + 1]?.tokens ?? 0);
  const worstAfter = Math.max(0, ...afters);
  const misreport = Math.max(
    0,
    ...s.compactions.map((c, k) => Math.abs(c.tokensAfter - (afters[k] ?? 0)) / (afters[k] || 1)),
  );
  const label = `${engine}, ${s.steps} steps, MINI_CURSOR_CONTEXT_TOKENS=${SMALL_WINDOW}`;
  return [
    {
      goal: `compaction at most once every ${GOAL_STEPS_BETWEEN_COMPACTIONS} steps (${label})`,
      measured: `${at.length} summaries, ≥ ${minGap} steps apart`,
      raw: "",
      ratio: GOAL_STEPS_BETWEEN_COMPACTIONS / Math.max(1, minGap),
      met: minGap >= GOAL_STEPS_BETWEEN_COMPACTIONS && at.length > 0,
    },
    {
      goal: `each compaction brings the request under ${GOAL_AFTER_SHARE * 100}% of the budget, as the provider counts it (${engine})`,
      measured: `≤ ${worstAfter} tokens`,
      raw: `budget ${SMALL_WINDOW}`,
      ratio: worstAfter / (SMALL_WINDOW * GOAL_AFTER_SHARE),
      met: worstAfter < SMALL_WINDOW * GOAL_AFTER_SHARE,
    },
    {
      goal: `the trace's "after" is the request really sent next, within 10% (${engine})`,
      measured: `worst ${(misreport * 100).toFixed(1)}% off`,
      raw: "",
      ratio: misreport / 0.1,
      met: misreport <= 0.1 && s.compactions.length === at.length,
    },
  ];
}

const longSessions: ScaleMeasurement = {
  name: "long sessions with a 16k window: compaction, memory and the stored thread",
  async run(_fx, ctx) {
    const { short, long, compaction } = sessionSteps(ctx);
    const rows: ScaleRow[] = [];
    ctx.log(`scale: loop engine, ${compaction} steps…`);
    rows.push(...compactionRows(await runSession(compaction, "loop"), "loop"));
    ctx.log(`scale: graph engine, ${short} and ${long} steps…`);
    const a = await runSession(short, "graph");
    const b = await runSession(long, "graph");
    rows.push(...compactionRows(b, "graph"));
    // The CLI's own high-water mark (VmHWM), not this process's: the scripted server and the
    // fixture live here. Its live heap is flat with a bounded context; what made the long run's
    // peak higher was the old generation filling with garbage before each full collection
    // (src/app/heap-growth.ts bounds that).
    rows.push(
      within(
        `peak RSS at ${long} steps ≤ ${GOAL_RSS_RATIO}× that at ${short} (graph, context bounded)`,
        b.peakRssMb / a.peakRssMb,
        GOAL_RSS_RATIO,
        `${a.peakRssMb.toFixed(0)} MB → ${b.peakRssMb.toFixed(0)} MB`,
        "×",
      ),
    );
    // What the state folder gained from the short run to the long one, against what was said in between.
    const storedGrowth = (b.storedBytes - a.storedBytes) / Math.max(1, b.saidBytes - a.saidBytes);
    rows.push(
      within(
        `the stored thread grows by what was said (graph, ${short} → ${long} steps)`,
        storedGrowth,
        GOAL_STORED_VS_SAID,
        `${(a.storedBytes / 1024).toFixed(0)} KB → ${(b.storedBytes / 1024).toFixed(0)} KB stored; ${((b.saidBytes - a.saidBytes) / 1024).toFixed(0)} KB said`,
        "× said",
      ),
    );
    return rows;
  },
};

const parallelSleeps: ScaleMeasurement = {
  name: `${PARALLEL_SLEEPS} × sleep 1 in one turn`,
  async run(fx) {
    await measureParallelCommands(1); // the first command of the process pays for loading the parser
    // A session's second step comes after a model turn (hundreds of ms), by which time the spawn
    // helpers its first command started are ready; the scripted model here answers at once.
    await spawnHelperReady();
    // Timed as a session's second step: the first command and the first snapshot have rows of their own.
    const ours = await measureParallelCommands(PARALLEL_SLEEPS, true);
    const raw = await timeCommand(
      "sh",
      ["-c", `for i in $(seq ${PARALLEL_SLEEPS}); do sleep 1 & done; wait`],
      fx.repo,
      1,
      [0],
    );
    return [
      within(
        `${PARALLEL_SLEEPS} × sleep 1 in one turn takes ≤ ${GOAL_PARALLEL_MS} ms of step (graph, in process, a session's second step)`,
        ours,
        GOAL_PARALLEL_MS,
        `${PARALLEL_SLEEPS} background sleeps in sh: ${raw.toFixed(0)} ms`,
      ),
    ];
  },
};

export const STEP_MEASUREMENTS: readonly ScaleMeasurement[] = [parallelSleeps, longSessions];
