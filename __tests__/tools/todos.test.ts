import { readFileSync } from "node:fs";
import path from "node:path";
import { PassThrough } from "node:stream";
import { ToolMessage } from "@langchain/core/messages";
import { MAX_TODOS, todosFromResults } from "../../src/tools/todos.js";
import type { Todo } from "../../src/contracts/tools.js";
import { buildSystemPrompt } from "../../src/context/prompt.js";
import { createGraph } from "../../src/graph/graph.js";
import { loadLoopThread } from "../../src/memory/loop-threads.js";
import { createSqliteCheckpointer } from "../../src/memory/checkpointer.js";
import { createTools } from "../../src/tools/index.js";
import { resultOf } from "../../src/guard/guard.js";
import { createPrettyRenderer } from "../../src/ui/render.js";
import { baseEnv, runCli } from "../helpers/cli.js";
import { engineHarness, engineSettings, eventsOf, type EngineKind } from "../helpers/engine-harness.js";
import { startOpenAIServer, type OpenAIServer } from "../helpers/openai-server.js";
import { makeTempDir } from "../helpers/tmp.js";

/** write_todos: the list in the trace, in --json and in the thread's saved state, in both engines. */

let tmp: ReturnType<typeof makeTempDir>;
let server: OpenAIServer | undefined;
beforeEach(() => {
  tmp = makeTempDir();
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  tmp.cleanup();
});

const FIRST: Todo[] = [
  { content: "Write a.txt", status: "in_progress" },
  { content: "Check a.txt", status: "pending" },
];
const SECOND: Todo[] = [
  { content: "Write a.txt", status: "completed" },
  { content: "Check a.txt", status: "in_progress" },
];
const DONE: Todo[] = [
  { content: "Write a.txt", status: "completed" },
  { content: "Check a.txt", status: "completed" },
];

describe("the write_todos tool", () => {
  const call = (todos: unknown) => ({ id: "c1", name: "write_todos", args: { todos }, type: "tool_call" as const });

  test("accepts the whole list and hands it over in the result's artifact", async () => {
    // The guarded tool hands ToolNode a Command: the result, and the list for the thread's state.
    const { result, update } = resultOf(await createTools({ workspace: tmp.dir }).write_todos.invoke(call(FIRST)));
    expect(update).toEqual({ todos: FIRST });
    expect(result.status).toBe("success");
    expect(result.content).toBe("Todo list updated: 0 completed, 1 in progress, 1 pending. Next: Write a.txt");
    expect(result.artifact).toEqual({ todos: FIRST });
    expect(todosFromResults([result])).toEqual(FIRST);
  });

  test("refuses two items in progress, more than the limit, and unknown statuses; no list is taken from a failure", async () => {
    const tools = createTools({ workspace: tmp.dir });
    const two = (await tools.write_todos.invoke(
      call([
        { content: "a", status: "in_progress" },
        { content: "b", status: "in_progress" },
      ]),
    )) as ToolMessage;
    expect(two.status).toBe("error");
    expect(two.content).toBe(
      "Error: 2 items are in_progress; at most one may be. Mark the others pending or completed and call write_todos again.",
    );
    const many = Array.from({ length: MAX_TODOS + 1 }, (_, i) => ({ content: `step ${i}`, status: "pending" }));
    const tooMany = (await tools.write_todos.invoke(call(many))) as ToolMessage;
    expect(tooMany.status).toBe("error");
    const odd = (await tools.write_todos.invoke(call([{ content: "a", status: "done" }]))) as ToolMessage;
    expect(odd.status).toBe("error");
    expect(todosFromResults([two, tooMany, odd])).toBeUndefined();
  });

  test("its description says when to use it and when not; the system prompt, that none is left open", () => {
    const tools = createTools({ workspace: tmp.dir });
    expect(tools.write_todos.description).toContain("three or more distinct steps");
    expect(tools.write_todos.description).toContain(
      "Do not use it for a single simple step, a question, or a one-line change",
    );
    const prompt = buildSystemPrompt({ workspace: "/w", projectInstructions: null, tools: tools.map((t) => t.name) });
    expect(prompt).toContain("No todo may be left pending or in_progress.");
    expect(buildSystemPrompt({ workspace: "/w", projectInstructions: null, tools: ["read_file"] })).not.toContain(
      "todo",
    );
  });
});

test("the trace shows the list as a checklist when it changes", () => {
  const out = new PassThrough();
  let text = "";
  out.on("data", (d: Buffer) => (text += d.toString()));
  const renderer = createPrettyRenderer({ color: false, spinner: false, verbose: false, out });
  renderer.event({ type: "todos", step: 2, todos: SECOND });
  renderer.event({ type: "todos", step: 3, todos: [] });
  expect(text).toBe("  ☰ Todo list (1/2 done)\n    [x] Write a.txt\n    [>] Check a.txt\n  ☰ Todo list cleared.\n");
});

