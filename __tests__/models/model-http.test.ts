import { jest } from "@jest/globals";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { AIMessage, AIMessageChunk, HumanMessage, type BaseMessage } from "@langchain/core/messages";
import { MemorySaver } from "@langchain/langgraph";
import { ChatOpenAI } from "@langchain/openai";
import type { Engine, RunSummary } from "../../src/agent/engine.js";
import type { AgentEvent } from "../../src/contracts/events.js";
import { callModelWithRetry, isBrokenStream, isIncompleteResponse, STREAM_RETRIES } from "../../src/models/invoke.js";
import { createChatModel, describeModelError, type ModelSettings } from "../../src/models/model.js";
import { invalidCallResults, normalizeToolCalls } from "../../src/agent/turn.js";
import { createRuntime } from "../../src/agent/runtime.js";
import { createGraph, type GraphSettings } from "../../src/graph/graph.js";
import { createGraphEngine } from "../../src/graph/engine.js";
import { createLoopEngine } from "../../src/loop/loop.js";
import type { LoopThread } from "../../src/memory/loop-threads.js";
import { createTools } from "../../src/tools/index.js";
import {
  closedPortUrl,
  splitArgs,
  startOpenAIServer,
  startOpenAIServerProcess,
  streamEvents,
  type ChatRequest,
  type OpenAIServer,
  type Script,
} from "../helpers/openai-server.js";
import { makeTempDir } from "../helpers/tmp.js";

/**
 * The real ChatOpenAI (from createChatModel) over HTTP against a scripted OpenAI-compatible
 * server on 127.0.0.1: JSON and SSE, tool-call deltas split across chunks, faults, broken
 * streams, then both engines end to end.
 */

let server: OpenAIServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function serve(script: Script): Promise<OpenAIServer> {
  server = await startOpenAIServer(script);
  return server;
}

function settingsFor(url: string, overrides: Partial<ModelSettings> = {}): ModelSettings {
  return {
    model: "gpt-4o-mini",
    apiKey: "test",
    baseUrl: url,
    provider: "openai-compatible",
    requestTimeoutMs: 5000,
    maxRetries: 2,
    ...overrides,
  };
}

const ask = [new HumanMessage("hi")];

/** What the model's raw `.stream()` gives, merged, without callModelWithRetry's checks. */
async function rawStream(
  model: ReturnType<typeof createChatModel>,
  messages: BaseMessage[] = ask,
): Promise<AIMessageChunk> {
  let merged: AIMessageChunk | undefined;
  for await (const chunk of await model.stream(messages)) merged = merged ? merged.concat(chunk) : chunk;
  return merged!;
}

async function failureOf(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (err) {
    return err as Error;
  }
  throw new Error("expected the call to fail");
}

