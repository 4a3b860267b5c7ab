import path from "node:path";
import { prepareMcp } from "../../src/app/mcp.js";
import type { McpHub } from "../../src/mcp/hub.js";
import { baseEnv, runCli } from "../helpers/cli.js";
import { mcpTestSettings, processesWith, stdioServer, writeUserConfig } from "../helpers/mcp-servers.js";
import { useWorkspaceAndHome } from "../helpers/server-home.js";

/**
 * Issue 25, items 7 and 8 with real MCP servers: tool names that meet after prefixing are
 * refused with a sentence saying which; a server's command line, stderr and tool names reach
 * the terminal (and --json) only through the output gate.
 */

const hubs: McpHub[] = [];

const dirs = useWorkspaceAndHome(async () => {
  await Promise.all(hubs.splice(0).map((h) => h.close()));
});

const userConfig = () => path.join(dirs.home.dir, "config.json");
const pid = (name: string) => path.join(dirs.home.dir, `${name}.pid`);
const cliEnv = () =>
  baseEnv({
    HOME: dirs.home.dir,
    MINI_CURSOR_USER_CONFIG: userConfig(),
    MINI_CURSOR_MCP_CACHE: path.join(dirs.home.dir, "cache.json"),
    MINI_CURSOR_TRUST_FILE: path.join(dirs.home.dir, "t.json"),
  });

test("a_ + echo and a + _echo collide as a___echo: neither is offered, the note names both, the rest are", async () => {
  writeUserConfig(userConfig(), {
    mcpServers: { a_: stdioServer(pid("one")), a: stdioServer(pid("two"), "--extra-tool", "_echo") },
  });
  const notes: string[] = [];
  const hub = await prepareMcp(mcpTestSettings(dirs.ws.dir, dirs.home.dir), (t) => notes.push(t), true);
  hubs.push(hub!);
  const names = hub!.tools.map((t) => t.name);
  expect(names).not.toContain("a___echo");
  expect(names).toEqual(expect.arrayContaining(["a___add", "a__echo", "a__add"]));
  expect(notes).toContain(
    'MCP tools collide as "a___echo": tool "echo" of MCP server "a_" and tool "_echo" of MCP server "a". Neither is offered; rename one of the servers in its config file so no server name ends with "_" next to a tool name starting with "_".',
  );
  expect(hub!.status().flatMap((s) => s.tools)).not.toContain("a___echo");
}, 60_000);

const KEY = "sk-live-abcdefghijklmnop12345";
const TOKEN = "tok-value-0123456789";

test("--mcp-list: command lines, stderr, env secrets and tool names pass the gate, as text and as JSON", async () => {
  writeUserConfig(userConfig(), {
    mcpServers: {
      leaky: stdioServer(pid("leaky"), "--extra-tool", "evil\x1b]0;pwned\x07", "--api-key", KEY, "--auth-token", TOKEN),
      broken: {
        command: "sh",
        args: ["-c", `printf 'fatal: token %s rejected\\033[2J\\n' "$SERVICE_TOKEN" >&2; exit 1`],
        env: { SERVICE_TOKEN: TOKEN },
      },
      "postgres-mcp": {
        command: "sh",
        args: ["-c", "exit 1", "postgres://app:p@ss@word@db:5432/x?password=other1234"],
      },
    },
  });
  const text = await runCli(["--mcp-list", "--workspace", dirs.ws.dir], { env: cliEnv() });
  const all = text.stdout + text.stderr;
  for (const leaked of [KEY, TOKEN, "p@ss@word", "other1234", "\x1b", "\x07"]) expect(all).not.toContain(leaked);
  expect(text.stdout).toContain("'--api-key' '[redacted]'");
  expect(text.stdout).toContain("fatal: token [redacted] rejected^[[2J");
  expect(text.stdout).toContain("postgres://app:[redacted]@db:5432/x?password=[redacted]");
  // The tool with control codes in its name is not offered, and said so visibly.
  expect(text.stdout).not.toContain("leaky__evil");
  expect(text.stderr).toContain('The tool "evil^[]0;pwned^G" of MCP server "leaky" is not offered');

  const json = await runCli(["--mcp-list", "--json", "--workspace", dirs.ws.dir], { env: cliEnv() });
  for (const leaked of [KEY, TOKEN, "p@ss@word", "other1234", "\x1b"])
    expect(json.stdout + json.stderr).not.toContain(leaked);
  const rows = json.stdout
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { name: string; target?: string; error?: string });
  expect(rows.find((r) => r.name === "leaky")!.target).toContain("'--api-key' '[redacted]'");
  expect(rows.find((r) => r.name === "broken")!.error).toContain("token [redacted] rejected");
  expect(processesWith(dirs.home.dir)).toEqual([]);
}, 90_000);
