import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { inToolset } from "../../src/tools/index.js";

type AgentTool = StructuredToolInterface;
import path from "node:path";
import { ToolMessage } from "@langchain/core/messages";
import { afterEach, beforeEach, describe, expect, it } from "@jest/globals";
import { executeCommandTool, executeCommand } from "../../src/tools/execute-command.js";
import { createToolContext, type OutputChunk, type ToolContext } from "../../src/tools/context.js";
import { createProcessRegistry, KILL_GRACE_MS, type ProcessRegistry } from "../../src/workspace/processes.js";
import { makeTempDir, waitFor } from "../helpers/tmp.js";
import { isAlive, pidsFrom, killPids } from "../helpers/pids.js";
import { readFileTool } from "../../src/tools/read-file.js";
import { stateDirOf } from "../helpers/state-dir.js";

let dir: string;
let cleanup: () => void;
let registry: ProcessRegistry;
let chunks: OutputChunk[];
let ctx: ToolContext;
let execute: AgentTool;
const seenPids = new Set<number>();

/** Calls the tool the way a model does: a plain args object, the result a string. */
async function call(args: Record<string, unknown>, config?: { signal?: AbortSignal }): Promise<string> {
  const result: unknown = await execute.invoke(args as never, config);
  expect(typeof result).toBe("string");
  return result as string;
}

beforeEach(() => {
  ({ dir, cleanup } = makeTempDir());
  registry = createProcessRegistry();
  chunks = [];
  ctx = createToolContext(
    { workspace: dir, onOutput: (c) => chunks.push(c), env: { PATH: process.env.PATH, HOME: process.env.HOME } },
    registry,
  );
  execute = inToolset(executeCommandTool(ctx));
  seenPids.clear();
});

afterEach(async () => {
  await registry.stopAll();
  killPids(seenPids);
  cleanup();
});

