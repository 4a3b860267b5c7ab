import { jest } from "@jest/globals";
import net from "node:net";
import path from "node:path";
import { cacheKey, storeTools } from "../src/mcp/cache.js";
import { baseEnv, runCli } from "./helpers/cli.js";
import { stdioServer, writeUserConfig } from "./helpers/mcp-servers.js";
import { startOpenAIServer, type OpenAIServer } from "./helpers/openai-server.js";
import { useWorkspaceAndHome } from "./helpers/server-home.js";

/**
 * Issue 26 item 6 for what is not the provider: an MCP server slow to answer initialize and a
 * PostgreSQL URL whose port accepts connections but never answers are waits like any other,
 * said as a `notice` event (wait: true) in --json once MINI_CURSOR_WAIT_NOTICE_MS has passed;
 * the database is given up after its connect timeout with a sentence that says so.
 */

jest.setTimeout(180_000);

/** Short, so the notice comes early; the waits below last several times longer. */
const NOTICE_MS = "300";

let provider: OpenAIServer | undefined;
const dirs = useWorkspaceAndHome(async () => {
  await provider?.close();
  provider = undefined;
});

type Event = { type: string; message?: string; wait?: boolean; [k: string]: unknown };
const events = (stdout: string): Event[] =>
  stdout
    .trim()
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Event);

test("an MCP server slow to answer initialize: a notice in --json names it while the run waits", async () => {
  provider = await startOpenAIServer([{ content: "done" }]);
  const config = stdioServer(path.join(dirs.home.dir, "slow.pid"), "--slow-start", "3000");
  writeUserConfig(path.join(dirs.home.dir, "config.json"), { mcpServers: { slow: config } });
  const r = await runCli(["--workspace", dirs.ws.dir, "--json", "--approval", "full-auto", "hi"], {
    env: baseEnv({
      OPENAI_BASE_URL: provider.url,
      HOME: dirs.home.dir,
      MINI_CURSOR_USER_CONFIG: path.join(dirs.home.dir, "config.json"),
      MINI_CURSOR_MCP_CACHE: path.join(dirs.home.dir, "cache.json"),
      MINI_CURSOR_TRUST_FILE: path.join(dirs.home.dir, "t.json"),
      MINI_CURSOR_SANDBOX: "off",
      MINI_CURSOR_WAIT_NOTICE_MS: NOTICE_MS,
    }),
  });
  expect(r.code).toBe(0);
  const all = events(r.stdout);
  expect(all[0]).toEqual({
    type: "notice",
    step: 0,
    message: `Waiting for MCP server "slow" (${config.command} ${config.args.join(" ")}) to start (at most 30 s, MINI_CURSOR_MCP_START_TIMEOUT_MS)…`,
    wait: true,
  });
  // It started in the end: its tools were offered, and the run went on.
  expect(provider.requests[0]!.tools!.map((t) => t.function.name)).toContain("slow__echo");
  expect(all.filter((e) => e.type === "final").map((e) => e.text)).toEqual(["done"]);
});

test("an MCP server started by the model's first call (its tools cached) says the wait mid-run", async () => {
  provider = await startOpenAIServer([
    { toolCalls: [{ name: "slow__echo", args: { text: "hi" } }] },
    { content: "done" },
  ]);
  const config = stdioServer(path.join(dirs.home.dir, "slow.pid"), "--slow-start", "3000");
  const userConfig = path.join(dirs.home.dir, "config.json");
  const cacheFile = path.join(dirs.home.dir, "cache.json");
  writeUserConfig(userConfig, { mcpServers: { slow: config } });
  storeTools(cacheFile, cacheKey(dirs.ws.dir, { name: "slow", config, file: userConfig }), [
    { name: "echo", description: "Echoes.", inputSchema: { type: "object", properties: { text: { type: "string" } } } },
  ]);
  const r = await runCli(["--workspace", dirs.ws.dir, "--json", "--approval", "full-auto", "hi"], {
    env: baseEnv({
      OPENAI_BASE_URL: provider.url,
      HOME: dirs.home.dir,
      MINI_CURSOR_USER_CONFIG: userConfig,
      MINI_CURSOR_MCP_CACHE: cacheFile,
      MINI_CURSOR_TRUST_FILE: path.join(dirs.home.dir, "t.json"),
      MINI_CURSOR_SANDBOX: "off",
      MINI_CURSOR_WAIT_NOTICE_MS: NOTICE_MS,
    }),
  });
  expect(r.code).toBe(0);
  const all = events(r.stdout);
  // (A busy machine may add the provider's own wait notices: only the server's are counted.)
  const waits = all.filter((e) => e.type === "notice" && e.wait && String(e.message).includes("MCP server"));
  expect(waits.map((e) => e.message)).toEqual([
    `Waiting for MCP server "slow" (${config.command} ${config.args.join(" ")}) to start (at most 30 s, MINI_CURSOR_MCP_START_TIMEOUT_MS)…`,
  ]);
  // Said between the call and its result.
  const at = (e: Event | undefined) => all.indexOf(e!);
  expect(at(waits[0])).toBeGreaterThan(at(all.find((e) => e.type === "tool_call")));
  expect(at(waits[0])).toBeLessThan(at(all.find((e) => e.type === "tool_result")));
  expect(all.find((e) => e.type === "tool_result")).toMatchObject({ status: "success", content: "local echo: hi" });
});

test("a PostgreSQL port that accepts connections and never answers: a notice, then the clear error after the connect timeout", async () => {
  // Accepts every connection and never writes a byte.
  const sockets: net.Socket[] = [];
  const silent = net.createServer((socket) => sockets.push(socket));
  await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
  const port = (silent.address() as net.AddressInfo).port;
  try {
    const url = `postgres://me:secret@127.0.0.1:${port}/mc`;
    const r = await runCli(["--workspace", dirs.ws.dir, "--json", "hi"], {
      env: baseEnv({ MINI_CURSOR_CHECKPOINTER: url, MINI_CURSOR_WAIT_NOTICE_MS: NOTICE_MS }),
    });
    expect(r.code).toBe(1);
    // The password is one of the secrets the output gate blanks everywhere.
    const masked = `postgres://me:[redacted]@127.0.0.1:${port}/mc`;
    expect(events(r.stdout)).toEqual([
      {
        type: "notice",
        step: 0,
        message: `Waiting for the PostgreSQL database at ${masked} to answer (at most 10 s)…`,
        wait: true,
      },
    ]);
    expect(r.stderr).toBe(
      `mini-cursor: The PostgreSQL database at ${masked} did not answer within 10 s of connecting. ` +
        "Check that the server is running and answering, and that MINI_CURSOR_CHECKPOINTER (or --checkpointer) names a PostgreSQL server (not another service on that port); unset it to keep threads in the workspace (SQLite).\n",
    );
    expect(r.stdout + r.stderr).not.toContain("secret");
  } finally {
    for (const s of sockets) s.destroy();
    await new Promise((resolve) => silent.close(resolve));
  }
});
