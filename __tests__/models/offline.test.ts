import { HumanMessage, ToolMessage } from "@langchain/core/messages";
import { MemorySaver } from "@langchain/langgraph";
import { writeFileSync } from "node:fs";
import path from "node:path";
import type { AgentEvent } from "../../src/contracts/events.js";
import { createGraph } from "../../src/graph/graph.js";
import { createGraphEngine } from "../../src/graph/engine.js";
import { OfflineChatModel, offlineHelp, parseOfflineIntent } from "../../src/models/offline.js";
import { createTools } from "../../src/tools/index.js";
import { makeTempDir } from "../helpers/tmp.js";

test.each([
  ["list the files here", { tool: "list_directory", args: { directoryPath: "." } }],
  ["list the files in src", { tool: "list_directory", args: { directoryPath: "src" } }],
  ["ls src/agent", { tool: "list_directory", args: { directoryPath: "src/agent" } }],
  ["ls -la", { tool: "list_directory", args: { directoryPath: "." } }],
  ["what's in docs?", { tool: "list_directory", args: { directoryPath: "docs" } }],
  ["列出 src 目录", { tool: "list_directory", args: { directoryPath: "src" } }],
  ["read package.json", { tool: "read_file", args: { filePath: "package.json" } }],
  ["show me the file `src/cli.ts`", { tool: "read_file", args: { filePath: "src/cli.ts" } }],
  ["读取 package.json", { tool: "read_file", args: { filePath: "package.json" } }],
  ["查看文件 README.md", { tool: "read_file", args: { filePath: "README.md" } }],
  [
    "create a file hello.txt with content Hello world",
    { tool: "write_file", args: { filePath: "hello.txt", content: "Hello world" } },
  ],
  ['write "hi there" to notes/a.txt', { tool: "write_file", args: { filePath: "notes/a.txt", content: "hi there" } }],
  ["创建文件 hello.txt 内容为 你好", { tool: "write_file", args: { filePath: "hello.txt", content: "你好" } }],
  ["run `npm test`", { tool: "execute_command", args: { command: "npm test" } }],
  ["run echo hi", { tool: "execute_command", args: { command: "echo hi" } }],
  ["运行 `ls -la`", { tool: "execute_command", args: { command: "ls -la" } }],
  ["执行 git status", { tool: "execute_command", args: { command: "git status" } }],
])("%s", (request, expected) => {
  expect(parseOfflineIntent(request)).toEqual(expected);
});

test("anything else gets an honest answer about what works offline", () => {
  expect(parseOfflineIntent("refactor the auth module to use JWT")).toBeUndefined();
  expect(offlineHelp("refactor")).toContain("OPENAI_API_KEY");
  expect(offlineHelp("帮我重构")).toContain("离线模型");
});

test("it is a real chat model: tool call first, then an answer with what the tool returned", async () => {
  const tmp = makeTempDir();
  try {
    writeFileSync(path.join(tmp.dir, "package.json"), '{ "name": "demo" }\n');
    const settings = {
      workspace: tmp.dir,
      model: "offline",
      provider: "offline" as const,
      requestTimeoutMs: 1000,
      maxRetries: 0,
      approval: "auto-edit" as const,
      maxSteps: 5,
      contextTokens: 100_000,
    };
    const graph = createGraph(settings, {
      checkpointer: new MemorySaver(),
      model: new OfflineChatModel(),
      tools: createTools({ workspace: tmp.dir }),
    });
    const events: AgentEvent[] = [];
    const engine = createGraphEngine({
      graph,
      meta: { engine: "graph", model: "offline", provider: "offline", workspace: tmp.dir },
      modelSettings: settings,
      approval: "auto-edit",
      maxSteps: 5,
    });
    const summary = await engine.run({
      task: "读取 package.json",
      threadId: "o",
      emit: (e) => events.push(e),
      approver: async () => ({ decision: "deny" }),
    });
    expect(summary.reason).toBe("done");
    const final = events.find((e) => e.type === "final") as { text: string };
    expect(final.text).toContain('{ "name": "demo" }');
    expect(final.text.startsWith("文件 package.json")).toBe(true);
  } finally {
    tmp.cleanup();
  }
});

test("fresh tool-call ids on every call", async () => {
  const model = new OfflineChatModel();
  const a = await model.invoke([new HumanMessage("list the files here")]);
  const b = await model.invoke([new HumanMessage("list the files here")]);
  expect(a.tool_calls![0]!.id).not.toBe(b.tool_calls![0]!.id);
});

describe("issue 14: the offline model does what it says", () => {
  test.each([
    ["what is in package.json?", { tool: "read_file", args: { filePath: "package.json" } }],
    ["what's in src/App.tsx", { tool: "read_file", args: { filePath: "src/App.tsx" } }],
    ["what is in src?", { tool: "list_directory", args: { directoryPath: "src" } }],
    ["read x.js and fix the bug", { tool: "read_file", args: { filePath: "x.js" }, rest: "fix the bug" }],
    [
      "run `npm test`, then fix what fails.",
      { tool: "execute_command", args: { command: "npm test" }, rest: "fix what fails" },
    ],
    ["读取 x.js 然后修复错误", { tool: "read_file", args: { filePath: "x.js" }, rest: "修复错误" }],
  ])("%s", (request, expected) => {
    expect(parseOfflineIntent(request)).toEqual(expected);
  });

  test("it says which part of a request it did not do, and why", async () => {
    const model = new OfflineChatModel();
    const first = await model.invoke([new HumanMessage("read x.js and fix the bug")]);
    const call = first.tool_calls![0]!;
    const answer = await model.invoke([
      new HumanMessage("read x.js and fix the bug"),
      first,
      new ToolMessage({
        tool_call_id: call.id!,
        name: "read_file",
        content: "     1\tlet a = 1\n\n[Lines 1-1 of 1, end of file.]",
      }),
    ]);
    expect(answer.content).toBe(
      "File x.js:\n\n     1\tlet a = 1\n\n[Lines 1-1 of 1, end of file.]\n\n" +
        'I did not do the rest of the request ("fix the bug"): the offline model follows one simple, literal instruction and cannot plan or change code. To let a real model do it, set OPENAI_API_KEY (see .env.example).',
    );
  });

  test("asked in Chinese, the TodoList demo answers in Chinese", async () => {
    const model = new OfflineChatModel();
    const first = await model.invoke([new HumanMessage("创建React TodoList应用")]);
    expect(first.content).toBe(
      "接下来：运行 `npm create vite@latest react-todo-app -- --template react-ts --no-interactive`。",
    );
    expect(first.tool_calls?.[0]).toMatchObject({
      name: "execute_command",
      args: { command: "npm create vite@latest react-todo-app -- --template react-ts --no-interactive" },
    });
    // Declined (no terminal): it stops, and says why in Chinese.
    const call = first.tool_calls![0]!;
    const declined = new ToolMessage({
      tool_call_id: call.id!,
      name: call.name,
      status: "error",
      content: "This execute_command call was not run, because the user declined it.",
      artifact: { notRun: true },
    });
    const stop = await model.invoke([new HumanMessage("创建React TodoList应用"), first, declined]);
    expect(String(stop.content)).toMatch(
      /^演示没能按录制继续下去（The run diverged from the recording demos\/todo-app\.jsonl at model request 2: .* was declined, where the recorded run ended with exit code 0\.）\n\n离线模型只能按录制好的步骤演示这个任务/,
    );
  });
});
