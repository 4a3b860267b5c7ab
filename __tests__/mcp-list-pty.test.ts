import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, beforeEach, expect, jest, test } from "@jest/globals";
import { baseEnv, PROJECT_ROOT } from "./helpers/cli.js";
import { useWorkspaceAndHome } from "./helpers/server-home.js";
import { createTmux, paneExitCode, requireTmux, startCliInPane, type TmuxTerminal } from "./helpers/tmux.js";

/**
 * `--mcp-list` on a real terminal (issue 31, item 5): a repository's committed MCP servers are asked
 * about first, as a session asks, and only a "yes" starts them. The pane runs the CLI and writes
 * its exit status to a file.
 */

jest.setTimeout(120_000);

const SERVER = path.join(PROJECT_ROOT, "__tests__", "helpers", "mcp-test-server.mjs");

let term: TmuxTerminal;

beforeAll(() => requireTmux());
const dirs = useWorkspaceAndHome(() => term.kill());
beforeEach(() => {
  writeFileSync(
    path.join(dirs.ws.dir, "mini-cursor.config.json"),
    JSON.stringify({
      mcpServers: { shipped: { command: process.execPath, args: [SERVER, "stdio", "--name", "shipped"] } },
    }),
  );
  term = createTmux(
    baseEnv({
      HOME: dirs.home.dir,
      MINI_CURSOR_USER_CONFIG: path.join(dirs.home.dir, "config.json"),
      MINI_CURSOR_MCP_CACHE: path.join(dirs.home.dir, "cache.json"),
      MINI_CURSOR_TRUST_FILE: path.join(dirs.home.dir, "trust.json"),
    }),
  );
});

const QUESTION = "mini-cursor.config.json in this repository has MCP servers (shipped)";

async function listOnTerminal(): Promise<void> {
  await startCliInPane(term, dirs.ws.dir, ["--mcp-list"]);
  await term.waitForScreen((s) => s.includes("Trust this file's current content?"), "the trust question", 60_000);
  expect(await term.screen()).toContain(QUESTION);
}

const exitCode = () => paneExitCode(dirs.ws.dir);

test("a shipped MCP server is listed only after the person trusts the config, and the answer is remembered", async () => {
  await listOnTerminal();
  await term.type("y");
  await term.press("Enter");
  expect(await exitCode()).toBe("EXITED:0");
  const screen = await term.screen();
  expect(screen).toContain("Trusted mini-cursor.config.json");
  expect(screen).toContain("shipped  stdio  running");
  expect(screen).toContain("tools: shipped__echo, shipped__add");
  expect(JSON.parse(readFileSync(path.join(dirs.home.dir, "trust.json"), "utf8")).trusted).toEqual({
    [path.join(dirs.ws.dir, "mini-cursor.config.json")]: expect.any(String),
  });
});

test("answering no starts nothing the repository named", async () => {
  await listOnTerminal();
  await term.press("Enter");
  expect(await exitCode()).toBe("EXITED:0");
  const screen = await term.screen();
  expect(screen).toContain("Not trusted: its allow rules, passEnv and MCP servers are ignored");
  expect(screen).toContain("shipped  not trusted: mini-cursor.config.json has not been trusted");
  expect(screen).not.toContain("running");
  expect(screen).not.toContain("shipped__echo");
  expect(existsSync(path.join(dirs.home.dir, "trust.json"))).toBe(false);
});
