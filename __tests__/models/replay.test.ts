import { jest } from "@jest/globals";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { AIMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { MemorySaver } from "@langchain/langgraph";
import type { AgentEvent } from "../../src/contracts/events.js";
import type { Engine, RunSummary } from "../../src/agent/engine.js";
import { createRuntime } from "../../src/agent/runtime.js";
import { createGraph } from "../../src/graph/graph.js";
import { createGraphEngine } from "../../src/graph/engine.js";
import { createLoopEngine } from "../../src/loop/loop.js";
import type { LoopThread } from "../../src/memory/loop-threads.js";
import { isTodoAppRequest, TODO_DEMO_RECORDING } from "../../src/models/offline.js";
import {
  recordModel,
  ResponseRecorder,
  type RecordedResponse,
  type RecordingHeader,
} from "../../src/models/recorder.js";
import {
  loadRecording,
  parseRecording,
  ReplayChatModel,
  rewriteUrls,
  RecordingError,
  type Recording,
} from "../../src/models/replay.js";
import { createTools } from "../../src/tools/index.js";
import { baseEnv, runCli } from "../helpers/cli.js";
import { engineSettings, eventsOf } from "../helpers/engine-harness.js";
import { startOpenAIServer, type OpenAIServer, type ScriptStep } from "../helpers/openai-server.js";
import { ScriptedChatModel, type ScriptedTurn } from "../helpers/scripted-model.js";
import { makeTempDir } from "../helpers/tmp.js";

/**
 * --record and --replay: a run recorded from a scripted model (in process) or from the scripted
 * OpenAI-compatible server (the real ChatOpenAI, through the CLI) replays with both engines,
 * in one-shot runs and in a piped session; a run that leaves the recording stops with one
 * sentence. The demo recording itself is checked here; building it for real is in e2e/.
 */

jest.setTimeout(120_000);

const ENGINES = ["graph", "loop"] as const;
type EngineKind = (typeof ENGINES)[number];

let tmp: ReturnType<typeof makeTempDir>;
beforeEach(() => {
  tmp = makeTempDir();
});
afterEach(() => tmp.cleanup());

/** A workspace folder inside the test's temp dir. */
function workspace(name: string): string {
  const dir = path.join(tmp.dir, name);
  mkdirSync(dir, { recursive: true });
  return dir;
}

interface Run {
  events: AgentEvent[];
  summary: RunSummary;
  history: BaseMessage[];
}

/** Runs one task through an engine with this model and the real tools in `dir` (full-auto). */
function engineFor(kind: EngineKind, dir: string, model: BaseChatModel) {
  const settings = engineSettings(dir);
  const tools = createTools({ workspace: dir });
  const meta = { engine: kind, model: "test", provider: "offline", workspace: dir };
  let engine: Engine;
  let history: (threadId: string) => Promise<BaseMessage[]>;
  if (kind === "graph") {
    const graph = createGraph(settings, { checkpointer: new MemorySaver(), model, tools });
    engine = createGraphEngine({ graph, meta, modelSettings: settings, approval: "full-auto", maxSteps: 30 });
    history = async (id) =>
      (await graph.getState({ configurable: { thread_id: id } })).values.messages as BaseMessage[];
  } else {
    const threads = new Map<string, LoopThread>();
    const memory = {
      load: (id: string) => threads.get(id) ?? { messages: [], alwaysAllow: [] },
      save: (id: string, thread: LoopThread) =>
        void threads.set(id, { messages: [...thread.messages], alwaysAllow: [...thread.alwaysAllow] }),
    };
    engine = createLoopEngine({
      runtime: { ...createRuntime(settings, { model, tools }), workspace: dir },
      meta,
      modelSettings: settings,
      memory,
    });
    history = async (id) => threads.get(id)?.messages ?? [];
  }
  return {
    async run(task: string, threadId = "t1"): Promise<Run> {
      const events: AgentEvent[] = [];
      const summary = await engine.run({
        task,
        threadId,
        emit: (e) => events.push(e),
        approver: async () => ({ decision: "deny" }),
      });
      return { events, summary, history: await history(threadId) };
    },
    close: () => tools.processes.stopAll(),
  };
}

/** Messages without ids (ids are fresh on replay): type, text, tool calls, tool results. */
function shape(messages: BaseMessage[]) {
  return messages.map((m) => ({
    type: m.getType(),
    content: m.content,
    ...(AIMessage.isInstance(m) && m.tool_calls?.length
      ? { calls: m.tool_calls.map((c) => ({ name: c.name, args: c.args })) }
      : {}),
    ...(ToolMessage.isInstance(m) ? { tool: m.name } : {}),
  }));
}

function readLines(file: string): Array<RecordingHeader | RecordedResponse> {
  return readFileSync(file, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as RecordingHeader | RecordedResponse);
}

const NOTES_SCRIPT: ScriptedTurn[] = [
  {
    content: "Writing the note.",
    toolCalls: [{ name: "write_file", args: { filePath: "notes/a.txt", content: "alpha\n" } }],
  },
  { toolCalls: [{ name: "execute_command", args: { command: "cat notes/a.txt && echo done" } }] },
  "All done: notes/a.txt says alpha.",
];
const NOTES_TASK = "write the note and show it";
const FIXED_DATE = new Date("2026-01-02T03:04:05.000Z");

/** Records NOTES_SCRIPT with `kind` into `file`; returns the recorded run. */
async function recordNotes(kind: EngineKind, file: string, script: ScriptedTurn[] = NOTES_SCRIPT): Promise<Run> {
  const model = recordModel(
    new ScriptedChatModel(script),
    new ResponseRecorder(file, { model: "scripted", now: () => FIXED_DATE }),
  );
  const engine = engineFor(kind, workspace("recorded"), model);
  try {
    return await engine.run(NOTES_TASK);
  } finally {
    await engine.close();
  }
}

describe.each(ENGINES)("in process, %s engine", (kind) => {
  test("a recorded run holds a header and every response with a digest of what was sent", async () => {
    const file = path.join(tmp.dir, "notes.jsonl");
    const recorded = await recordNotes(kind, file);
    expect(recorded.summary.reason).toBe("done");
    const [header, ...responses] = readLines(file);
    expect(header).toEqual({
      type: "header",
      format: "mini-cursor-recording",
      version: 1,
      model: "scripted",
      recordedAt: "2026-01-02T03:04:05.000Z",
    });
    expect(responses.map((r) => (r as RecordedResponse).request)).toEqual([1, 2, 3]);
    const sent = responses.map((r) => (r as RecordedResponse).sent);
    expect(sent.map((s) => s.messages)).toEqual([2, 4, 6]);
    expect(sent.map((s) => s.sha256)).toEqual([
      expect.stringMatching(/^[0-9a-f]{16}$/),
      expect.stringMatching(/^[0-9a-f]{16}$/),
      expect.stringMatching(/^[0-9a-f]{16}$/),
    ]);
    expect(new Set(sent.map((s) => s.sha256)).size).toBe(3);
    expect(sent[0]!.last).toBe(`human: ${NOTES_TASK}`);
    // One conversation: every request's first user message is the task.
    expect(sent.map((s) => s.conversation)).toEqual([NOTES_TASK, NOTES_TASK, NOTES_TASK]);
    expect(sent[2]!.last).toBe("tool execute_command: Exit code: 0 alpha done");
    expect(sent.map((s) => s.outcomes)).toEqual([
      [],
      [{ tool: "write_file", what: "notes/a.txt", outcome: "ok" }],
      [{ tool: "execute_command", what: "cat notes/a.txt && echo done", outcome: "exit 0" }],
    ]);
    const first = (responses[0] as RecordedResponse).message;
    expect(first.type).toBe("ai");
    expect(first.data).toMatchObject({
      content: "Writing the note.",
      tool_calls: [{ name: "write_file", args: { filePath: "notes/a.txt", content: "alpha\n" }, type: "tool_call" }],
    });
    expect((responses[2] as RecordedResponse).message.data).toMatchObject({
      content: "All done: notes/a.txt says alpha.",
      tool_calls: [],
    });
  });

  test("the replay runs the same tools for real, with fresh ids, to the same answer", async () => {
    const file = path.join(tmp.dir, "notes.jsonl");
    const recorded = await recordNotes(kind, file);
    const dir = workspace("replayed");
    const replay = new ReplayChatModel(loadRecording(file, "notes.jsonl"));
    const engine = engineFor(kind, dir, replay);
    const replayed = await engine.run(NOTES_TASK);
    await engine.close();

    expect(replayed.summary.reason).toBe("done");
    expect(replay.served).toBe(3);
    expect(readFileSync(path.join(dir, "notes", "a.txt"), "utf8")).toBe("alpha\n");
    expect(shape(replayed.history)).toEqual(shape(recorded.history));
    expect(eventsOf(replayed.events, "final").map((e) => e.text)).toEqual(["All done: notes/a.txt says alpha."]);
    expect(eventsOf(replayed.events, "tool_result").map((e) => e.content)).toEqual(
      eventsOf(recorded.events, "tool_result").map((e) => e.content),
    );
    const ids = (h: BaseMessage[]) =>
      h.flatMap((m) => (AIMessage.isInstance(m) ? (m.tool_calls ?? []).map((c) => c.id) : []));
    expect(ids(replayed.history)).toHaveLength(2);
    for (const id of ids(replayed.history)) expect(ids(recorded.history)).not.toContain(id);
    // The recorded text streams as tokens, as a provider's would.
    expect(
      eventsOf(replayed.events, "token")
        .map((e) => e.text)
        .join(""),
    ).toContain("Writing the note.");
  });

  test("asking for more than the recording holds stops the run with one sentence", async () => {
    const file = path.join(tmp.dir, "notes.jsonl");
    await recordNotes(kind, file);
    const engine = engineFor(kind, workspace("replayed"), new ReplayChatModel(loadRecording(file, "demos/x.jsonl")));
    expect((await engine.run(NOTES_TASK)).summary.reason).toBe("done");
    const again = await engine.run("and once more");
    await engine.close();
    expect(again.summary.reason).toBe("error");
    expect(eventsOf(again.events, "error").map((e) => e.message)).toEqual([
      "The recording demos/x.jsonl has no response for model request 4 (it holds 3); the run diverged from the recording.",
    ]);
  });

  test("a command that fails where the recorded one succeeded stops the replay before the next response", async () => {
    const file = path.join(tmp.dir, "marker.jsonl");
    writeFileSync(path.join(workspace("recorded"), "marker"), "");
    await recordNotes(kind, file, [
      { toolCalls: [{ name: "execute_command", args: { command: "test -f marker" } }] },
      "The marker is there.",
    ]);
    const dir = workspace("replayed");
    const engine = engineFor(kind, dir, new ReplayChatModel(loadRecording(file, "marker.jsonl")));
    const replayed = await engine.run(NOTES_TASK);
    await engine.close();
    expect(replayed.summary.reason).toBe("error");
    expect(eventsOf(replayed.events, "final")).toEqual([]);
    expect(eventsOf(replayed.events, "error").map((e) => e.message)).toEqual([
      "The run diverged from the recording marker.jsonl at model request 2: `test -f marker` ended with exit code 1, where the recorded run ended with exit code 0.",
    ]);
  });
});

describe("recordings", () => {
  test("a file that is not a recording is refused with the line that is wrong", () => {
    expect(() =>
      parseRecording('{"type":"header","format":"mini-cursor-recording","version":1}\nnot json\n', "x.jsonl"),
    ).toThrow(new RecordingError("x.jsonl is not a recording: line 2 is not JSON."));
    expect(() =>
      parseRecording('{"type":"response","message":{"type":"human","data":{"content":"hi"}}}\n', "x.jsonl"),
    ).toThrow("x.jsonl is not a recording: line 1 is neither a header nor a recorded model response.");
    expect(() => loadRecording(path.join(tmp.dir, "missing.jsonl"), "missing.jsonl")).toThrow(
      "Cannot read the recording missing.jsonl: no such file.",
    );
  });

  test("a recorded answer is given the URL this run's dev server announced", () => {
    const stored = {
      type: "ai",
      data: { content: "Open http://localhost:5173/ or http://localhost:5173 now (not http://localhost:51730/)." },
    };
    const rewritten = rewriteUrls(stored as never, ["http://localhost:5173/"], ["http://localhost:5174/"]);
    expect((rewritten.data as { content: string }).content).toBe(
      "Open http://localhost:5174/ or http://localhost:5174 now (not http://localhost:51730/).",
    );
    expect(rewriteUrls(stored as never, ["http://localhost:5173/"], [])).toEqual(stored);
  });

  test("the demo recording is the seed's task: scaffold, read the starter files, write the TodoList, install, build, start, report the URL", () => {
    const demo: Recording = loadRecording(TODO_DEMO_RECORDING, "demos/todo-app.jsonl");
    const calls = demo.responses.map(
      (r) =>
        (r.message.data as { tool_calls?: Array<{ name: string; args: Record<string, unknown> }> }).tool_calls ?? [],
    );
    expect(
      calls.map((c) =>
        c.map((call) => `${call.name} ${String(call.args.command ?? call.args.filePath ?? call.args.directoryPath)}`),
      ),
    ).toEqual([
      ["execute_command npm create vite@latest react-todo-app -- --template react-ts --no-interactive"],
      ["list_directory react-todo-app/src"],
      // The starter files are read first: write_file replaces only what its thread has seen.
      [
        "read_file react-todo-app/src/App.tsx",
        "read_file react-todo-app/src/App.css",
        "read_file react-todo-app/src/index.css",
      ],
      [
        "write_file react-todo-app/src/App.tsx",
        "write_file react-todo-app/src/App.css",
        "write_file react-todo-app/src/index.css",
      ],
      ["execute_command npm install"],
      ["execute_command npm run build"],
      ["execute_command npm run dev"],
      [],
    ]);
    const app = String(calls[3]![0]!.args.content);
    for (const feature of ["localStorage", "toggleTodo", "deleteTodo", "'completed'", "left", "<form"])
      expect(app).toContain(feature);
    expect(String(calls[3]![1]!.args.content)).toContain("@keyframes");
    expect(calls[4]![0]!.args).toEqual({
      command: "npm install",
      workingDirectory: "react-todo-app",
      timeoutMs: 300000,
    });
    expect(demo.responses.at(-1)!.sent.outcomes).toEqual([
      { tool: "execute_command", what: "npm run dev", outcome: "background", url: "http://localhost:5173/" },
    ]);
    expect(String(demo.responses.at(-1)!.message.data.content)).toContain("http://localhost:5173/");
  });

  test("the offline model knows the request in English and Chinese", () => {
    for (const request of [
      "create a React todo app",
      "create a React todo app with Vite",
      "Build me a React TodoList with Vite, install and start it",
      "创建React TodoList应用",
      "用 Vite 搭建一个 React 待办应用",
    ]) {
      expect(isTodoAppRequest(request)).toBe(true);
    }
    for (const request of [
      "list the files",
      "read the React docs",
      "create a todo.txt file with content milk",
      "create a file react-todo.txt with content x",
      "run `npm test`",
    ]) {
      expect(isTodoAppRequest(request)).toBe(false);
    }
  });
});

/** A scripted-server script from the turns of NOTES_SCRIPT (same calls, same text). */
const SERVER_SCRIPT: ScriptStep[] = [
  {
    content: "Writing the note.",
    toolCalls: [{ name: "write_file", args: { filePath: "notes/a.txt", content: "alpha\n" } }],
  },
  { toolCalls: [{ name: "execute_command", args: { command: "cat notes/a.txt && echo done" } }] },
  { content: "All done: notes/a.txt says alpha." },
];

type JsonEvent = { type: string; [key: string]: unknown };
const jsonEvents = (stdout: string) =>
  stdout
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as JsonEvent);

