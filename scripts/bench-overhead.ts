import { configureParts } from "../src/app/configure.js";
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { MemorySaver, type BaseCheckpointSaver } from "@langchain/langgraph";
import type { Engine } from "../src/agent/engine.js";
import type { AgentEvent } from "../src/contracts/events.js";
import { createRuntime } from "../src/agent/runtime.js";
import { createGraph, type GraphSettings } from "../src/graph/graph.js";
import { createGraphEngine } from "../src/graph/engine.js";
import { createLoopEngine } from "../src/loop/loop.js";
import { loadLoopThread } from "../src/memory/loop-threads.js";
import { createSqliteCheckpointer } from "../src/memory/checkpointer.js";
import { stateDirFor } from "../src/memory/state-dir.js";
import { createTools } from "../src/tools/index.js";
import { BenchModel } from "./bench-lib.js";

// As the CLI does at start: each part of mini-cursor this script uses gets its slice of the settings.
configureParts();

export type Variant = "loop" | "graph" | "graph+memory" | "graph+sqlite";
export const VARIANTS: Variant[] = ["loop", "graph", "graph+memory", "graph+sqlite"];

export interface OverheadResult {
  variant: Variant;
  steps: number;
  wallMs: number;
  modelMs: number;
  toolMs: number;
  /** (wall - model - tools) / steps */
  perStepMs: number;
  /** Bytes on disk for the saved thread (SQLite file or loop JSON), when it has one. */
  storageBytes?: number;
  /** JSON size of the conversation itself. */
  transcriptBytes: number;
}

function workspaceWithFiles(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), "mini-cursor-bench-"));
  for (let i = 0; i < 20; i++) writeFileSync(path.join(dir, `file-${i}.txt`), `line ${i}\n`.repeat(10));
  return dir;
}

function dirBytes(dir: string): number {
  let total = 0;
  for (const name of readdirSync(dir)) {
    const p = path.join(dir, name);
    const st = statSync(p);
    total += st.isDirectory() ? dirBytes(p) : st.size;
  }
  return total;
}

export async function measureOverhead(variant: Variant, steps: number): Promise<OverheadResult> {
  const workspace = workspaceWithFiles();
  try {
    const settings: GraphSettings = {
      workspace,
      model: "bench",
      provider: "offline",
      requestTimeoutMs: 10_000,
      maxRetries: 0,
      approval: "full-auto",
      maxSteps: steps + 1,
      contextTokens: 10_000_000,
    };
    // Alternating spellings of the root keep the loop guard (identical calls in a row) out of it.
    const model = new BenchModel(steps, (step) => [
      { name: "list_directory", args: { directoryPath: step % 2 ? "." : "./" } },
    ]);
    const tools = createTools({ workspace });
    const meta = { engine: variant, model: "bench", provider: "offline", workspace };
    let engine: Engine;
    let checkpointer: BaseCheckpointSaver | undefined;
    let graph: ReturnType<typeof createGraph> | undefined;
    if (variant === "loop") {
      engine = createLoopEngine({
        runtime: { ...createRuntime(settings, { model, tools }), workspace },
        meta,
        modelSettings: settings,
      });
    } else {
      checkpointer =
        variant === "graph+memory"
          ? new MemorySaver()
          : variant === "graph+sqlite"
            ? createSqliteCheckpointer(workspace)
            : undefined;
      graph = createGraph(settings, { model, tools, checkpointer });
      engine = createGraphEngine({ graph, meta, modelSettings: settings, approval: "full-auto", maxSteps: steps + 1 });
    }
    let toolMs = 0;
    const emit = (e: AgentEvent) => {
      if (e.type === "tool_result") toolMs += e.durationMs;
    };
    const started = performance.now();
    const summary = await engine.run({
      task: "bench",
      threadId: "bench",
      emit,
      approver: async () => ({ decision: "approve" }),
    });
    const wallMs = performance.now() - started;
    if (summary.reason !== "done" || summary.steps !== steps)
      throw new Error(`${variant}: ${summary.reason} after ${summary.steps} steps`);

    let transcript: unknown[] = [];
    let storageBytes: number | undefined;
    if (variant === "loop") {
      transcript = loadLoopThread(workspace, "bench").messages;
      storageBytes = dirBytes(path.join(stateDirFor(workspace), "loop-threads"));
    } else if (graph && checkpointer) {
      transcript = (await graph.getState({ configurable: { thread_id: "bench" } })).values.messages;
      if (variant === "graph+sqlite") {
        (checkpointer as unknown as { db: { close(): void } }).db.close();
        const stateDir = stateDirFor(workspace);
        storageBytes = readdirSync(stateDir)
          .filter((f) => f.startsWith("state.sqlite"))
          .reduce((sum, f) => sum + statSync(path.join(stateDir, f)).size, 0);
      }
    }
    const transcriptBytes = Buffer.byteLength(JSON.stringify(transcript));
    return {
      variant,
      steps,
      wallMs,
      modelMs: model.modelMs,
      toolMs,
      perStepMs: (wallMs - model.modelMs - toolMs) / steps,
      storageBytes,
      transcriptBytes,
    };
  } finally {
    rmSync(workspace, { recursive: true, force: true });
  }
}
