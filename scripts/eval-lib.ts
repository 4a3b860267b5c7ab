/**
 * The pure half of `npm run eval`: task definitions, what one run's JSON Lines trace says, and
 * the summary table (success rate with a Wilson interval, medians, totals). No processes here.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { z } from "zod";
import type { AgentEvent } from "../src/contracts/events.js";
import { APPROVAL_MODES } from "../src/contracts/modes.js";

/** z for a 95% two-sided interval. */
export const Z_95 = 1.959964;

export const taskSchema = z.object({
  /** What the user asks, passed to the CLI as the task. */
  request: z.string().min(1),
  /** Approval mode of the run (default full-auto: nobody is there to answer). */
  approval: z.enum(APPROVAL_MODES).optional(),
  tags: z.array(z.string()).default([]),
  /** What a good run ends with: the work done, or the request refused (the check decides either way). */
  expect: z.enum(["done", "refused"]).default("done"),
  /** The run needs the npm registry (the runner skips the task when it is unreachable). */
  network: z.boolean().default(false),
  /** Limit for one run of the agent, in milliseconds. */
  timeoutMs: z.number().int().positive().optional(),
  maxSteps: z.number().int().positive().optional(),
  /** A file in the task's folder used as the person's own config (MINI_CURSOR_USER_CONFIG): hooks, MCP servers. */
  userConfig: z.string().min(1).optional(),
  /** A folder in the task's folder used as the person's own slash commands (MINI_CURSOR_COMMANDS_DIR): its `*.md` files. */
  commands: z.string().min(1).optional(),
});

export type TaskSpec = z.infer<typeof taskSchema>;

export interface Task extends TaskSpec {
  name: string;
  /** The task's folder: task.json, workspace/ or setup.sh, check.sh or check.mjs, replay.jsonl. */
  dir: string;
  /** Absolute path of check.sh or check.mjs. */
  check: string;
  /** Absolute path of replay.jsonl, when there is one. */
  replay?: string;
}

/** A task folder that cannot be used, with why. */
export class TaskError extends Error {
  override name = "TaskError";
}

/** Reads one task folder. Throws TaskError saying what is missing or wrong. */
export function loadTask(dir: string): Task {
  const name = path.basename(dir);
  const specFile = path.join(dir, "task.json");
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(specFile, "utf8"));
  } catch (err) {
    throw new TaskError(`task ${name}: cannot read task.json (${(err as Error).message})`);
  }
  const parsed = taskSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new TaskError(`task ${name}: task.json ${issue.path.join(".") || "value"}: ${issue.message}`);
  }
  const check = ["check.sh", "check.mjs"].map((f) => path.join(dir, f)).find((f) => existsSync(f));
  if (!check) throw new TaskError(`task ${name}: has neither check.sh nor check.mjs`);
  if (!existsSync(path.join(dir, "workspace")) && !existsSync(path.join(dir, "setup.sh"))) {
    throw new TaskError(`task ${name}: has neither a workspace/ folder nor setup.sh`);
  }
  if (parsed.data.userConfig && !existsSync(path.join(dir, parsed.data.userConfig)))
    throw new TaskError(
      `task ${name}: task.json names userConfig ${parsed.data.userConfig}, which is not in its folder`,
    );
  if (parsed.data.commands && !existsSync(path.join(dir, parsed.data.commands)))
    throw new TaskError(`task ${name}: task.json names commands ${parsed.data.commands}, which is not in its folder`);
  const replay = path.join(dir, "replay.jsonl");
  return { ...parsed.data, name, dir, check, ...(existsSync(replay) ? { replay } : {}) };
}

/** Every task under `root` (one folder each), sorted by name. */
export function loadTasks(root: string): Task[] {
  return readdirSync(root, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => loadTask(path.join(root, e.name)))
    .sort((a, b) => a.name.localeCompare(b.name));
}

