import path from "node:path";
import { jest } from "@jest/globals";
import type { ToolMessage } from "@langchain/core/messages";
import { prepareMcp } from "../../src/app/mcp.js";
import type { McpHub } from "../../src/mcp/hub.js";
import { mcpTestSettings, processesWith, stdioServer, writeUserConfig } from "../helpers/mcp-servers.js";
import { useWorkspaceAndHome } from "../helpers/server-home.js";

/**
 * Stopping our own MCP servers races the crash detector (the transport's close, the process's
 * exit): the stop must win every time, so a normal exit never says a server "was killed".
 * Many rounds in one test make the race likely to show.
 */

jest.setTimeout(300_000);

/** Rounds of start, call and stop. */
const STOP_ROUNDS = 12;

let hub: McpHub | undefined;

const dirs = useWorkspaceAndHome(async () => {
  await hub?.close();
  hub = undefined;
});

test("stopping our own servers, again and again, never reports one as killed or exited", async () => {
  writeUserConfig(path.join(dirs.home.dir, "config.json"), {
    mcpServers: { local: stdioServer(path.join(dirs.home.dir, "local.pid")) },
  });
  const said: string[] = [];
  for (let round = 0; round < STOP_ROUNDS; round++) {
    hub = await prepareMcp(mcpTestSettings(dirs.ws.dir, dirs.home.dir), (t) => said.push(t));
    const echo = hub!.tools.find((t) => t.name === "local__echo")!;
    // A call first, so the server is running when it is stopped.
    const result = (await echo.invoke({
      type: "tool_call",
      id: `call_${round}`,
      name: "local__echo",
      args: { text: `round ${round}` },
    })) as ToolMessage;
    expect(result.content).toBe(`local echo: round ${round}`);
    await hub!.close();
    hub = undefined;
  }
  expect(said.filter((n) => /killed|exited|closed the connection/.test(n))).toEqual([]);
  expect(processesWith(dirs.home.dir)).toEqual([]);
});