describe("the CLI", () => {
  let server: OpenAIServer;
  afterEach(async () => server?.close());

  /** Records SERVER_SCRIPT through the real ChatOpenAI (streamed) with --record. */
  async function recordThroughServer(file: string) {
    server = await startOpenAIServer(SERVER_SCRIPT);
    const env = baseEnv({ OPENAI_BASE_URL: server.url, OPENAI_API_KEY: "test-key" });
    const r = await runCli(
      ["--workspace", workspace("recorded"), "--approval", "full-auto", "--json", "--record", file, NOTES_TASK],
      { env },
    );
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    return jsonEvents(r.stdout);
  }

  test("--record saves a ChatOpenAI run; --replay plays it with either engine and no provider", async () => {
    const file = path.join(tmp.dir, "run.jsonl");
    const recorded = await recordThroughServer(file);
    expect(recorded[0]).toMatchObject({
      type: "run_start",
      model: `gpt-5-mini via ${server.url}, recording to ${file}`,
    });
    const lines = readLines(file);
    expect(lines.map((l) => l.type)).toEqual(["header", "response", "response", "response"]);
    expect(lines[0]).toMatchObject({ model: "gpt-5-mini" });
    expect((lines[1] as RecordedResponse).message.data).toMatchObject({
      response_metadata: { finish_reason: "tool_calls" },
      usage_metadata: { input_tokens: 10, output_tokens: 5 },
    });
    expect(server.requests).toHaveLength(3);

    const calls = (events: JsonEvent[]) => events.filter((e) => e.type === "tool_call").map((e) => [e.name, e.args]);
    for (const engine of ENGINES) {
      const dir = workspace(`replay-${engine}`);
      const r = await runCli([
        "--workspace",
        dir,
        "--engine",
        engine,
        "--approval",
        "full-auto",
        "--json",
        "--replay",
        file,
        NOTES_TASK,
      ]);
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
      const events = jsonEvents(r.stdout);
      expect(events[0]).toMatchObject({
        type: "run_start",
        engine,
        provider: "offline",
        model: `replay of ${file} (recorded responses, no model provider)`,
      });
      expect(calls(events)).toEqual(calls(recorded));
      expect(events.find((e) => e.type === "final")).toEqual(recorded.find((e) => e.type === "final"));
      expect(events.at(-1)).toMatchObject({ type: "run_end", reason: "done", steps: 3, toolCalls: 2 });
      expect(readFileSync(path.join(dir, "notes", "a.txt"), "utf8")).toBe("alpha\n");
    }
    // The replays asked the server nothing.
    expect(server.requests).toHaveLength(3);
  });

  test("--replay in a piped session: the first request replays, the next one runs past the end and says so", async () => {
    const file = path.join(tmp.dir, "run.jsonl");
    await recordThroughServer(file);
    const dir = workspace("session");
    const r = await runCli(["--workspace", dir, "--approval", "full-auto", "--replay", file, "--each-line"], {
      input: `${NOTES_TASK}\nand again\n/exit\n`,
    });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("All done: notes/a.txt says alpha.");
    expect(`${r.stdout}${r.stderr}`).toContain(
      `The recording ${file} has no response for model request 4 (it holds 3); the run diverged from the recording.`,
    );
    expect(readFileSync(path.join(dir, "notes", "a.txt"), "utf8")).toBe("alpha\n");
  });

  test("a missing recording is a usage error, and so is recording over the one replayed", async () => {
    const missing = await runCli(["--workspace", tmp.dir, "--replay", "nope.jsonl", "hi"], { cwd: tmp.dir });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toBe(`mini-cursor: --replay: no recording at ${path.join(tmp.dir, "nope.jsonl")}.\n`);
    const file = path.join(tmp.dir, "same.jsonl");
    writeFileSync(file, "");
    const same = await runCli(["--workspace", tmp.dir, "--replay", file, "--record", file, "hi"]);
    expect(same.code).toBe(2);
    expect(same.stderr).toBe("mini-cursor: --record and --replay name the same file; record to another one.\n");
  });

  test("offline, the TodoList request plays the demo and stops with one sentence when its first command is declined", async () => {
    const r = await runCli(["--workspace", tmp.dir, "--json", "create a React todo app with Vite"]);
    // Nothing it asked for ran: not a success (issue 14, item 1).
    expect(r.code).toBe(4);
    const events = jsonEvents(r.stdout);
    expect(events.filter((e) => e.type === "tool_call").map((e) => e.args)).toEqual([
      { command: "npm create vite@latest react-todo-app -- --template react-ts --no-interactive", timeoutMs: 180000 },
    ]);
    const final = String(events.find((e) => e.type === "final")?.text);
    expect(final).toContain(
      "The run diverged from the recording demos/todo-app.jsonl at model request 2: `npm create vite@latest react-todo-app -- --template react-ts --no-interactive` was declined, where the recorded run ended with exit code 0.",
    );
    expect(final).toContain("--approval full-auto");
    expect(existsSync(path.join(tmp.dir, "react-todo-app"))).toBe(false);
  });
});
