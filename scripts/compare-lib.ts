import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";

export type Interval = [number, number];

/** Total time covered by possibly overlapping intervals (concurrent tools count once). */
export function unionMs(intervals: Interval[]): number {
  const sorted = [...intervals].sort((a, b) => a[0] - b[0]);
  if (sorted.length === 0) return 0;
  let total = 0;
  let [start, end] = sorted[0]!;
  for (const [s, e] of sorted.slice(1)) {
    if (s > end) {
      total += end - start;
      [start, end] = [s, e];
    } else end = Math.max(end, e);
  }
  return total + (end - start);
}

/** Lines of code in a folder's .ts files (but those in `skip`): not blank, not comment-only. */
export function linesOfCode(dir: string, skip: readonly string[] = []): number {
  let total = 0;
  for (const name of readdirSync(dir)) {
    if (!name.endsWith(".ts") || skip.includes(name)) continue;
    let inBlock = false;
    for (const raw of readFileSync(path.join(dir, name), "utf8").split("\n")) {
      const line = raw.trim();
      if (inBlock) {
        if (line.includes("*/")) inBlock = false;
        continue;
      }
      if (line === "" || line.startsWith("//")) continue;
      if (line.startsWith("/*")) {
        inBlock = !line.includes("*/");
        continue;
      }
      total++;
    }
  }
  return total;
}

export interface EngineResult {
  engine: string;
  outcome: string;
  steps: number;
  modelCalls: number;
  toolCalls: number;
  /** `task` calls (sub-agents started) and the tool calls their sub-agents made (not in toolCalls). */
  subagents: number;
  subagentToolCalls: number;
  tokensIn: number;
  tokensOut: number;
  tokensEstimated: boolean;
  wallMs: number;
  modelMs: number;
  toolMs: number;
  orchestrationMs: number;
  peakRssBytes: number;
  linesOfCode: number;
  finalText: string;
  error?: string;
}

const ms = (n: number) => `${n.toFixed(n < 10 ? 1 : 0)} ms`;
const mb = (n: number) => `${(n / 1024 / 1024).toFixed(0)} MB`;

/** The side-by-side table: one row per measure, one column per engine. */
export function formatComparison(results: EngineResult[]): string {
  const rows: Array<[string, (r: EngineResult) => string]> = [
    ["outcome", (r) => r.outcome],
    ["steps", (r) => String(r.steps)],
    ["model calls", (r) => String(r.modelCalls)],
    ["tool calls", (r) => String(r.toolCalls)],
    ["sub-agents (their tool calls)", (r) => `${r.subagents} (${r.subagentToolCalls})`],
    ["tokens in / out", (r) => `${r.tokensIn} / ${r.tokensOut}${r.tokensEstimated ? " (est.)" : ""}`],
    ["wall time", (r) => ms(r.wallMs)],
    ["  model", (r) => ms(r.modelMs)],
    ["  tools", (r) => ms(r.toolMs)],
    ["  orchestration", (r) => ms(r.orchestrationMs)],
    ["peak memory (RSS)", (r) => mb(r.peakRssBytes)],
    ["engine lines of code", (r) => String(r.linesOfCode)],
  ];
  const header = ["", ...results.map((r) => r.engine)];
  const body = rows.map(([label, get]) => [label, ...results.map(get)]);
  const widths = header.map((_, i) => Math.max(...[header, ...body].map((row) => row[i]!.length)));
  const fmt = (row: string[]) =>
    row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join("   ");
  return [fmt(header), ...body.map(fmt)].join("\n");
}