describe("the scripted server", () => {
  it("lists models and answers 500 'script exhausted' when the script runs out", async () => {
    const s = await serve([]);
    const models = (await (await fetch(`${s.url}/models`)).json()) as { object: string; data: Array<{ id: string }> };
    expect(models.object).toBe("list");
    expect(models.data.map((m) => m.id)).toContain("gpt-4o-mini");

    const res = await fetch(`${s.url}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }] }),
    });
    expect(res.status).toBe(500);
    const body = (await res.json()) as { error: { message: string } };
    expect(body.error.message).toMatch(/^script exhausted/);
    expect(s.requests).toEqual([{ model: "m", messages: [{ role: "user", content: "hi" }] }]);
  });

  it("runs as a process: prints LISTENING <port>, logs requests as JSON lines, exits when stdin closes", async () => {
    const dir = makeTempDir();
    try {
      const scriptPath = path.join(dir.dir, "script.json");
      const logPath = path.join(dir.dir, "requests.jsonl");
      writeFileSync(scriptPath, JSON.stringify([{ content: "from the process" }]));
      const proc = await startOpenAIServerProcess(scriptPath, logPath);
      try {
        const reply = await callModelWithRetry(createChatModel(settingsFor(proc.url)), ask);
        expect(reply.content).toBe("from the process");
        const logged = readFileSync(logPath, "utf8")
          .trim()
          .split("\n")
          .map((line) => JSON.parse(line) as ChatRequest);
        expect(logged).toHaveLength(1);
        expect(logged[0]).toMatchObject({
          model: "gpt-4o-mini",
          stream: true,
          messages: [{ role: "user", content: "hi" }],
        });
      } finally {
        await proc.close();
      }
      expect(proc.child.exitCode).toBe(0);
    } finally {
      dir.cleanup();
    }
  });

  it("streams tool-call arguments the way OpenAI does: id and name first, then fragments", () => {
    const events = streamEvents(
      { toolCalls: [{ id: "call_a", name: "write_file", args: { filePath: "a.txt", content: "hi" } }] },
      "m",
      "chatcmpl-1",
      true,
    );
    const parsed = events.slice(0, -1).map(
      (e) =>
        JSON.parse(e) as {
          choices: Array<{
            delta: { tool_calls: Array<{ function: { arguments: string } }> };
            finish_reason: string | null;
          }>;
          usage?: unknown;
        },
    );
    expect(events.at(-1)).toBe("[DONE]");
    const deltas = parsed.flatMap((p) => p.choices.map((c) => c.delta));
    expect(deltas[0]).toEqual({ role: "assistant", content: "", refusal: null });
    expect(deltas[1]).toEqual({
      tool_calls: [{ index: 0, id: "call_a", type: "function", function: { name: "write_file", arguments: "" } }],
    });
    const fragments = deltas.slice(2, -1).map((d) => d.tool_calls[0]!.function.arguments);
    expect(fragments.length).toBeGreaterThanOrEqual(3);
    expect(fragments.join("")).toBe('{"filePath":"a.txt","content":"hi"}');
    expect(parsed.at(-2)!.choices[0]!.finish_reason).toBe("tool_calls");
    expect(parsed.at(-1)).toMatchObject({
      choices: [],
      usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
    });
  });
});

describe("ChatOpenAI over HTTP", () => {
  it("reads a plain JSON completion (the non-streaming path, which createChatModel never takes)", async () => {
    const s = await serve([{ content: "Hello from JSON.", usage: { prompt_tokens: 3, completion_tokens: 4 } }]);
    const model = new ChatOpenAI({
      model: "gpt-4o-mini",
      apiKey: "test",
      configuration: { baseURL: s.url },
      streaming: false,
      maxRetries: 0,
    });
    const reply = await model.invoke(ask);
    expect(reply.content).toBe("Hello from JSON.");
    expect(reply.response_metadata.finish_reason).toBe("stop");
    expect(reply.usage_metadata).toMatchObject({ input_tokens: 3, output_tokens: 4, total_tokens: 7 });
    expect(s.requests[0]!.stream).toBeFalsy();
  });

  it("streams text in several deltas and merges them, with the provider's usage", async () => {
    const text = "Hello there, this answer arrives in pieces.";
    const s = await serve([{ content: text, usage: { prompt_tokens: 12, completion_tokens: 7 } }, { content: text }]);
    const model = createChatModel(settingsFor(s.url));

    const chunks: string[] = [];
    for await (const chunk of await model.stream(ask)) if (chunk.content) chunks.push(chunk.content as string);
    expect(chunks.length).toBeGreaterThan(3);
    expect(chunks.join("")).toBe(text);

    const reply = await callModelWithRetry(model, ask);
    expect(reply).toBeInstanceOf(AIMessage);
    expect(reply.content).toBe(text);
    expect(reply.response_metadata.finish_reason).toBe("stop");
    expect(reply.tool_calls).toEqual([]);
    expect(s.requests[0]).toMatchObject({
      model: "gpt-4o-mini",
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(s.requests[0]!.messages).toEqual([{ role: "user", content: "hi" }]);
  });

  it("assembles tool-call arguments split across chunks into exact tool_calls", async () => {
    const writeArgs = { filePath: "src/notes.txt", content: 'line 1\nline "2"\n\u00e9\u{1F600}' };
    expect(splitArgs(JSON.stringify(writeArgs)).length).toBeGreaterThanOrEqual(5);
    const s = await serve([
      {
        content: "Writing two files.",
        toolCalls: [
          { id: "call_w", name: "write_file", args: writeArgs },
          { id: "call_l", name: "list_directory", args: { directoryPath: "." } },
        ],
      },
    ]);
    const workspace = makeTempDir();
    const tools = createTools({ workspace: workspace.dir });
    const model = createChatModel(settingsFor(s.url));
    const reply = await callModelWithRetry(model.bindTools!(tools), ask).finally(workspace.cleanup);
    expect(reply.content).toBe("Writing two files.");
    expect(reply.response_metadata.finish_reason).toBe("tool_calls");
    expect(reply.tool_calls).toEqual([
      { id: "call_w", name: "write_file", args: writeArgs, type: "tool_call" },
      { id: "call_l", name: "list_directory", args: { directoryPath: "." }, type: "tool_call" },
    ]);
    expect(reply.invalid_tool_calls).toEqual([]);
    // The tools went out as OpenAI function definitions.
    const sentTools = s.requests[0]!.tools!;
    expect(sentTools.map((t) => t.function.name)).toEqual(tools.map((t) => t.name));
    expect(sentTools.find((t) => t.function.name === "write_file")!.function.parameters).toMatchObject({
      required: ["filePath", "content"],
    });
  });

  it("retries a 429 and then succeeds", async () => {
    const s = await serve([
      {
        status: 429,
        retryAfter: 0,
        error: { message: "Rate limit reached", type: "requests", code: "rate_limit_exceeded" },
      },
      { content: "ok" },
    ]);
    const reply = await callModelWithRetry(createChatModel(settingsFor(s.url)), ask);
    expect(reply.content).toBe("ok");
    expect(s.requests).toHaveLength(2);
  });

  it("retries a 500 and then succeeds", async () => {
    const s = await serve([{ status: 500 }, { content: "ok" }]);
    const reply = await callModelWithRetry(createChatModel(settingsFor(s.url)), ask);
    expect(reply.content).toBe("ok");
    expect(s.requests).toHaveLength(2);
  });

  it("honours retry-after on a 429", async () => {
    // LangChain's own backoff before the first retry is 1-2 s, so only a longer retry-after
    // shows that the header is read: 3 s here.
    const s = await serve([{ status: 429, retryAfter: 3 }, { content: "ok" }]);
    const started = Date.now();
    const reply = await callModelWithRetry(createChatModel(settingsFor(s.url)), ask);
    expect(reply.content).toBe("ok");
    expect(Date.now() - started).toBeGreaterThanOrEqual(2900);
    expect(s.requests).toHaveLength(2);
  });

  it("stops after maxRetries and says so in one sentence", async () => {
    const s = await serve([{ status: 500 }, { status: 500 }, { content: "never reached" }]);
    const settings = settingsFor(s.url, { maxRetries: 1 });
    const err = await failureOf(callModelWithRetry(createChatModel(settings), ask));
    expect(s.requests).toHaveLength(2);
    expect(describeModelError(err, settings)).toBe(
      `The provider at ${s.url} failed with HTTP 500 after 2 attempts: scripted fault: HTTP 500; try again later.`,
    );
  });

  it("a 429 that is not retried (a used-up quota; --max-retries 0) claims no retries, and a quota is not told to wait", async () => {
    const quota = {
      status: 429,
      error: { message: "You exceeded your current quota.", type: "insufficient_quota", code: "insufficient_quota" },
    };
    const s = await serve([quota, { status: 429 }, { content: "never reached" }]);
    const quotaErr = await failureOf(callModelWithRetry(createChatModel(settingsFor(s.url)), ask));
    expect(describeModelError(quotaErr, settingsFor(s.url))).toBe(
      `The provider at ${s.url} says the API key's account has no quota left (HTTP 429): You exceeded your current quota; check its plan and billing: waiting does not help.`,
    );
    expect(s.requests).toHaveLength(1);
    const once = settingsFor(s.url, { maxRetries: 0 });
    const limited = await failureOf(callModelWithRetry(createChatModel(once), ask));
    expect(describeModelError(limited, once)).toBe(
      `The provider at ${s.url} is rate limiting requests (HTTP 429): scripted fault: HTTP 429; wait and try again.`,
    );
    expect(s.requests).toHaveLength(2);
  });

  describe("a stream that breaks", () => {
    const long = "This answer is long enough to be cut somewhere in the middle of it.";

    it("cut by a dropped socket: the SDK throws 'terminated', and callModelWithRetry retries", async () => {
      const s = await serve([
        { content: long, cutAfterChunks: 3 },
        { content: long, cutAfterChunks: 3 },
        { content: "complete answer" },
      ]);
      const model = createChatModel(settingsFor(s.url));

      const err = await failureOf(rawStream(model));
      expect(err).toMatchObject({ name: "TypeError", message: "terminated", cause: { code: "UND_ERR_SOCKET" } });
      expect(isBrokenStream(err)).toBe(true);

      const reply = await callModelWithRetry(model, ask);
      expect(reply.content).toBe("complete answer");
      expect(reply.response_metadata.finish_reason).toBe("stop");
      expect(s.requests).toHaveLength(3);
    });

    it("ended cleanly but early: the SDK ends quietly with a partial message, so callModelWithRetry checks finish_reason", async () => {
      const writeArgs = { filePath: "notes.txt", content: "hello world" };
      // Events: role, tool-call header, 7 argument fragments, finish, usage, [DONE]. Stop after
      // six fragments: the arguments end in `"content":"hello w`.
      const truncated = { toolCalls: [{ id: "call_t", name: "write_file", args: writeArgs }], endAfterChunks: 8 };
      expect(splitArgs(JSON.stringify(writeArgs))).toHaveLength(7);
      const s = await serve([
        truncated,
        truncated,
        { toolCalls: [{ id: "call_ok", name: "write_file", args: writeArgs }] },
      ]);
      const model = createChatModel(settingsFor(s.url));

      // What LangChain hands back on its own: no error, no finish_reason, and a "valid" tool
      // call whose arguments it completed from the prefix (it would write "hello w").
      const partial = await rawStream(model);
      expect(partial.response_metadata.finish_reason).toBeUndefined();
      expect(partial.tool_calls).toEqual([
        { id: "call_t", name: "write_file", args: { filePath: "notes.txt", content: "hello w" }, type: "tool_call" },
      ]);
      expect(isIncompleteResponse(partial)).toBe(true);

      const reply = await callModelWithRetry(model, ask);
      expect(reply.tool_calls).toEqual([{ id: "call_ok", name: "write_file", args: writeArgs, type: "tool_call" }]);
      expect(s.requests).toHaveLength(3);
    });

    it("ended early on every attempt: callModelWithRetry gives up with an error that names the problem", async () => {
      const s = await serve(() => ({ content: long, endAfterChunks: 3 }));
      const err = await failureOf(callModelWithRetry(createChatModel(settingsFor(s.url)), ask));
      expect(err.message).toBe(
        "The model's response stream ended before the response was complete (no finish_reason).",
      );
      expect(s.requests).toHaveLength(STREAM_RETRIES + 1);
    });

    it("issue 26: stalled (headers and a few chunks, then silence): abandoned after the idle timeout and reported, not retried", async () => {
      const s = await serve([{ content: long, stallAfterChunks: 2 }, { content: "never reached" }]);
      const err = await failureOf(
        callModelWithRetry(createChatModel(settingsFor(s.url)), ask, undefined, { idleTimeoutMs: 300 }),
      );
      expect(err.message).toBe("The model's response stream stalled: nothing arrived for 0.3 s.");
      expect(s.requests).toHaveLength(1);
    });

    it("an abort by the caller is not retried", async () => {
      const s = await serve([{ content: long, stallAfterChunks: 2 }, { content: "never reached" }]);
      const controller = new AbortController();
      const model = createChatModel(settingsFor(s.url));
      const call = callModelWithRetry(model, ask, {
        signal: controller.signal,
        callbacks: [{ handleLLMNewToken: () => controller.abort() }],
      });
      const err = await failureOf(call);
      expect(`${err.name}: ${err.message}`).toMatch(/abort/i);
      expect(s.requests).toHaveLength(1);
    });
  });

  describe("malformed tool-call JSON", () => {
    const unterminated = '{"filePath": "a.txt"';

    it("streamed: goes to invalid_tool_calls, and normalizeToolCalls + invalidCallResults answer it", async () => {
      const s = await serve([
        { toolCalls: [{ id: "call_bad", name: "read_file", args: unterminated }] },
        { toolCalls: [{ id: "call_bad", name: "read_file", args: unterminated }] },
      ]);
      const model = createChatModel(settingsFor(s.url));

      // LangChain alone parses streamed arguments leniently and would run read_file("a.txt").
      expect((await rawStream(model)).tool_calls).toEqual([
        { id: "call_bad", name: "read_file", args: { filePath: "a.txt" }, type: "tool_call" },
      ]);

      const reply = await callModelWithRetry(model, ask);
      expect(reply.tool_calls).toEqual([]);
      expect(reply.invalid_tool_calls).toEqual([
        { id: "call_bad", name: "read_file", args: unterminated, error: expect.any(String), type: "invalid_tool_call" },
      ]);

      const normalized = normalizeToolCalls(reply);
      expect(normalized.tool_calls).toEqual([{ id: "call_bad", name: "read_file", args: {}, type: "tool_call" }]);
      const results = invalidCallResults(normalized);
      expect(results.map((r) => [r.tool_call_id, r.name, r.status])).toEqual([["call_bad", "read_file", "error"]]);
      expect(results[0]!.content).toMatch(
        /^Error: the arguments of this read_file call are not valid JSON \(.+\): \{"filePath": "a\.txt"\nCall the tool again/,
      );
    });

    it("as plain JSON: ChatOpenAI itself puts it in invalid_tool_calls", async () => {
      const s = await serve([{ toolCalls: [{ id: "call_bad", name: "read_file", args: unterminated }] }]);
      const model = new ChatOpenAI({
        model: "gpt-4o-mini",
        apiKey: "test",
        configuration: { baseURL: s.url },
        streaming: false,
        maxRetries: 0,
      });
      // LangChain warns on the console about raw calls without parsed ones; keep the output clean.
      const warn = jest.spyOn(console, "warn").mockImplementation(() => {});
      try {
        const reply = await model.invoke(ask);
        expect(reply.tool_calls).toEqual([]);
        expect(reply.invalid_tool_calls).toMatchObject([{ id: "call_bad", name: "read_file", args: unterminated }]);
      } finally {
        warn.mockRestore();
      }
    });
  });

  describe("errors in one sentence", () => {
    it("401: the API key was rejected, without retries", async () => {
      const s = await serve([
        {
          status: 401,
          error: {
            message: "Incorrect API key provided: test.",
            type: "invalid_request_error",
            code: "invalid_api_key",
          },
        },
      ]);
      const settings = settingsFor(s.url);
      const err = await failureOf(callModelWithRetry(createChatModel(settings), ask));
      expect(describeModelError(err, settings)).toBe(
        `The provider at ${s.url} rejected the API key (HTTP 401); check OPENAI_API_KEY.`,
      );
      expect(s.requests).toHaveLength(1);
    });

    it("404 model_not_found: the provider does not know the model", async () => {
      const s = await serve([
        {
          status: 404,
          error: {
            message: "The model `gpt-4o-mini` does not exist or you do not have access to it.",
            type: "invalid_request_error",
            code: "model_not_found",
          },
        },
      ]);
      const settings = settingsFor(s.url);
      const err = await failureOf(callModelWithRetry(createChatModel(settings), ask));
      expect(describeModelError(err, settings)).toBe(
        `The provider at ${s.url} does not know the model "gpt-4o-mini"; pass --model (or MINI_CURSOR_MODEL) with a model it serves.`,
      );
      expect(s.requests).toHaveLength(1);
    });

    it("an unreachable host: 'Could not reach', quickly", async () => {
      const url = await closedPortUrl();
      const settings = settingsFor(url, { maxRetries: 1 });
      const started = Date.now();
      const err = await failureOf(callModelWithRetry(createChatModel(settings), ask));
      // A refused local connection is final: no retries (issue 12: within 2 s).
      expect(Date.now() - started).toBeLessThan(2_000);
      expect(describeModelError(err, settings)).toBe(
        `Could not reach the model provider at ${url} (ECONNREFUSED: nothing listens there); is the server running? Check OPENAI_BASE_URL.`,
      );
    });
  });
});

describe.each(["graph", "loop"] as const)("%s engine over HTTP", (engineKind) => {
  let tmp: ReturnType<typeof makeTempDir>;
  beforeEach(() => {
    tmp = makeTempDir();
  });
  afterEach(() => tmp.cleanup());

  function engineFor(url: string): { engine: Engine; events: AgentEvent[]; run(task: string): Promise<RunSummary> } {
    const settings: GraphSettings = {
      ...(settingsFor(url) as Required<ModelSettings>),
      workspace: tmp.dir,
      approval: "full-auto",
      maxSteps: 10,
      contextTokens: 100_000,
    };
    const tools = createTools({ workspace: tmp.dir });
    const meta = { engine: engineKind, model: "gpt-4o-mini", provider: "openai-compatible", workspace: tmp.dir };
    let engine: Engine;
    if (engineKind === "graph") {
      const graph = createGraph(settings, { checkpointer: new MemorySaver(), tools });
      engine = createGraphEngine({
        graph,
        meta,
        modelSettings: settings,
        approval: settings.approval,
        maxSteps: settings.maxSteps,
      });
    } else {
      const threads = new Map<string, LoopThread>();
      const memory = {
        load: (id: string) => threads.get(id) ?? { messages: [], alwaysAllow: [] },
        save: (id: string, thread: LoopThread) => void threads.set(id, thread),
      };
      engine = createLoopEngine({
        runtime: { ...createRuntime(settings, { tools }), workspace: tmp.dir },
        meta,
        modelSettings: settings,
        memory,
      });
    }
    const events: AgentEvent[] = [];
    return {
      engine,
      events,
      run: (task) =>
        engine.run({ task, threadId: "t1", emit: (e) => events.push(e), approver: async () => ({ decision: "deny" }) }),
    };
  }

  /** Event types with runs of tokens collapsed into one "token". */
  const shape = (events: AgentEvent[]) =>
    events.map((e) => e.type).filter((type, i, all) => !(type === "token" && all[i - 1] === "token"));

  const toolMessagesOf = (request: ChatRequest) => request.messages.filter((m) => m.role === "tool");

  it("writes a file through a streamed tool call, then answers", async () => {
    const s = await serve([
      {
        toolCalls: [{ id: "call_write", name: "write_file", args: { filePath: "hello.txt", content: "hi" } }],
        usage: { prompt_tokens: 100, completion_tokens: 20 },
      },
      { content: "I wrote hello.txt with the text hi.", usage: { prompt_tokens: 150, completion_tokens: 10 } },
    ]);
    const h = engineFor(s.url);
    const summary = await h.run("write hi to hello.txt");

    expect(readFileSync(path.join(tmp.dir, "hello.txt"), "utf8")).toBe("hi");
    expect(shape(h.events)).toEqual([
      "run_start",
      "step",
      "usage",
      "tool_call",
      "tool_result",
      "step",
      "token",
      "usage",
      "final",
      "run_end",
    ]);
    expect(h.events.find((e) => e.type === "tool_call")).toEqual({
      type: "tool_call",
      step: 1,
      id: "call_write",
      name: "write_file",
      args: { filePath: "hello.txt", content: "hi" },
    });
    const result = h.events.find((e) => e.type === "tool_result");
    expect(result).toMatchObject({
      step: 1,
      id: "call_write",
      name: "write_file",
      status: "success",
      content: "Created hello.txt (1 line, 2 bytes).",
    });
    const tokens = h.events.flatMap((e) => (e.type === "token" ? [e.text] : []));
    expect(tokens.length).toBeGreaterThan(1);
    expect(tokens.join("")).toBe("I wrote hello.txt with the text hi.");
    expect(h.events.find((e) => e.type === "final")).toEqual({
      type: "final",
      text: "I wrote hello.txt with the text hi.",
    });
    expect(h.events.at(-1)).toMatchObject({
      type: "run_end",
      reason: "done",
      steps: 2,
      toolCalls: 1,
      usage: { input: 250, output: 30, estimated: false },
    });
    expect(summary).toMatchObject({
      reason: "done",
      steps: 2,
      toolCalls: 1,
      finalText: "I wrote hello.txt with the text hi.",
    });

    expect(s.requests).toHaveLength(2);
    const second = s.requests[1]!;
    expect(second.messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool"]);
    expect(second.messages[1]).toEqual({ role: "user", content: "write hi to hello.txt" });
    expect(second.messages[2]!.tool_calls).toEqual([
      {
        id: "call_write",
        type: "function",
        function: { name: "write_file", arguments: JSON.stringify({ filePath: "hello.txt", content: "hi" }) },
      },
    ]);
    expect(second.messages[3]).toMatchObject({
      role: "tool",
      tool_call_id: "call_write",
      content: "Created hello.txt (1 line, 2 bytes).",
    });
  });

  it("answers a call to an unknown tool with 'there is no tool named' and goes on", async () => {
    const s = await serve([
      { toolCalls: [{ id: "call_x", name: "delete_everything", args: {} }] },
      { content: "Sorry, I cannot do that." },
    ]);
    const h = engineFor(s.url);
    const summary = await h.run("delete everything");
    expect(summary).toMatchObject({ reason: "done", finalText: "Sorry, I cannot do that." });
    expect(h.events.find((e) => e.type === "tool_result")).toMatchObject({ id: "call_x", status: "error" });
    const [toolMessage] = toolMessagesOf(s.requests[1]!);
    expect(toolMessage).toMatchObject({ role: "tool", tool_call_id: "call_x" });
    const available = createTools({ workspace: tmp.dir })
      .map((t) => t.name)
      .join(", ");
    expect(toolMessage!.content).toBe(
      `Error: there is no tool named "delete_everything". Available tools: ${available}.`,
    );
  });

  it("answers wrong argument names with an error result and goes on", async () => {
    const s = await serve([
      { toolCalls: [{ id: "call_r", name: "read_file", args: { name: "x.txt" } }] },
      { content: "Let me try again." },
    ]);
    const h = engineFor(s.url);
    const summary = await h.run("read x.txt");
    expect(summary).toMatchObject({ reason: "done", finalText: "Let me try again." });
    expect(h.events.find((e) => e.type === "tool_result")).toMatchObject({
      id: "call_r",
      name: "read_file",
      status: "error",
    });
    const [toolMessage] = toolMessagesOf(s.requests[1]!);
    expect(toolMessage).toMatchObject({ role: "tool", tool_call_id: "call_r" });
    expect(toolMessage!.content).toMatch(/filePath/);
    expect(existsSync(path.join(tmp.dir, "x.txt"))).toBe(false);
  });

  it("answers malformed argument JSON with an error result and goes on", async () => {
    const s = await serve([
      { toolCalls: [{ id: "call_m", name: "write_file", args: '{"filePath": "m.txt", "content": "trunc' }] },
      { content: "Retrying later." },
    ]);
    const h = engineFor(s.url);
    const summary = await h.run("write m.txt");
    expect(summary).toMatchObject({ reason: "done", finalText: "Retrying later." });
    expect(existsSync(path.join(tmp.dir, "m.txt"))).toBe(false);
    const second = s.requests[1]!;
    expect(second.messages[2]!.tool_calls!.map((c) => c.id)).toEqual(["call_m"]);
    const [toolMessage] = toolMessagesOf(second);
    expect(toolMessage).toMatchObject({ role: "tool", tool_call_id: "call_m" });
    expect(toolMessage!.content).toMatch(/^Error: the arguments of this write_file call are not valid JSON/);
  });

  it("retries a stream cut mid-answer and shows the complete answer", async () => {
    const s = await serve([
      { content: "A first answer that breaks off", cutAfterChunks: 3 },
      { content: "The complete answer." },
    ]);
    const h = engineFor(s.url);
    const summary = await h.run("say something");
    expect(summary).toMatchObject({ reason: "done", finalText: "The complete answer." });
    expect(s.requests).toHaveLength(2);
  });

  it("reports a provider failure as an error event and run_end 'error'", async () => {
    const s = await serve([{ status: 401 }]);
    const h = engineFor(s.url);
    const summary = await h.run("hello");
    expect(summary.reason).toBe("error");
    expect(h.events.find((e) => e.type === "error")).toMatchObject({
      message: `The provider at ${s.url} rejected the API key (HTTP 401); check OPENAI_API_KEY.`,
    });
    expect(h.events.at(-1)).toMatchObject({ type: "run_end", reason: "error" });
  });
});
