import path from "node:path";
import type { ToolMessage } from "@langchain/core/messages";
import { prepareMcp } from "../../src/app/mcp.js";
import type { McpHub } from "../../src/mcp/hub.js";
import { mcpTestSettings, stdioServer, writeUserConfig } from "../helpers/mcp-servers.js";
import { useWorkspaceAndHome } from "../helpers/server-home.js";

/**
 * MCP results arrive as the server meant them: a real stdio server of our own
 * (helpers/mcp-test-server.mjs --content-tools) returns every content type the spec defines,
 * rejects arguments that do not fit its schema, and reports progress. Written against the
 * behaviour of the reference server @modelcontextprotocol/server-everything, as our own cases.
 */

let notes: string[];
let hub: McpHub | undefined;

beforeEach(() => {
  notes = [];
});
const dirs = useWorkspaceAndHome(async () => {
  await hub?.close();
  hub = undefined;
});

async function startHub(env: NodeJS.ProcessEnv = {}): Promise<McpHub> {
  writeUserConfig(path.join(dirs.home.dir, "config.json"), {
    mcpServers: { local: stdioServer(path.join(dirs.home.dir, "local.pid"), "--content-tools") },
  });
  const made = await prepareMcp(mcpTestSettings(dirs.ws.dir, dirs.home.dir, env), (t) => notes.push(t));
  if (!made) throw new Error("no hub");
  hub = made;
  return made;
}

function call(h: McpHub, name: string, args: Record<string, unknown> = {}) {
  const tool = h.tools.find((t) => t.name === name);
  if (!tool) throw new Error(`no tool ${name}: ${h.tools.map((t) => t.name).join(", ")}`);
  return tool.invoke({ type: "tool_call", id: `call_${name}`, name, args }) as Promise<ToolMessage>;
}

test("every content type reaches the model: text as is, resources with their URI, binary as a one-line note", async () => {
  const h = await startHub();
  const result = await call(h, "local__everything");
  expect([result.status, result.content]).toEqual([
    "success",
    [
      "plain text",
      "[image (image/png, 70 bytes) returned by the tool; images are not shown to you]",
      "[audio (audio/wav, 12 bytes) returned by the tool; audio is not passed on]",
      '[resource link: file:///docs/guide.md "guide.md" (text/markdown): The user guide]',
      "[resource test://notes/1 (text/plain)]",
      "note one",
      "line two",
      "[binary resource test://blobs/1 (application/octet-stream, 8 bytes) returned by the tool; binary content is not passed on]",
    ].join("\n"),
  ]);
});

test("a result that is only an embedded resource is never '(no content)'", async () => {
  const h = await startHub();
  expect((await call(h, "local__embedded", { binary: false })).content).toBe(
    "[resource test://readme.txt (text/plain)]\nread me",
  );
  expect((await call(h, "local__embedded", { binary: true })).content).toBe(
    "[binary resource test://data.bin (application/zip, 5 bytes) returned by the tool; binary content is not passed on]",
  );
});

test("arguments that do not fit name the field and what the input schema expects", async () => {
  const h = await startHub();
  const wrongType = await call(h, "local__search", { query: "x", limit: "ten" });
  expect(wrongType.status).toBe("error");
  expect(wrongType.content).toContain('Wrong: "limit" is string "ten", expected integer.');
  expect(wrongType.content).toContain(
    'The tool\'s input schema expects: query (string, required): What to look for; limit (integer, required): How many results; mode (one of "fast", "full").',
  );
  const missing = await call(h, "local__search", { query: "x" });
  expect(missing.status).toBe("error");
  expect(missing.content).toContain('Wrong: "limit" is missing (expected integer).');
  const badEnum = await call(h, "local__search", { query: "x", limit: 2, mode: "slow" });
  expect(badEnum.content).toContain('Wrong: "mode" is string "slow", expected one of "fast", "full".');
  // Arguments that fit still work.
  expect((await call(h, "local__search", { query: "x", limit: 2 })).content).toBe("2 results for x");
});

test("a long call sends a progressToken and its progress notifications show on the trace", async () => {
  const h = await startHub();
  notes.length = 0;
  expect((await call(h, "local__slow", { steps: 3 })).content).toBe("done in 3 steps");
  expect(notes).toEqual([
    "MCP local__slow: progress 33% (1/3): step 1",
    "MCP local__slow: progress 67% (2/3): step 2",
    "MCP local__slow: progress 100% (3/3): step 3",
  ]);
});

test("closing our own servers never reports them as killed", async () => {
  const h = await startHub();
  await call(h, "local__echo", { text: "hi" });
  await h.close();
  hub = undefined;
  expect(notes.filter((n) => /killed|exited|closed the connection/.test(n))).toEqual([]);
});

test("arguments the server itself refuses (JSON-RPC -32602) come back naming the field and what was expected", async () => {
  const h = await startHub();
  // Fits the input schema (an integer), so only the server can refuse it.
  const refused = await call(h, "local__limited", { limit: 500 });
  expect(refused.status).toBe("error");
  expect(refused.content).toBe(
    'Error: MCP server "local" refused the arguments of limited (invalid params, -32602): "limit" must be an integer from 1 to 100, got 500. ' +
      "The tool's input schema expects: limit (integer, required): How many results, 1 to 100.",
  );
  expect((await call(h, "local__limited", { limit: 5 })).content).toBe("5 results");
});

test("progress notifications extend the call's timeout: a call reporting progress for longer than it answers", async () => {
  // Each notification comes well within the call timeout; the whole call takes about twice it.
  const h = await startHub({ MINI_CURSOR_MCP_TIMEOUT_MS: "2000" });
  notes.length = 0;
  const result = await call(h, "local__slow", { steps: 10, every: 400 });
  expect([result.status, result.content]).toEqual(["success", "done in 10 steps"]);
  expect(notes).toHaveLength(10);
  expect(notes.at(-1)).toBe("MCP local__slow: progress 100% (10/10): step 10");
  // Without progress the same timeout still ends a call that goes quiet.
  const quiet = await call(h, "local__sleep", { ms: 60_000 });
  expect(quiet.content).toBe(
    'Error: MCP server "local" did not answer sleep within 2 s (MINI_CURSOR_MCP_TIMEOUT_MS); the call was cancelled.',
  );
});