/** The tasks named in `names` (all when empty); throws TaskError naming the unknown ones. */
export function selectTasks(all: Task[], names: string[]): Task[] {
  if (names.length === 0) return all;
  const unknown = names.filter((n) => !all.some((t) => t.name === n));
  if (unknown.length > 0)
    throw new TaskError(`unknown task${unknown.length > 1 ? "s" : ""}: ${unknown.join(", ")} (see evals/tasks/)`);
  return all.filter((t) => names.includes(t.name));
}

/** What one run of the agent on one task came to. */
export interface RunRecord {
  task: string;
  engine: string;
  /** The model as the CLI named it in run_start ("gpt-4o-mini", "replay", "mini-cursor-offline"). */
  model: string;
  /** 1-based repeat number. */
  repeat: number;
  /** The check's verdict. */
  passed: boolean;
  /** The CLI's exit code (null when it was killed). */
  exitCode: number | null;
  /** run_end's reason, or "timeout" / "no run_end" when the CLI did not finish normally. */
  reason: string;
  steps: number;
  toolCalls: number;
  /** Approval questions the run raised (each is declined: nobody is there to answer). */
  approvals: number;
  tokensIn: number;
  tokensOut: number;
  tokensEstimated: boolean;
  /** US dollars, when the model's price is known. */
  cost?: number;
  wallMs: number;
  /** The final answer. */
  finalText: string;
  /** The last lines of the check's output. */
  checkOutput: string;
  error?: string;
  /** Kept for failed runs: the workspace after the run and the JSON Lines trace. */
  workspace?: string;
  trace?: string;
}

/** The measures read from a run's `--json` output. */
export interface TraceSummary {
  model?: string;
  reason?: string;
  steps: number;
  toolCalls: number;
  approvals: number;
  tokensIn: number;
  tokensOut: number;
  tokensEstimated: boolean;
  cost?: number;
  finalText: string;
  error?: string;
}

/** Reads a `--json` event stream; lines that are not events are skipped. */
export function summarizeTrace(jsonl: string): TraceSummary {
  const summary: TraceSummary = {
    steps: 0,
    toolCalls: 0,
    approvals: 0,
    tokensIn: 0,
    tokensOut: 0,
    tokensEstimated: false,
    finalText: "",
  };
  for (const line of jsonl.split("\n")) {
    if (!line.trim().startsWith("{")) continue;
    let event: AgentEvent;
    try {
      event = JSON.parse(line) as AgentEvent;
    } catch {
      continue;
    }
    switch (event.type) {
      case "run_start":
        summary.model = event.model;
        break;
      case "tool_call":
        summary.toolCalls++;
        break;
      case "approval":
        summary.approvals++;
        break;
      case "final":
        summary.finalText = event.text;
        break;
      case "error":
        summary.error = event.message;
        break;
      case "run_end":
        summary.reason = event.reason;
        summary.steps = event.steps;
        summary.toolCalls = event.toolCalls;
        summary.tokensIn = event.usage.input;
        summary.tokensOut = event.usage.output;
        summary.tokensEstimated = event.usage.estimated;
        if (event.usage.cost !== undefined) summary.cost = event.usage.cost;
        break;
      default:
        break;
    }
  }
  return summary;
}

/** Wilson score interval for `successes` out of `n` (0..1 both ends); [0, 1] when n is 0. */
export function wilson(successes: number, n: number, z = Z_95): [number, number] {
  if (n === 0) return [0, 1];
  const p = successes / n;
  const z2 = z * z;
  const centre = (p + z2 / (2 * n)) / (1 + z2 / n);
  const half = (z / (1 + z2 / n)) * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n));
  return [Math.max(0, centre - half), Math.min(1, centre + half)];
}

export function median(values: number[]): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** One row of the summary: every run of one engine with one model. */
export interface SummaryRow {
  engine: string;
  model: string;
  runs: number;
  passed: number;
  rate: number;
  low: number;
  high: number;
  medianTokensIn: number;
  medianTokensOut: number;
  tokensEstimated: boolean;
  /** Total US dollars, undefined when no run had a known price. */
  cost?: number;
  medianWallMs: number;
  medianToolCalls: number;
  approvals: number;
}

