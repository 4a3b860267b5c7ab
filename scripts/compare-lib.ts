import { readFileSync } from "node:fs";
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

/** Lines of code in .ts files: not blank, not comment-only. */
export function linesOfCode(files: readonly string[]): number {
  let total = 0;
  for (const file of files) {
    let inBlock = false;
    for (const raw of readFileSync(file, "utf8").split("\n")) {
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

/**
 * What each engine is made of, one concern a row: what LangGraph gives the graph engine, and the
 * files (under src/) each engine writes by hand for it. Each file is listed once, in the row of
 * what most of it does; what both engines share (agent/, guard/, tools/, the approval decision,
 * the model turn) is in neither column.
 */
export const ENGINE_PARTS: ReadonlyArray<{
  concern: string;
  langgraph: string;
  graph: string[];
  loop: string[];
  /** What an empty cell says. */
  none?: { graph?: string; loop?: string };
}> = [
  {
    concern: "control flow: the model, then the tools, until an answer",
    langgraph: "`StateGraph`, conditional edges, `Send`, `Command`",
    graph: ["graph/graph.ts", "graph/routing.ts", "graph/state.ts", "graph/nodes.ts"],
    loop: ["loop/loop.ts"],
  },
  {
    concern: "running a turn's calls: in parallel, results in order",
    langgraph: "`ToolNode`",
    graph: [],
    loop: [],
    none: { graph: "`ToolNode` (built in `graph/graph.ts`)" },
  },
  {
    concern: "pausing for the person's approval and resuming",
    langgraph: "`interrupt()`, resume with `Command`",
    graph: [],
    loop: [],
    none: {
      graph: "`interrupt()` (called in `graph/nodes.ts`)",
      loop: "in `loop/loop.ts`: it asks the terminal itself",
    },
  },
  {
    concern: "memory: saving the conversation, resuming it",
    langgraph: "`BaseCheckpointSaver` (ours stores each message once)",
    graph: ["memory/compact-saver.ts"],
    loop: ["memory/loop-threads.ts"],
  },
  {
    concern: "going back: /undo, /rewind, time travel",
    langgraph: "checkpoint history, forking from a checkpoint",
    graph: ["graph/rewind.ts"],
    loop: ["loop/rewind.ts"],
  },
  {
    concern: "sub-agents",
    langgraph: "a compiled graph as a subgraph",
    graph: ["graph/subagent.ts"],
    loop: ["loop/subagents.ts"],
  },
  {
    concern: "a run: streaming its events, stopping it, closing a cut-off turn",
    langgraph: "`stream()` with its modes, `recursionLimit`",
    graph: ["graph/engine.ts", "graph/stream-chunks.ts", "graph/node-signals.ts", "graph/run-config.ts"],
    loop: [],
  },
  {
    concern: "LangGraph Studio: the graph drawn, runs, state, approvals",
    langgraph: "`langgraph.json`, the dev server, the configuration schema",
    graph: ["graph/config.ts", "graph/studio-secret.ts"],
    loop: [],
    none: { loop: "none: the loop has no Studio" },
  },
];

/** Every file ENGINE_PARTS names for `engine`, absolute. */
export function engineFiles(root: string, engine: "graph" | "loop"): string[] {
  return ENGINE_PARTS.flatMap((part) => part[engine].map((file) => path.join(root, "src", file)));
}

/** ENGINE_PARTS as a Markdown table, each file with its lines of code, and each engine's total. */
export function formatEngineParts(root: string): string {
  const cell = (files: string[], none = "in `loop/loop.ts`") =>
    files.length === 0
      ? none
      : files.map((file) => `\`${file}\` ${linesOfCode([path.join(root, "src", file)])}`).join(", ");
  const total = (engine: "graph" | "loop") => linesOfCode(engineFiles(root, engine));
  return [
    "| concern | LangGraph gives the graph | the graph's own code (lines) | the loop's own code (lines) |",
    "|---|---|---|---|",
    ...ENGINE_PARTS.map(
      (part) =>
        `| ${part.concern} | ${part.langgraph} | ${cell(part.graph, part.none?.graph)} | ${cell(part.loop, part.none?.loop)} |`,
    ),
    `| **total** | | **${total("graph")}** | **${total("loop")}** |`,
  ].join("\n");
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
