import { expect, jest, test } from "@jest/globals";
import { existsSync } from "node:fs";
import path from "node:path";
import { cacheKey, storeTools } from "../../src/mcp/cache.js";
import { baseEnv, collect, startCli } from "../helpers/cli.js";
import { processesWith, readPid, stdioServer, writeUserConfig } from "../helpers/mcp-servers.js";
import { startOpenAIServer, type OpenAIServer } from "../helpers/openai-server.js";
import { isAlive } from "../helpers/pids.js";
import { waitFor } from "../helpers/tmp.js";
import { useWorkspaceAndHome } from "../helpers/server-home.js";

/**
 * SIGTERM and SIGHUP end the run within FORCED_EXIT_GRACE_MS even when the orderly shutdown
 * would hang: here an MCP server that never answers initialize (start timeout ten minutes) and
 * ignores SIGTERM, reached by a tool call of the run. Without the forced exit the run would wait
 * for the start timeout. Nothing of the server may survive.
 */

jest.setTimeout(120_000);

/** Far more than the 1 s grace, far less than the ten minutes the orderly shutdown would wait. */
const EXIT_DEADLINE_MS = 15_000;

let provider: OpenAIServer | undefined;

const dirs = useWorkspaceAndHome(async () => {
  await provider?.close();
  provider = undefined;
});

test.each(["SIGTERM", "SIGHUP"] as const)(
  "%s while the orderly shutdown would hang: exits at once with 130, no child survives",
  async (signal) => {
    provider = await startOpenAIServer([
      { toolCalls: [{ name: "local__echo", args: { text: "hi" } }] },
      { content: "never reached" },
    ]);
    const pidFile = path.join(dirs.home.dir, "local.pid");
    const config = stdioServer(pidFile, "--hang-at-start", "--ignore-sigterm");
    const userConfig = path.join(dirs.home.dir, "config.json");
    const cacheFile = path.join(dirs.home.dir, "cache.json");
    writeUserConfig(userConfig, { mcpServers: { local: config } });
    // Its tools are known from an earlier run, so the server starts only when the model calls one.
    storeTools(cacheFile, cacheKey(dirs.ws.dir, { name: "local", config, file: userConfig }), [
      {
        name: "echo",
        description: "Echoes.",
        inputSchema: { type: "object", properties: { text: { type: "string" } } },
      },
    ]);
    const env = baseEnv({
      OPENAI_BASE_URL: provider.url,
      OPENAI_API_KEY: "test",
      MINI_CURSOR_SANDBOX: "off",
      HOME: dirs.home.dir,
      MINI_CURSOR_USER_CONFIG: userConfig,
      MINI_CURSOR_MCP_CACHE: cacheFile,
      MINI_CURSOR_TRUST_FILE: path.join(dirs.home.dir, "t.json"),
      MINI_CURSOR_MCP_START_TIMEOUT_MS: "600000",
    });
    const child = startCli(["--workspace", dirs.ws.dir, "--json", "--approval", "full-auto", "call it"], { env });
    const done = collect(child, 90_000);
    await waitFor(() => existsSync(pidFile), 60_000);
    const server = readPid(pidFile);
    const sent = Date.now();
    process.kill(child.pid!, signal);
    const result = await done;
    expect(Date.now() - sent).toBeLessThan(EXIT_DEADLINE_MS);
    expect(result.code).toBe(130);
    expect(isAlive(server)).toBe(false);
    expect(processesWith(dirs.home.dir)).toEqual([]);
  },
);
