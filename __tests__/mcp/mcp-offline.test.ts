import { writeFileSync } from "node:fs";
import path from "node:path";
import { baseEnv, PROJECT_ROOT, runCli } from "../helpers/cli.js";
import { makeTempDir } from "../helpers/tmp.js";

/**
 * MCP without a key (issue 31, item 6): a hand-written recording that calls an MCP server's tool,
 * played with --replay. MCP calls ask for approval in every mode but full-auto (or a server the
 * config's mcp.allow names), and off a terminal a question is a "no": the how-to says so.
 */

const SERVER = path.join(PROJECT_ROOT, "__tests__", "helpers", "mcp-test-server.mjs");

let ws: ReturnType<typeof makeTempDir>;
let home: ReturnType<typeof makeTempDir>;
beforeEach(() => {
  ws = makeTempDir();
  home = makeTempDir();
  writeFileSync(
    path.join(home.dir, "config.json"),
    JSON.stringify({ mcpServers: { demo: { command: process.execPath, args: [SERVER, "stdio", "--name", "demo"] } } }),
  );
  const ai = (content: string, calls: object[]) =>
    JSON.stringify({
      type: "ai",
      data: { content, tool_calls: calls, invalid_tool_calls: [], additional_kwargs: {}, response_metadata: {} },
    });
  writeFileSync(
    path.join(ws.dir, "mcp.jsonl"),
    [
      '{"type":"header","format":"mini-cursor-recording","version":1,"model":"hand-written"}',
      `{"type":"response","request":1,"sent":{"outcomes":[]},"message":${ai("", [{ id: "call_1", name: "demo__echo", args: { text: "hi" }, type: "tool_call" }])}}`,
      `{"type":"response","request":2,"sent":{"outcomes":[{"tool":"demo__echo","what":"demo__echo","outcome":"ok"}]},"message":${ai("The server said hi.", [])}}`,
      "",
    ].join("\n"),
  );
});
afterEach(() => {
  ws.cleanup();
  home.cleanup();
});

const cli = (...args: string[]) =>
  runCli(["--workspace", ws.dir, "--sandbox", "off", "--json", "--replay", path.join(ws.dir, "mcp.jsonl"), ...args], {
    env: baseEnv({
      HOME: home.dir,
      MINI_CURSOR_USER_CONFIG: path.join(home.dir, "config.json"),
      MINI_CURSOR_MCP_CACHE: path.join(home.dir, "cache.json"),
      MINI_CURSOR_TRUST_FILE: path.join(home.dir, "t.json"),
    }),
    timeoutMs: 90_000,
  });

/** Each run starts the CLI and an MCP server: room for a busy machine. */
const TEST_DEADLINE_MS = 180_000;

const results = (stdout: string) =>
  stdout
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as { type: string; name?: string; content?: string; status?: string })
    .filter((e) => e.type === "tool_result");

test("a replay calls the MCP tool with --approval full-auto", async () => {
  const r = await cli("--approval", "full-auto", "say hi through MCP");
  expect(r.code).toBe(0);
  expect(results(r.stdout).map((e) => [e.name, e.status, e.content])).toEqual([
    ["demo__echo", "success", "demo echo: hi"],
  ]);
});

test(
  "in another mode, off a terminal, the MCP call is declined and the replay says it diverged",
  async () => {
    const r = await cli("--approval", "auto-edit", "say hi through MCP");
    expect(results(r.stdout).map((e) => e.name)).toEqual(["demo__echo"]);
    expect(results(r.stdout)[0]!.content).toMatch(/not run/);
  },
  TEST_DEADLINE_MS,
);
