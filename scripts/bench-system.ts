import { configureParts } from "../src/app/configure.js";
import { spawn } from "node:child_process";
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { MemorySaver } from "@langchain/langgraph";
import { createGraph, type GraphSettings } from "../src/graph/graph.js";
import { createGraphEngine } from "../src/graph/engine.js";
import { createTools } from "../src/tools/index.js";
import { startOpenAIServer } from "../__tests__/helpers/openai-server.js";
import { BenchModel } from "./bench-lib.js";

// As the CLI does at start: each part of mini-cursor this script uses gets its slice of the settings.
configureParts();

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const ONE_GB = 1024 * 1024 * 1024;

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** Environment for child processes: no provider or colour settings inherited from the shell. */
export function cleanEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const key of Object.keys(env)) if (key.startsWith("OPENAI_") || key.startsWith("MINI_CURSOR_")) delete env[key];
  return { ...env, NO_COLOR: "1", MINI_CURSOR_DOTENV: "off", ...extra };
}

function runToExit(
  cmd: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  cwd = ROOT,
): Promise<{ code: number | null; stdout: string }> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd, env, stdio: ["ignore", "pipe", "ignore"] });
    let stdout = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.on("close", (code) => resolve({ code, stdout }));
  });
}

/** Milliseconds from spawning a process to the first model request it sends. */
async function timeToFirstRequest(cmd: string, args: string[], runs: number): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    let firstAt = 0;
    const server = await startOpenAIServer([{ content: "hello" }], {
      onRequest: () => {
        firstAt ||= performance.now();
      },
    });
    const workspace = mkdtempSync(path.join(os.tmpdir(), "mini-cursor-cold-"));
    const started = performance.now();
    await runToExit(
      cmd,
      [...args, "--workspace", workspace, "--json", "say hello"],
      cleanEnv({ OPENAI_BASE_URL: server.url, OPENAI_API_KEY: "bench" }),
    );
    await server.close();
    rmSync(workspace, { recursive: true, force: true });
    if (!firstAt) throw new Error(`${cmd} ${args.join(" ")} sent no model request`);
    times.push(firstAt - started);
  }
  return median(times);
}

async function timeToExit(cmd: string, args: string[], runs: number): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    await runToExit(cmd, args, cleanEnv());
    times.push(performance.now() - started);
  }
  return median(times);
}

export interface ColdStart {
  npmStartMs: number;
  distMs: number;
  bareNodeMs: number;
  importLangChainMs: number;
}

export async function measureColdStart(runs = 5): Promise<ColdStart> {
  return {
    npmStartMs: await timeToFirstRequest("npm", ["start", "--silent", "--"], runs),
    distMs: await timeToFirstRequest(process.execPath, [path.join(ROOT, "dist", "cli.bundle.cjs")], runs),
    bareNodeMs: await timeToExit(process.execPath, ["-e", "0"], runs),
    importLangChainMs: await timeToExit(
      process.execPath,
      ["--input-type=module", "-e", "await import('@langchain/langgraph'); await import('@langchain/openai');"],
      runs,
    ),
  };
}

/**
 * Wall time of one model turn asking for `count` independent `sleep 1` commands. With
 * `afterFirstStep`, the session first runs a step of one command (`true`) and only the second
 * step is timed: what a busy turn costs in a session, without the first command's and the first
 * snapshot's one-time costs, which have goals of their own.
 */
export async function measureParallelCommands(count: number, afterFirstStep = false): Promise<number> {
  const workspace = mkdtempSync(path.join(os.tmpdir(), "mini-cursor-par-"));
  try {
    const settings: GraphSettings = {
      workspace,
      model: "bench",
      provider: "offline",
      requestTimeoutMs: 10_000,
      maxRetries: 0,
      approval: "full-auto",
      maxSteps: 5,
      contextTokens: 1_000_000,
    };
    const timed = afterFirstStep ? 2 : 1;
    const model = new BenchModel(timed + 1, (step) =>
      step < timed
        ? [{ name: "execute_command", args: { command: "true" } }]
        : Array.from({ length: count }, (_, i) => ({
            name: "execute_command",
            args: { command: `sleep 1; echo ${i}` },
          })),
    );
    const graph = createGraph(settings, { model, tools: createTools({ workspace }), checkpointer: new MemorySaver() });
    const engine = createGraphEngine({
      graph,
      meta: { engine: "graph", model: "bench", provider: "offline", workspace },
      modelSettings: settings,
      approval: "full-auto",
      maxSteps: 5,
    });
    let toolWindow: [number, number] = [Infinity, 0];
    await engine.run({
      task: "sleep",
      threadId: "p",
      approver: async () => ({ decision: "approve" }),
      emit: (e) => {
        const now = performance.now();
        if ("step" in e && e.step !== timed) return;
        if (e.type === "tool_call") toolWindow = [Math.min(toolWindow[0], now), toolWindow[1]];
        if (e.type === "tool_result") toolWindow = [toolWindow[0], Math.max(toolWindow[1], now)];
      },
    });
    return toolWindow[1] - toolWindow[0];
  } finally {
    rmSync(workspace, { recursive: true, force: true });
  }
}

/** A file of about 1 GB of numbered 100-byte lines, written in 1 MB blocks. */
export function generateBigFile(file: string): number {
  const fd = openSync(file, "w");
  const lineLength = 100;
  const linesPerBlock = 10_000;
  let line = 0;
  let written = 0;
  try {
    while (written < ONE_GB) {
      let block = "";
      for (let i = 0; i < linesPerBlock; i++) block += `line ${++line} `.padEnd(lineLength - 1, ".") + "\n";
      written += writeSync(fd, block);
    }
  } finally {
    closeSync(fd);
  }
  return line;
}

export interface ProbeResult {
  ms: number;
  peakRssBytes: number;
  baselineRssBytes: number;
  detail: string;
}

/** Runs scripts/bench-probe.ts in a fresh process so its peak memory is its own. */
export async function runProbe(kind: "read-tail" | "flood" | "baseline", ...args: string[]): Promise<ProbeResult> {
  const { stdout, code } = await runToExit(
    process.execPath,
    ["--import", "tsx", path.join(ROOT, "scripts", "bench-probe.ts"), kind, ...args],
    cleanEnv(),
  );
  const line = stdout.trim().split("\n").at(-1) ?? "";
  if (code !== 0) throw new Error(`bench probe ${kind} failed (exit ${code}): ${line}`);
  return JSON.parse(line) as ProbeResult;
}