describe("execute_command", () => {
  it("is named and described for the model", () => {
    expect(execute.name).toBe("execute_command");
    for (const phrase of [
      "workingDirectory",
      "`cd`",
      "stdin is closed",
      "120 s",
      "600000",
      "30,000",
      "saved in a file outside the workspace whose path the result gives; read_file reads it",
      "bg-1",
      "`&`",
    ]) {
      expect(execute.description).toContain(phrase);
    }
  });

  it("returns the exit code first, then the output", async () => {
    expect(await call({ command: "echo hello" })).toBe("Exit code: 0\nhello");
    expect(await call({ command: "echo partial >&2; exit 7" })).toBe("Exit code: 7\npartial");
    expect(await call({ command: "true" })).toBe("Exit code: 0\n(no output)");
  });

  it("says clearly when the command does not exist", async () => {
    expect(await call({ command: "nosuchprogram-abc" })).toBe(
      "Exit code: 127 (command not found: check the program's name and that it is installed)\nbash: line 1: nosuchprogram-abc: command not found",
    );
  });

  it("keeps stdout and stderr in order", async () => {
    expect(await call({ command: "echo 1; echo 2 >&2; echo 3; echo 4 >&2" })).toBe("Exit code: 0\n1\n2\n3\n4");
  });

  it("runs in a workingDirectory inside the workspace", async () => {
    mkdirSync(path.join(dir, "pkg", "src"), { recursive: true });
    expect(await call({ command: "pwd", workingDirectory: "pkg/src" })).toBe(`Exit code: 0\n${dir}/pkg/src`);
    expect(await call({ command: "pwd", workingDirectory: "." })).toBe(`Exit code: 0\n${dir}`);
    expect(await call({ command: "pwd" })).toBe(`Exit code: 0\n${dir}`);
  });

  it("refuses a workingDirectory outside the workspace, missing, or not a directory, without running", async () => {
    writeFileSync(path.join(dir, "file.txt"), "x");
    const marker = path.join(dir, "ran");
    const command = `touch ${marker}`;
    expect(await call({ command, workingDirectory: ".." })).toMatch(/^Refused: "\.\." is outside the workspace\./);
    expect(await call({ command, workingDirectory: "/etc" })).toMatch(/^Refused: "\/etc" is outside the workspace\./);
    expect(await call({ command, workingDirectory: "sub/../../x" })).toMatch(/is outside the workspace/);
    expect(await call({ command, workingDirectory: "missing" })).toBe(
      '"missing" does not exist. List the parent directory to see what is there.',
    );
    expect(await call({ command, workingDirectory: "file.txt" })).toBe('"file.txt" is a file, not a directory.');
    expect(() => readFileSync(marker)).toThrow();
  });

  it("times out, stops the group even when it ignores SIGTERM, and says so", async () => {
    const started = Date.now();
    const text = await call({ command: "trap '' TERM; echo waiting; echo pid=$$; sleep 60", timeoutMs: 1000 });
    expect(Date.now() - started).toBeLessThan(1000 + KILL_GRACE_MS + 3_000);
    const lines = text.split("\n");
    expect(lines[0]).toBe(
      "Timed out after 1 s; process group stopped (it ignored SIGTERM, so it got SIGKILL after 2 s).",
    );
    expect(lines[1]).toBe("Exit code: 137 (killed by SIGKILL)");
    expect(lines[2]).toBe("waiting");
    const [pid] = pidsFrom(text);
    seenPids.add(pid!);
    expect(isAlive(pid!)).toBe(false);
  });

  it("clamps a timeout above the maximum and says so", async () => {
    expect(await call({ command: "echo ok", timeoutMs: 900_000 })).toBe(
      "Exit code: 0\nNote: timeoutMs 900000 is above the maximum; used 600 s.\nok",
    );
  });

  it("does not wait for a backgrounded child, and stops it", async () => {
    const text = await call({ command: "sleep 100 & echo pid=$!" });
    expect(text).toMatch(/^Exit code: 0\npid=\d+$/);
    const [pid] = pidsFrom(text);
    seenPids.add(pid!);
    await waitFor(() => !isAlive(pid!), 5_000);
  });

  it("truncates a flood to head + tail and saves the full output for read_file", async () => {
    const text = await call({ command: "seq 1 2000000" });
    expect(text.length).toBeLessThan(31_000);
    expect(text.startsWith("Exit code: 0\n1\n2\n3\n")).toBe(true);
    expect(text.endsWith("\n1999999\n2000000")).toBe(true);
    const notice = /Full output \(2,000,000 lines\) saved to (\S+\.log); page through it with read_file\./.exec(text);
    expect(notice).not.toBeNull();
    const file = notice![1]!;
    expect(path.dirname(file)).toBe(path.join(stateDirOf(dir), "output"));
    const saved = readFileSync(file, "utf8");
    expect(saved.split("\n").length - 1).toBe(2_000_000);
    expect(saved.slice(-16)).toBe("1999999\n2000000\n");
    expect(existsSync(path.join(dir, ".mini-cursor"))).toBe(false);
    // The model pages through it with read_file, by the path it was given.
    const read = inToolset(readFileTool(ctx));
    expect(await read.invoke({ filePath: file, offset: 1999999, limit: 5 } as never)).toBe(
      "1999999\t1999999\n2000000\t2000000\n\n[Lines 1999999-2000000 of 2000000, end of file.]",
    );
  });

  it("leaves a dev server in the background with its URL and id, and the registry can stop it", async () => {
    writeFileSync(
      path.join(dir, "server.cjs"),
      `const http = require("node:http");
const server = http.createServer((req, res) => res.end("ok " + req.url));
server.listen(0, "127.0.0.1", () => console.log("\\x1b[36mLocal: http://127.0.0.1:" + server.address().port + "/\\x1b[0m"));
`,
    );
    const started = Date.now();
    const text = await call({ command: "node server.cjs" });
    expect(Date.now() - started).toBeLessThan(10_000);
    const [bg] = registry.list();
    expect(bg).toBeDefined();
    seenPids.add(bg!.pid);
    expect(bg!.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    expect(text).toBe(
      [
        `Running in the background as bg-1 (pid ${bg!.pid}) at ${bg!.url}.`,
        `It keeps running after this call and is stopped when mini-cursor exits; do not start it again. To stop it now: kill -- -${bg!.pid}`,
        "Output so far:",
        `Local: ${bg!.url}`,
      ].join("\n"),
    );
    expect(await (await fetch(`${bg!.url}ping`)).text()).toBe("ok /ping");

    expect((await registry.stopAll()).map((p) => p.id)).toEqual(["bg-1"]);
    expect(isAlive(bg!.pid)).toBe(false);
    await expect(fetch(bg!.url!)).rejects.toThrow();
  });

  it("stops the process group when the call is aborted", async () => {
    const controller = new AbortController();
    const pending = call({ command: "echo pid=$$; sleep 60 & echo pid=$!; wait" }, { signal: controller.signal });
    await waitFor(() => pidsFrom(chunks.map((c) => c.text).join("")).length === 2);
    controller.abort();
    await expect(pending).rejects.toThrow(/abort/i);
    const pids = pidsFrom(chunks.map((c) => c.text).join(""));
    pids.forEach((p) => seenPids.add(p));
    await waitFor(() => pids.every((p) => !isAlive(p)), 5_000);
  });

  it("reports a cancelled command with its output", async () => {
    const controller = new AbortController();
    const pending = executeCommand(ctx, { command: "echo started; sleep 60" }, { signal: controller.signal });
    await waitFor(() => chunks.some((c) => c.text.includes("started")));
    controller.abort();
    expect(await pending).toMatch(
      /^Cancelled after \d+(\.\d)? s; process group stopped\.\nExit code: 143 \(killed by SIGTERM\)\nstarted$/,
    );
  });

  it("gives the command a non-interactive environment and closed stdin", async () => {
    expect(await call({ command: 'echo "$PAGER $GIT_PAGER $GIT_TERMINAL_PROMPT $npm_config_yes $MINI_CURSOR"' })).toBe(
      "Exit code: 0\ncat cat 0 true 1",
    );
    expect(await call({ command: "cat; echo done" })).toBe("Exit code: 0\ndone");
  });

  it("keeps npm's update notice and fund lines out of what the model reads (issue 14, item 16)", async () => {
    // Empty npmrc files, so only the environment can set them (this machine's ~/.npmrc may too).
    const command =
      ": > u.npmrc; : > g.npmrc; npm --userconfig u.npmrc --globalconfig g.npmrc config get update-notifier fund yes";
    expect(await call({ command })).toBe("Exit code: 0\nupdate-notifier=false\nfund=false\nyes=true");
  });

  it("streams live output tagged with the tool call id", async () => {
    const message: unknown = await execute.invoke({
      id: "call_42",
      name: "execute_command",
      type: "tool_call",
      args: { command: "echo one; echo two >&2" },
    });
    expect(message).toBeInstanceOf(ToolMessage);
    expect((message as ToolMessage).content).toBe("Exit code: 0\none\ntwo");
    expect(chunks.every((c) => c.toolCallId === "call_42")).toBe(true);
    expect(chunks.map((c) => c.text).join("")).toBe("one\ntwo\n");
  });
});