/** Groups runs by engine and model, in the order they first appear. */
export function summarize(records: RunRecord[]): SummaryRow[] {
  const groups = new Map<string, RunRecord[]>();
  for (const r of records) {
    const key = `${r.engine}\u0000${r.model}`;
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  return [...groups.values()].map((runs) => {
    const passed = runs.filter((r) => r.passed).length;
    const [low, high] = wilson(passed, runs.length);
    const costs = runs.map((r) => r.cost).filter((c): c is number => c !== undefined);
    return {
      engine: runs[0]!.engine,
      model: runs[0]!.model,
      runs: runs.length,
      passed,
      rate: passed / runs.length,
      low,
      high,
      medianTokensIn: median(runs.map((r) => r.tokensIn)),
      medianTokensOut: median(runs.map((r) => r.tokensOut)),
      tokensEstimated: runs.some((r) => r.tokensEstimated),
      ...(costs.length > 0 ? { cost: costs.reduce((a, b) => a + b, 0) } : {}),
      medianWallMs: median(runs.map((r) => r.wallMs)),
      medianToolCalls: median(runs.map((r) => r.toolCalls)),
      approvals: runs.reduce((a, r) => a + r.approvals, 0),
    };
  });
}

const percent = (x: number) => `${Math.round(x * 100)}%`;
const tokens = (n: number) =>
  n >= 10_000 ? `${(n / 1000).toFixed(0)}k` : n >= 1000 ? `${(n / 1000).toFixed(1)}k` : String(Math.round(n));
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const dollars = (usd: number | undefined) =>
  usd === undefined ? "—" : usd < 0.01 ? `$${usd.toFixed(4)}` : `$${usd.toFixed(2)}`;
const count = (n: number) => (Number.isInteger(n) ? String(n) : n.toFixed(1));

/** Columns: label left-aligned, numbers right-aligned, three spaces apart. */
function table(header: string[], body: string[][], left = 2): string {
  const widths = header.map((_, i) => Math.max(...[header, ...body].map((row) => row[i]!.length)));
  const fmt = (row: string[]) =>
    row
      .map((cell, i) => (i < left ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!)))
      .join("   ")
      .trimEnd();
  return [fmt(header), ...body.map(fmt)].join("\n");
}

/** The summary table, one row per engine and model (see evals/README.md for the columns). */
export function formatSummary(rows: SummaryRow[]): string {
  const header = [
    "engine",
    "model",
    "success",
    "95% CI",
    "tokens in",
    "tokens out",
    "cost",
    "wall",
    "tool calls",
    "approvals",
  ];
  const body = rows.map((r) => [
    r.engine,
    r.model,
    `${r.passed}/${r.runs} ${percent(r.rate)}`,
    `${percent(r.low)}–${percent(r.high)}`,
    `${tokens(r.medianTokensIn)}${r.tokensEstimated ? "~" : ""}`,
    `${tokens(r.medianTokensOut)}${r.tokensEstimated ? "~" : ""}`,
    dollars(r.cost),
    seconds(r.medianWallMs),
    count(r.medianToolCalls),
    String(r.approvals),
  ]);
  return table(header, body);
}

/** Task by task: passes out of runs for each engine and model, so a failing task stands out. */
export function formatPerTask(records: RunRecord[]): string {
  const columns = [...new Set(records.map((r) => `${r.engine}/${r.model}`))];
  const tasks = [...new Set(records.map((r) => r.task))];
  const body = tasks.map((task) => [
    task,
    ...columns.map((col) => {
      const runs = records.filter((r) => r.task === task && `${r.engine}/${r.model}` === col);
      const passed = runs.filter((r) => r.passed).length;
      return runs.length === 0 ? "—" : `${passed === runs.length ? "✓" : "✗"} ${passed}/${runs.length}`;
    }),
  ]);
  return table(["task", ...columns], body, 1);
}
