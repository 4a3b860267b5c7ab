import { configureParts } from "../../src/app/configure.js";
import { readFileSync, existsSync } from "node:fs";
import path from "node:path";
import { MemorySaver } from "@langchain/langgraph";
import type { Engine, RunSummary } from "../../src/agent/engine.js";
import type { AgentEvent } from "../../src/contracts/events.js";
import { createRuntime } from "../../src/agent/runtime.js";
import { createGraph, type GraphSettings } from "../../src/graph/graph.js";
import { createGraphEngine } from "../../src/graph/engine.js";
import { createLoopEngine } from "../../src/loop/loop.js";
import { inMemoryLoopThreads } from "./engine-harness.js";
import { createTools } from "../../src/tools/index.js";
import { startOpenAIServer, type ChatRequest, type OpenAIServer, type Script } from "./openai-server.js";
import { makeTempDir } from "./tmp.js";
import { QUIET_WAITS_MS } from "./cli.js";

// As the CLI does at start: each part of mini-cursor this script uses gets its slice of the settings.
configureParts();

/**
 * One run of either engine with the real ChatOpenAI (createChatModel) against the scripted
 * server, for the provider conformance suite: the events, the requests the provider saw, and
 * the workspace's files afterwards.
 */

export type EngineKind = "graph" | "loop";
export const ENGINE_KINDS: EngineKind[] = ["graph", "loop"];

export interface ProviderRun {
  summary: RunSummary;
  events: AgentEvent[];
  requests: ChatRequest[];
  server: OpenAIServer;
  file(name: string): string | undefined;
  ms: number;
}

export interface RunOptions {
  engine: EngineKind;
  script: Script;
  task?: string;
  settings?: Partial<GraphSettings>;
}

export const TASK = "Write hello to notes.txt";
export const WRITE_ARGS = { filePath: "notes.txt", content: "hello\n" };

export async function runProvider(options: RunOptions): Promise<ProviderRun> {
  const server = await startOpenAIServer(options.script);
  const tmp = makeTempDir();
  try {
    const settings: GraphSettings = {
      workspace: tmp.dir,
      model: "gpt-4.1-mini",
      apiKey: "test",
      baseUrl: server.url,
      provider: "openai-compatible",
      requestTimeoutMs: 10_000,
      maxRetries: 1,
      // A busy machine must not add "waiting for…" notices to the events these tests compare.
      waitNoticeMs: QUIET_WAITS_MS,
      approval: "full-auto",
      maxSteps: 6,
      contextTokens: 100_000,
      ...options.settings,
    };
    const tools = createTools({ workspace: tmp.dir });
    const meta = { engine: options.engine, model: settings.model, provider: "openai-compatible", workspace: tmp.dir };
    let engine: Engine;
    if (options.engine === "graph") {
      const graph = createGraph(settings, { checkpointer: new MemorySaver(), tools });
      engine = createGraphEngine({
        graph,
        meta,
        modelSettings: settings,
        approval: "full-auto",
        maxSteps: settings.maxSteps,
      });
    } else {
      const { memory } = inMemoryLoopThreads();
      engine = createLoopEngine({
        runtime: { ...createRuntime(settings, { tools }), workspace: tmp.dir },
        meta,
        modelSettings: settings,
        memory,
      });
    }
    const events: AgentEvent[] = [];
    const started = Date.now();
    const summary = await engine.run({
      task: options.task ?? TASK,
      threadId: "t1",
      emit: (e) => events.push(e),
      approver: async () => ({ decision: "deny" }),
    });
    const ms = Date.now() - started;
    const files = new Map<string, string>();
    for (const name of ["notes.txt", "other.txt"]) {
      const p = path.join(tmp.dir, name);
      if (existsSync(p)) files.set(name, readFileSync(p, "utf8"));
    }
    return { summary, events, requests: server.requests, server, file: (name) => files.get(name), ms };
  } finally {
    tmp.cleanup();
    await server.close();
  }
}

/**
 * The promise every tool-call shape must keep: in the request after the calls, each tool
 * result answers a call of the assistant turn before it, by the same id, and every call has one.
 */
export function expectResultsMatchCalls(request: ChatRequest): string[] {
  const assistant = [...request.messages].reverse().find((m) => m.role === "assistant" && m.tool_calls?.length);
  if (!assistant) throw new Error("no assistant turn with tool calls in the request");
  const callIds = assistant.tool_calls!.map((c) => c.id);
  const resultIds = request.messages.filter((m) => m.role === "tool").map((m) => m.tool_call_id);
  if (JSON.stringify([...resultIds].sort()) !== JSON.stringify([...callIds].sort())) {
    throw new Error(`tool results ${JSON.stringify(resultIds)} do not answer the calls ${JSON.stringify(callIds)}`);
  }
  return callIds;
}

export function eventsOf<T extends AgentEvent["type"]>(
  events: AgentEvent[],
  type: T,
): Array<Extract<AgentEvent, { type: T }>> {
  return events.filter((e): e is Extract<AgentEvent, { type: T }> => e.type === type);
}

/** A chat.completion.chunk with one choice. */
export function chunk(delta: object | null, finish: string | null = null, extra: object = {}): object {
  return {
    id: "chatcmpl-raw",
    object: "chat.completion.chunk",
    created: 1700000000,
    model: "m",
    choices: [{ index: 0, delta, finish_reason: finish }],
    ...extra,
  };
}

/** A non-streamed chat.completion with one choice. */
export function completion(message: object, finish: string | null = "stop"): object {
  return {
    id: "chatcmpl-raw",
    object: "chat.completion",
    created: 1700000000,
    model: "m",
    choices: [{ index: 0, message: { role: "assistant", ...message }, finish_reason: finish }],
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
  };
}

export const JSON_HEADERS = { "content-type": "application/json" };