describe.each<EngineKind>(["graph", "loop"])("engine %s", (kind) => {
  test("each successful write_todos emits the list after its result and saves it in the thread's state", async () => {
    const h = engineHarness(kind, tmp.dir, [
      { toolCalls: [{ name: "write_todos", args: { todos: FIRST } }] },
      {
        toolCalls: [
          { name: "write_file", args: { filePath: "a.txt", content: "A\n" } },
          { name: "write_todos", args: { todos: SECOND } },
        ],
      },
      // Two in progress: refused, and the saved list stays as it was.
      {
        toolCalls: [
          {
            name: "write_todos",
            args: {
              todos: [
                { content: "x", status: "in_progress" },
                { content: "y", status: "in_progress" },
              ],
            },
          },
        ],
      },
      { toolCalls: [{ name: "write_todos", args: { todos: DONE } }] },
      "Wrote and checked a.txt.",
    ]);
    const summary = await h.run("write a.txt and check it");
    expect(summary.reason).toBe("done");
    expect(readFileSync(path.join(tmp.dir, "a.txt"), "utf8")).toBe("A\n");
    const trace = h.events
      .filter((e) => ["tool_call", "tool_result", "todos", "final"].includes(e.type))
      .map((e) =>
        e.type === "tool_call"
          ? `call ${e.name}`
          : e.type === "tool_result"
            ? `result ${e.name} ${e.status}`
            : e.type === "todos"
              ? `todos ${e.step}`
              : "final",
      );
    expect(trace).toEqual([
      "call write_todos",
      "result write_todos success",
      "todos 1",
      "call write_file",
      "call write_todos",
      "result write_file success",
      "result write_todos success",
      "todos 2",
      "call write_todos",
      "result write_todos error",
      "call write_todos",
      "result write_todos success",
      "todos 4",
      "final",
    ]);
    expect(eventsOf(h.events, "todos").map((e) => e.todos)).toEqual([FIRST, SECOND, DONE]);
    expect(await h.todos()).toEqual(DONE);
    // The model reads its list back as a short confirmation.
    const results = (await h.history())
      .filter((m) => ToolMessage.isInstance(m) && m.name === "write_todos")
      .map((m) => m.content);
    expect(results[0]).toBe("Todo list updated: 0 completed, 1 in progress, 1 pending. Next: Write a.txt");
    expect(results[3]).toBe("Todo list updated: 2 completed, 0 in progress, 0 pending. Every item is completed.");
  });

  test("the list survives to the next request on the same thread; a run without write_todos emits none", async () => {
    const h = engineHarness(kind, tmp.dir, [
      { toolCalls: [{ name: "write_todos", args: { todos: FIRST } }] },
      "Planned.",
      "Hello.",
    ]);
    await h.run("plan it");
    await h.run("say hello");
    expect(eventsOf(h.events, "todos")).toHaveLength(1);
    expect(await h.todos()).toEqual(FIRST);
  });

  test("--json carries the todos event, and the saved thread (SQLite checkpoint, loop thread file) holds the list", async () => {
    const workspace = tmp.dir;
    server = await startOpenAIServer([
      { toolCalls: [{ name: "write_todos", args: { todos: FIRST } }] },
      { content: "Planned." },
    ]);
    const env = baseEnv({ OPENAI_BASE_URL: server.url, OPENAI_API_KEY: "test", MINI_CURSOR_MAX_RETRIES: "1" });
    const r = await runCli(
      ["--workspace", workspace, "--engine", kind, "--thread", "todo-thread", "--json", "plan the work"],
      { env },
    );
    expect(r.code).toBe(0);
    const events = r.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { type: string });
    expect(events.filter((e) => e.type === "todos")).toEqual([{ type: "todos", step: 1, todos: FIRST }]);
    expect(events.map((e) => e.type).filter((t) => ["tool_result", "todos", "final"].includes(t))).toEqual([
      "tool_result",
      "todos",
      "final",
    ]);
    if (kind === "loop") {
      expect(loadLoopThread(workspace, "todo-thread").todos).toEqual(FIRST);
    } else {
      const checkpointer = createSqliteCheckpointer(workspace);
      try {
        const graph = createGraph(engineSettings(workspace), { checkpointer, tools: createTools({ workspace }) });
        expect((await graph.getState({ configurable: { thread_id: "todo-thread" } })).values.todos).toEqual(FIRST);
      } finally {
        (checkpointer as unknown as { db: { close(): void } }).db.close();
      }
    }
  });
});
