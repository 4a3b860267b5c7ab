import { alwaysKey, classifyCall, editReason } from "../../src/policy/approval.js";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { baseEnv, runCli } from "../helpers/cli.js";
import { engineHarness, eventsOf } from "../helpers/engine-harness.js";
import { startOpenAIServer } from "../helpers/openai-server.js";
import { makeTempDir } from "../helpers/tmp.js";

const cmd = (command: string) => ({ name: "execute_command", args: { command } });
const write = { name: "write_file", args: { filePath: "a", content: "b" } };
const edit = { name: "edit_file", args: { filePath: "a", oldString: "x", newString: "y" } };

test.each([
  ["suggest", write, true],
  ["auto-edit", write, false],
  ["full-auto", write, false],
  ["suggest", edit, true],
  ["auto-edit", edit, false],
  ["suggest", { name: "read_file", args: { filePath: "a" } }, false],
  ["suggest", { name: "list_directory", args: { directoryPath: "." } }, false],
] as const)("%s: %j asks=%s", (mode, call, asks) => {
  expect(editReason(call, mode, []) !== null).toBe(asks);
});

test("always is remembered per tool for edits and per command prefix for commands", () => {
  expect(alwaysKey(cmd("npm test"))).toBe("execute_command:npm test");
  expect(alwaysKey(cmd("git log -5 src"))).toBe("execute_command:git log -5");
  expect(alwaysKey(write)).toBe("write_file");
  expect(editReason(write, "suggest", ["write_file"])).toBeNull();
});

test.each([
  ["suggest", "ls", "run"],
  ["auto-edit", "ls", "run"],
  ["full-auto", "ls", "run"],
  ["suggest", "touch a", "ask"],
  ["auto-edit", "touch a", "ask"],
  ["full-auto", "touch a", "run"],
  ["full-auto", "rm -rf ~", "ask"],
  ["full-auto", "sudo apt install x", "ask"],
] as const)("%s: command %s → %s", async (mode, command, action) => {
  const tmp = makeTempDir();
  try {
    expect((await classifyCall(cmd(command), mode, [], { workspace: tmp.dir, home: "/home/nobody" })).action).toBe(
      action,
    );
  } finally {
    tmp.cleanup();
  }
});

test("an always answer covers a safe program's later commands, never a dangerous one", async () => {
  const tmp = makeTempDir();
  try {
    const ctx = { workspace: tmp.dir, home: "/home/nobody" };
    expect((await classifyCall(cmd("npm run build"), "auto-edit", ["execute_command:npm run build"], ctx)).action).toBe(
      "run",
    );
    expect(
      (await classifyCall(cmd("npm run deploy"), "auto-edit", ["execute_command:npm run build"], ctx)).action,
    ).toBe("ask");
    const dangerous = await classifyCall(
      cmd("rm -rf /"),
      "auto-edit",
      ["execute_command:rm", "execute_command:rm -rf"],
      ctx,
    );
    expect(dangerous.action).toBe("ask");
    expect(dangerous.alwaysAsks).toBe(true);
  } finally {
    tmp.cleanup();
  }
});

describe("read-only commands ask nothing in auto-edit", () => {
  const READING = ["ls", "cat package.json", "git status", "git log -5", "rg TODO"];

  test.each(["graph", "loop"] as const)("%s engine: a session reading the project asks no question", async (kind) => {
    const tmp = makeTempDir();
    try {
      writeFileSync(path.join(tmp.dir, "package.json"), '{"name":"x"}\n');
      const harness = engineHarness(
        kind,
        tmp.dir,
        [{ toolCalls: READING.map((command) => ({ name: "execute_command", args: { command } })) }, "done"],
        { approval: "auto-edit" },
      );
      await harness.run("look around");
      expect(harness.approvals).toEqual([]);
      const results = eventsOf(harness.events, "tool_result");
      expect(results.map((r) => r.content.startsWith("The user declined"))).toEqual(READING.map(() => false));
      expect(results.find((r) => r.id === eventsOf(harness.events, "tool_call")[1]!.id)!.content).toContain(
        '{"name":"x"}',
      );
    } finally {
      tmp.cleanup();
    }
  });

  test("CLI without a terminal (where a question would be declined): all five run", async () => {
    const tmp = makeTempDir();
    const server = await startOpenAIServer([
      { toolCalls: READING.map((command) => ({ name: "execute_command", args: { command } })) },
      { content: "done" },
    ]);
    try {
      writeFileSync(path.join(tmp.dir, "package.json"), '{"name":"x"}\n');
      const r = await runCli(
        ["--workspace", tmp.dir, "--approval", "auto-edit", "--sandbox", "off", "--json", "look around"],
        {
          env: baseEnv({ OPENAI_BASE_URL: server.url, OPENAI_API_KEY: "sk-test" }),
        },
      );
      expect(r.code).toBe(0);
      const events = r.stdout
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as { type: string; content?: string });
      expect(events.filter((e) => e.type === "approval")).toEqual([]);
      const results = events.filter((e) => e.type === "tool_result");
      expect(results).toHaveLength(READING.length);
      for (const result of results) expect(result.content).not.toMatch(/declined/);
    } finally {
      await server.close();
      tmp.cleanup();
    }
  }, 60_000);
});
