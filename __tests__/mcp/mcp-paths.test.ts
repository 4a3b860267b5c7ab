import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { jest } from "@jest/globals";
import { baseEnv, runCli } from "../helpers/cli.js";
import { MCP_TEST_SERVER } from "../helpers/mcp-servers.js";
import { startOpenAIServer, type OpenAIServer, type ScriptToolCall } from "../helpers/openai-server.js";
import { useWorkspaceAndHome } from "../helpers/server-home.js";

/**
 * MCP tools and the rules of built-in ones (issue 28 items 1 and 2), through the real CLI, the
 * scripted OpenAI-compatible server and the SDK-written stdio test server, on both engines:
 * - a tool's top-level `path` (or `target`, `file_path`, …) argument names a workspace path (mcp/paths.ts), so two calls on
 *   one path in one turn run in the model's order while a call on another path runs beside them;
 * - a call whose arguments do not fit the tool's schema is refused before any approval question.
 */

jest.setTimeout(180_000);

let server: OpenAIServer | undefined;
const dirs = useWorkspaceAndHome(async () => {
  await server?.close();
  server = undefined;
});
beforeEach(() => {
  const files = { command: process.execPath, args: [MCP_TEST_SERVER, "stdio", "--name", "files", "--file-tools"] };
  writeFileSync(path.join(dirs.home.dir, "config.json"), JSON.stringify({ mcpServers: { files } }));
});

/** One turn of `calls`, then an answer; returns the events and each call's result as the model read it. */
async function turn(engine: string, approval: string, calls: ScriptToolCall[]) {
  server = await startOpenAIServer([{ toolCalls: calls }, { content: "Done." }]);
  const r = await runCli(
    ["--workspace", dirs.ws.dir, "--engine", engine, "--approval", approval, "--sandbox", "off", "--json", "go"],
    {
      env: baseEnv({
        HOME: dirs.home.dir,
        MINI_CURSOR_USER_CONFIG: path.join(dirs.home.dir, "config.json"),
        MINI_CURSOR_MCP_CACHE: path.join(dirs.home.dir, "cache.json"),
        MINI_CURSOR_TRUST_FILE: path.join(dirs.home.dir, "t.json"),
        OPENAI_BASE_URL: server.url,
        OPENAI_API_KEY: "sk-test",
      }),
      timeoutMs: 150_000,
    },
  );
  expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
  const events = r.stdout
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as { type: string });
  const tools = server.requests[1]!.messages.filter((m) => m.role === "tool");
  return { events, results: new Map(tools.map((m) => [m.tool_call_id!, String(m.content)])) };
}

const append = (id: string, args: Record<string, unknown>): ScriptToolCall => ({ id, name: "files__append", args });

describe.each(["graph", "loop"])("--engine %s", (engine) => {
  test("two MCP calls on one path in one turn run in order; a call on another path runs beside them", async () => {
    // The first call holds log.txt until other.txt exists: only a call on another path that runs
    // at the same time can make it, and the second call on log.txt must wait for the first.
    const { results } = await turn(engine, "full-auto", [
      append("first", { path: "log.txt", text: "first", waitFor: "other.txt" }),
      append("second", { path: "log.txt", text: "second" }),
      append("beside", { path: "other.txt", text: "beside" }),
    ]);
    expect(results).toEqual(
      new Map([
        ["first", "appended to log.txt"],
        ["second", "appended to log.txt"],
        ["beside", "appended to other.txt"],
      ]),
    );
    expect(readFileSync(path.join(dirs.ws.dir, "log.txt"), "utf8")).toBe("first\nsecond\n");
    expect(readFileSync(path.join(dirs.ws.dir, "other.txt"), "utf8")).toBe("beside\n");
  });

  test("an MCP call's `target` argument is a path too: a call on that file in the same turn waits for it", async () => {
    // append_pair reads log.txt at once and writes it once other.txt exists; the append on log.txt
    // must wait for it (issue 42 kind 5: only `path` was taken for a path, so "second" was lost).
    const { results } = await turn(engine, "full-auto", [
      {
        id: "pair",
        name: "files__append_pair",
        args: { path: "a.txt", target: "log.txt", text: "first", waitFor: "other.txt" },
      },
      append("second", { path: "log.txt", text: "second" }),
      append("beside", { path: "other.txt", text: "beside" }),
    ]);
    expect(results).toEqual(
      new Map([
        ["pair", "appended to a.txt and log.txt"],
        ["second", "appended to log.txt"],
        ["beside", "appended to other.txt"],
      ]),
    );
    expect(readFileSync(path.join(dirs.ws.dir, "log.txt"), "utf8")).toBe("first\nsecond\n");
  });

  test("in suggest mode an MCP call whose arguments do not fit is refused before any question", async () => {
    const { events, results } = await turn(engine, "suggest", [
      append("missing", { path: "x.txt" }),
      append("unknown", { path: "x.txt", text: "x", mode: "a" }),
    ]);
    expect(events.filter((e) => e.type === "approval")).toEqual([]);
    const expects =
      "The tool's input schema expects: path (string, required); text (string, required); waitFor (string).\nThe call was not run: call it again with valid arguments.";
    expect(results).toEqual(
      new Map([
        [
          "missing",
          `Error: the arguments do not match the input schema of files__append. Wrong: "text" is missing (expected string). ${expects}`,
        ],
        [
          "unknown",
          'Error: files__append does not take "mode".\nIts arguments are: path, text, waitFor.\nThe call was not run: call it again with valid arguments.',
        ],
      ]),
    );
    expect(() => readFileSync(path.join(dirs.ws.dir, "x.txt"))).toThrow(/ENOENT/);
  });
});
