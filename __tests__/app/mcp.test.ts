import { existsSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { AIMessage } from "@langchain/core/messages";
import { configuredMcpServers, mcpListReport, prepareMcp, untrustedMcpServers } from "../../src/app/mcp.js";
import { createAgentTools } from "../../src/app/tools.js";
import type { McpHub } from "../../src/mcp/hub.js";
import { cacheKey, storeTools } from "../../src/mcp/cache.js";
import { loadProjectRules } from "../../src/security/rules.js";
import { contentHash, trustFile } from "../../src/security/trust.js";
import { readFileSync } from "node:fs";
import { engineHarness, type EngineKind } from "../helpers/engine-harness.js";
import {
  FILESYSTEM_SERVER,
  mcpTestSettings,
  processesWith,
  readPid,
  startHttpServer,
  stdioServer,
  writeUserConfig,
} from "../helpers/mcp-servers.js";
import { isAlive } from "../helpers/pids.js";
import { baseEnv, collect, runCli, startCli } from "../helpers/cli.js";
import { closedPortUrl, startOpenAIServer } from "../helpers/openai-server.js";
import { runSlashCommand } from "../../src/app/slash-commands.js";
import type { Session } from "../../src/app/session.js";
import type { Renderer } from "../../src/ui/render.js";
import { formatMcpStatus } from "../../src/mcp/status.js";
import { confirmConfigTrust } from "../../src/app/config-trust.js";
import { waitFor } from "../helpers/tmp.js";
import { useWorkspaceAndHome } from "../helpers/server-home.js";

let http: Awaited<ReturnType<typeof startHttpServer>>;
let notes: string[];
const hubs: McpHub[] = [];

beforeAll(async () => {
  http = await startHttpServer("remote");
});
afterAll(() => http.stop());

beforeEach(() => {
  notes = [];
});
const dirs = useWorkspaceAndHome(async () => {
  await Promise.all(hubs.splice(0).map((h) => h.close()));
});

const userConfig = () => path.join(dirs.home.dir, "config.json");
const pidFile = (name = "local") => path.join(dirs.home.dir, `${name}.pid`);
/** The CLI's environment here: the test's home, user config, tool-list cache and trust store. */
const cliEnv = (extra: Record<string, string> = {}) =>
  baseEnv({
    HOME: dirs.home.dir,
    MINI_CURSOR_USER_CONFIG: userConfig(),
    MINI_CURSOR_MCP_CACHE: path.join(dirs.home.dir, "cache.json"),
    MINI_CURSOR_TRUST_FILE: path.join(dirs.home.dir, "t.json"),
    ...extra,
  });

async function hubFor(servers: Record<string, unknown>, env: NodeJS.ProcessEnv = {}): Promise<McpHub> {
  writeUserConfig(userConfig(), { mcpServers: servers });
  const hub = await prepareMcp(mcpTestSettings(dirs.ws.dir, dirs.home.dir, env), (t) => notes.push(t));
  if (!hub) throw new Error("no hub");
  hubs.push(hub);
  return hub;
}

function call(hub: McpHub, name: string, args: Record<string, unknown> = {}) {
  const tool = hub.tools.find((t) => t.name === name);
  if (!tool) throw new Error(`no tool ${name}: ${hub.tools.map((t) => t.name).join(", ")}`);
  return tool.invoke({ type: "tool_call", id: `call_${name}`, name, args }) as Promise<ToolMessage>;
}

const toolResults = (messages: BaseMessage[]) =>
  messages
    .filter((m): m is ToolMessage => ToolMessage.isInstance(m))
    .map((m) => ({ name: m.name, status: m.status, content: m.content }));

describe.each<EngineKind>(["graph", "loop"])("MCP tools in the %s engine", (kind) => {
  test("a scripted model calls a stdio tool and an HTTP tool, a crash leaves the run going, and no server process remains", async () => {
    const hub = await hubFor({ local: stdioServer(pidFile()), remote: { url: http.url } });
    const { tools } = createAgentTools(mcpTestSettings(dirs.ws.dir, dirs.home.dir), undefined, hub);
    const pids: number[] = [readPid(pidFile())];
    const h = engineHarness(
      kind,
      dirs.ws.dir,
      [
        {
          toolCalls: [
            { name: "local__echo", args: { text: "hi" } },
            { name: "remote__add", args: { a: 2, b: 3 } },
          ],
        },
        { toolCalls: [{ name: "local__crash", args: {} }] },
        { toolCalls: [{ name: "local__echo", args: { text: "again" } }] },
        (messages) => {
          pids.push(readPid(pidFile()));
          return new AIMessage({ id: "final", content: `done after ${messages.length} messages` });
        },
      ],
      { approval: "full-auto" },
      { tools },
    );
    const summary = await h.run("use the MCP tools");
    expect(summary.reason).toBe("done");
    expect(h.model.boundToolNames).toEqual(
      expect.arrayContaining([
        "read_file",
        "local__echo",
        "local__add",
        "remote__echo",
        "remote__add",
        "remote__sleep",
      ]),
    );
    const history = await h.history();
    expect(toolResults(history)).toEqual([
      { name: "local__echo", status: "success", content: "local echo: hi" },
      { name: "remote__add", status: "success", content: "5" },
      {
        name: "local__crash",
        status: "error",
        content: 'Error: MCP server "local" exited with code 3 (stderr: fatal: crash tool called) while running crash.',
      },
      { name: "local__echo", status: "success", content: "local echo: again" },
    ]);
    expect(notes).toContain(
      'MCP server "local" exited with code 3 (stderr: fatal: crash tool called); its tools fail until it is started again (on their next call).',
    );
    expect(pids[1]).not.toBe(pids[0]); // started again on the next call
    expect(isAlive(pids[1]!)).toBe(true);
    await hub.close();
    for (const pid of pids) expect(isAlive(pid)).toBe(false);
    expect(processesWith(pidFile())).toEqual([]);
    expect(hub.status().map((s) => [s.name, s.state])).toEqual([
      ["local", "stopped"],
      ["remote", "stopped"],
    ]);
  });
});

describe("MCP results", () => {
  test("text passes, images become a note, an error result has status error, a long text is cut", async () => {
    const hub = await hubFor({ remote: { url: http.url } });
    expect((await call(hub, "remote__echo", { text: "x" })).content).toBe("remote echo: x");
    const picture = await call(hub, "remote__picture");
    expect(picture.content).toBe(
      "a red dot\n[image (image/png, 70 bytes) returned by the tool; images are not shown to you]",
    );
    const failed = await call(hub, "remote__fail");
    expect([failed.status, failed.content]).toEqual([
      "error",
      "Error: MCP tool 'fail' on server 'remote' returned an error: the disk is on fire",
    ]);
    const big = String((await call(hub, "remote__big", { chars: 100_000 })).content);
    expect(big.length).toBeLessThan(30_200);
    expect(big.replace(/x+/g, "x…")).toBe(
      "x…\n[... 70,500 characters of this MCP tool's result omitted; ask the tool for less (a narrower query or a page) if you need them.]\nx…",
    );
    const bad = await call(hub, "remote__add", { a: "two" });
    expect(bad.status).toBe("error");
  });

  test("tools carry the server's description, schema and annotations", async () => {
    const hub = await hubFor({ remote: { url: http.url } });
    const add = hub.tools.find((t) => t.name === "remote__add")!;
    expect(add.description).toBe("Adds two numbers.");
    expect((add.schema as { required?: string[] }).required).toEqual(["a", "b"]);
    expect((add as { metadata?: unknown }).metadata).toMatchObject({
      mcpServer: "remote",
      mcpTool: "add",
      annotations: { readOnlyHint: true },
    });
  });
});

describe("MCP server failures", () => {
  test("a server that fails to start: one clear trace line, its tools not offered, the other server's are", async () => {
    const hub = await hubFor({ broken: stdioServer(pidFile("broken"), "--crash-at-start"), remote: { url: http.url } });
    expect(notes).toEqual([
      expect.stringMatching(
        /^MCP server "broken" \(sh -c .*\) could not start: exited with code 2 \(stderr: cannot start: TEST_API_TOKEN is not set\)\.$/,
      ),
      'The tools of MCP server "broken" are not offered in this session.',
    ]);
    expect(hub.tools.map((t) => t.name).filter((n) => n.startsWith("broken"))).toEqual([]);
    expect(hub.status().map((s) => [s.name, s.state, s.listedFrom])).toEqual([
      ["broken", "failed", "none"],
      ["remote", "running", "server"],
    ]);
  });

  test("a cached server that no longer starts gives the model a tool error, not a crash", async () => {
    const settings = mcpTestSettings(dirs.ws.dir, dirs.home.dir);
    const spec = { name: "broken", config: stdioServer(pidFile("broken"), "--crash-at-start"), file: userConfig() };
    storeTools(settings.mcp.cacheFile, cacheKey(dirs.ws.dir, spec), [
      {
        name: "echo",
        description: "Echoes.",
        inputSchema: { type: "object", properties: { text: { type: "string" } } },
      },
    ]);
    const hub = await hubFor({ broken: spec.config });
    expect(notes).toEqual([]);
    expect(hub.status()[0]).toMatchObject({ state: "not started", listedFrom: "cache", tools: ["broken__echo"] });
    const result = await call(hub, "broken__echo", { text: "x" });
    expect(result.status).toBe("error");
    expect(result.content).toMatch(
      /^Error: MCP server "broken" \(sh -c .*\) could not start: exited with code 2 \(stderr: cannot start: TEST_API_TOKEN is not set\)$/,
    );
    expect(notes).toHaveLength(1);
  });

  test("an HTTP server that is not there", async () => {
    const url = `${await closedPortUrl()}/mcp`;
    const hub = await hubFor({ gone: { url } });
    expect(notes[0]).toBe(
      `MCP server "gone" (${url}) could not start: nothing is listening at that URL (connection refused).`,
    );
    expect(hub.tools).toEqual([]);
  });

  test("a program that does not exist", async () => {
    const hub = await hubFor({ nothing: { command: "mini-cursor-no-such-mcp-server" } });
    expect(notes[0]).toBe(
      'MCP server "nothing" (mini-cursor-no-such-mcp-server) could not start: no program named mini-cursor-no-such-mcp-server was found (check "command" and PATH).',
    );
    expect(hub.tools).toEqual([]);
  });

  test("a server that never finishes starting is stopped after the start timeout", async () => {
    const hub = await hubFor(
      { slow: stdioServer(pidFile("slow"), "--hang-at-start") },
      { MINI_CURSOR_MCP_START_TIMEOUT_MS: "1500" },
    );
    expect(notes[0]).toMatch(
      /^MCP server "slow" \(sh -c .*\) could not start: did not finish starting within 1\.5 s \(MINI_CURSOR_MCP_START_TIMEOUT_MS\)\.$/,
    );
    // It was started, and nothing of it is left: neither the shell nor the server under it.
    expect(existsSync(pidFile("slow"))).toBe(true);
    expect(processesWith(pidFile("slow"))).toEqual([]);
    expect(hub.status()[0]!.state).toBe("failed");
  });

  test("a slow tool call is cancelled after the call timeout with a clear error", async () => {
    const hub = await hubFor({ remote: { url: http.url } }, { MINI_CURSOR_MCP_TIMEOUT_MS: "500" });
    const result = await call(hub, "remote__sleep", { ms: 5_000 });
    expect([result.status, result.content]).toEqual([
      "error",
      'Error: MCP server "remote" did not answer sleep within 0.5 s (MINI_CURSOR_MCP_TIMEOUT_MS); the call was cancelled.',
    ]);
    expect((await call(hub, "remote__echo", { text: "still here" })).content).toBe("remote echo: still here");
  });
});

describe("MCP lifecycle", () => {
  test("a second session offers the cached tools without starting the server; the first call starts it", async () => {
    const first = await hubFor({ local: stdioServer(pidFile()) });
    expect(first.status()[0]).toMatchObject({ state: "running", listedFrom: "server" });
    await first.close();
    rmSync(pidFile());
    const second = await hubFor({ local: stdioServer(pidFile()) });
    expect(second.status()[0]).toMatchObject({ state: "not started", listedFrom: "cache" });
    expect(second.tools.map((t) => t.name)).toEqual(first.tools.map((t) => t.name));
    expect(existsSync(pidFile())).toBe(false);
    expect((await call(second, "local__echo", { text: "lazy" })).content).toBe("local echo: lazy");
    expect(second.status()[0]!.state).toBe("running");
    const pid = readPid(pidFile());
    await second.close();
    expect(isAlive(pid)).toBe(false);
  });

  test("a changed configuration lists again (the cache key is the exact config)", async () => {
    await (await hubFor({ local: stdioServer(pidFile()) })).close();
    const changed = await hubFor({ local: stdioServer(pidFile(), "--name", "other") });
    expect(changed.status()[0]).toMatchObject({ listedFrom: "server" });
    expect((await call(changed, "local__echo", { text: "x" })).content).toBe("other echo: x");
  });

  test("no servers configured: no hub, and the MCP libraries are not needed", async () => {
    expect(await prepareMcp(mcpTestSettings(dirs.ws.dir, dirs.home.dir), (t) => notes.push(t))).toBeUndefined();
  });
});

describe("MCP configuration and trust", () => {
  const projectFile = () => path.join(dirs.ws.dir, "mini-cursor.config.json");

  test("a repository's servers start only once the user trusts that file's content", async () => {
    writeFileSync(projectFile(), JSON.stringify({ mcpServers: { repo: { url: http.url } } }));
    const settings = mcpTestSettings(dirs.ws.dir, dirs.home.dir);
    expect(configuredMcpServers(settings)).toEqual([]);
    expect(untrustedMcpServers(settings)).toEqual([{ name: "repo", file: "mini-cursor.config.json" }]);
    expect(loadProjectRules(dirs.ws.dir, { trustStore: settings.trustStore }).untrusted?.[0]?.mcpServers).toEqual([
      "repo",
    ]);
    trustFile(settings.trustStore, projectFile(), contentHash(readFileSync(projectFile(), "utf8")));
    expect(configuredMcpServers(settings)).toEqual([
      { name: "repo", config: { url: http.url }, file: "mini-cursor.config.json" },
    ]);
  });

  test("the trust question names the servers; answered no, they stay off; yes, they start", async () => {
    writeFileSync(projectFile(), JSON.stringify({ mcpServers: { repo: { url: http.url } }, mcp: { allow: ["repo"] } }));
    const settings = mcpTestSettings(dirs.ws.dir, dirs.home.dir);
    const questions: string[] = [];
    const said: string[] = [];
    const renderer = {
      note: (t: string) => said.push(t),
      pause: () => undefined,
      banner: () => undefined,
      event: () => undefined,
    } as unknown as Renderer;
    await confirmConfigTrust(settings, true, renderer, async (q) => (questions.push(q), "n"));
    expect(questions[0]).toContain(
      "mini-cursor.config.json in this repository has MCP servers (repo) that start programs or reach URLs it names.",
    );
    expect(said).toEqual([
      "Not trusted: its allow rules, passEnv and MCP servers are ignored; its deny and ask rules apply.",
    ]);
    expect(await prepareMcp(settings, (t) => notes.push(t))).toBeUndefined();
    await confirmConfigTrust(settings, false, renderer);
    expect(said.at(-1)).toBe(
      "mini-cursor.config.json in this repository has MCP servers (repo) that start programs or reach URLs it names. They are ignored until you trust this file: run mini-cursor on a terminal in this workspace to be asked. Its deny and ask rules apply.",
    );
    await confirmConfigTrust(settings, true, renderer, async () => "y");
    const hub = (await prepareMcp(settings, (t) => notes.push(t)))!;
    hubs.push(hub);
    expect(hub.tools.map((t) => t.name)).toContain("repo__echo");
  });

  test("a project server wins over the user's of the same name; both are listed", async () => {
    writeUserConfig(userConfig(), {
      mcpServers: { shared: { url: "http://127.0.0.1:1/mcp" }, mine: { command: "x" } },
    });
    writeFileSync(path.join(dirs.ws.dir, ".mini-cursor-placeholder"), "");
    writeFileSync(projectFile(), JSON.stringify({ mcpServers: { shared: { url: http.url } } }));
    const settings = mcpTestSettings(dirs.ws.dir, dirs.home.dir);
    trustFile(settings.trustStore, projectFile(), contentHash(readFileSync(projectFile(), "utf8")));
    expect(configuredMcpServers(settings).map((s) => [s.name, s.file])).toEqual([
      ["shared", "mini-cursor.config.json"],
      ["mine", userConfig()],
    ]);
  });

  test("invalid server entries are rules errors that say where", () => {
    writeFileSync(projectFile(), JSON.stringify({ mcpServers: { a__b: { url: http.url } } }));
    expect(() => loadProjectRules(dirs.ws.dir)).toThrow(
      /mini-cursor.config.json: mcpServers: server names are letters, digits/,
    );
    writeFileSync(projectFile(), JSON.stringify({ mcpServers: { a: { command: "x", url: http.url } } }));
    expect(() => loadProjectRules(dirs.ws.dir)).toThrow(/mini-cursor.config.json: mcpServers.a/);
  });
});

describe("the published filesystem server", () => {
  test("its tools read a file in the workspace", async () => {
    writeFileSync(path.join(dirs.ws.dir, "notes.txt"), "hello from the filesystem server\n");
    const hub = await hubFor({ fs: { command: process.execPath, args: [FILESYSTEM_SERVER, dirs.ws.dir] } });
    expect(hub.tools.map((t) => t.name)).toEqual(
      expect.arrayContaining(["fs__read_text_file", "fs__list_directory", "fs__write_file"]),
    );
    expect((await call(hub, "fs__read_text_file", { path: path.join(dirs.ws.dir, "notes.txt") })).content).toBe(
      "hello from the filesystem server\n",
    );
    const outside = await call(hub, "fs__read_text_file", { path: "/etc/hostname" });
    expect(outside.status).toBe("error");
  });
});

describe("--mcp-list", () => {
  test("starts each server, shows state and tools, and stops them", async () => {
    writeUserConfig(userConfig(), { mcpServers: { local: stdioServer(pidFile()), remote: { url: http.url } } });
    const report = await mcpListReport(mcpTestSettings(dirs.ws.dir, dirs.home.dir), false, (t) => notes.push(t));
    const lines = report.split("\n");
    expect(lines[0]).toMatch(/^local {2}stdio {2}running {2}sh -c .* {2}\(.*config\.json\)$/);
    expect(lines[1]).toBe(
      "  tools: local__echo, local__add, local__picture, local__fail, local__big, local__sleep, local__crash",
    );
    expect(lines[2]).toBe(`remote  http  running  ${http.url}  (${userConfig()})`);
    expect(isAlive(readPid(pidFile()))).toBe(false);
    expect(processesWith(pidFile())).toEqual([]);
    const json = await mcpListReport(mcpTestSettings(dirs.ws.dir, dirs.home.dir), true, (t) => notes.push(t));
    expect(
      json
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as { name: string; state: string; tools: string[] })
        .map((r) => [r.name, r.state, r.tools.length]),
    ).toEqual([
      ["local", "running", 7],
      ["remote", "running", 7],
    ]);
  });
});

describe("the CLI", () => {
  test("--mcp-list prints each server's state and tools and leaves nothing running", async () => {
    writeUserConfig(userConfig(), { mcpServers: { remote: { url: http.url }, local: stdioServer(pidFile()) } });
    const env = cliEnv();
    const result = await runCli(["--mcp-list", "--workspace", dirs.ws.dir], { env });
    expect([result.code, result.stderr]).toEqual([0, ""]);
    expect(result.stdout.split("\n").slice(0, 2)).toEqual([
      `remote  http  running  ${http.url}  (${userConfig()})`,
      "  tools: remote__echo, remote__add, remote__picture, remote__fail, remote__big, remote__sleep, remote__crash",
    ]);
    expect(processesWith(pidFile())).toEqual([]);
  });

  test("a one-shot run: the provider's model calls a stdio tool and an HTTP tool, reads their results, and no server outlives the CLI", async () => {
    const provider = await startOpenAIServer([
      {
        toolCalls: [
          { name: "local__echo", args: { text: "over stdio" } },
          { name: "remote__add", args: { a: 40, b: 2 } },
        ],
      },
      { content: "The tools said hello and 42." },
    ]);
    try {
      writeUserConfig(userConfig(), { mcpServers: { local: stdioServer(pidFile()), remote: { url: http.url } } });
      const env = cliEnv({ OPENAI_BASE_URL: provider.url });
      const result = await runCli(
        ["--workspace", dirs.ws.dir, "--json", "--approval", "full-auto", "use the MCP tools"],
        {
          env,
        },
      );
      expect(result.code).toBe(0);
      const events = result.stdout
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as { type: string; [k: string]: unknown });
      expect(events.filter((e) => e.type === "tool_result").map((e) => [e.name, e.status, e.content])).toEqual([
        ["local__echo", "success", "local echo: over stdio"],
        ["remote__add", "success", "42"],
      ]);
      const offered = provider.requests[0]!.tools!.map((t) => t.function.name);
      expect(offered).toEqual(expect.arrayContaining(["local__echo", "remote__add"]));
      expect(provider.requests[1]!.messages.filter((m) => m.role === "tool").map((m) => m.content)).toEqual([
        "local echo: over stdio",
        "42",
      ]);
      expect(processesWith(pidFile())).toEqual([]);
    } finally {
      await provider.close();
    }
  });

  test("SIGTERM during an MCP call: the run stops and the server goes with it", async () => {
    const provider = await startOpenAIServer([
      { toolCalls: [{ name: "local__sleep", args: { ms: 600_000 } }] },
      { content: "never reached" },
    ]);
    try {
      writeUserConfig(userConfig(), { mcpServers: { local: stdioServer(pidFile()) } });
      const env = cliEnv({ OPENAI_BASE_URL: provider.url });
      const child = startCli(["--workspace", dirs.ws.dir, "--json", "--approval", "full-auto", "sleep"], { env });
      const done = collect(child);
      await waitFor(() => existsSync(`${pidFile()}.sleeping`), 30_000);
      const server = readPid(pidFile());
      process.kill(child.pid!, "SIGTERM");
      const result = await done;
      expect(result.code).toBe(130);
      expect(isAlive(server)).toBe(false);
      expect(processesWith(pidFile())).toEqual([]);
    } finally {
      await provider.close();
    }
  });

  test("a SIGKILLed mini-cursor's server is stopped by the next mini-cursor that starts one", async () => {
    const provider = await startOpenAIServer([
      { toolCalls: [{ name: "local__sleep", args: { ms: 600_000 } }] },
      { content: "never reached" },
    ]);
    try {
      writeUserConfig(userConfig(), { mcpServers: { local: stdioServer(pidFile()) } });
      const env = cliEnv({ OPENAI_BASE_URL: provider.url });
      const child = startCli(["--workspace", dirs.ws.dir, "--json", "--approval", "full-auto", "sleep"], { env });
      const done = collect(child);
      await waitFor(() => existsSync(`${pidFile()}.sleeping`), 30_000);
      const orphan = readPid(pidFile());
      process.kill(child.pid!, "SIGKILL"); // nothing of mini-cursor runs: its server is left behind
      await done;
      expect(isAlive(orphan)).toBe(true);
      const second = path.join(dirs.home.dir, "second.pid");
      writeUserConfig(userConfig(), { mcpServers: { other: stdioServer(second) } });
      expect((await runCli(["--workspace", dirs.ws.dir, "--mcp-list"], { env })).code).toBe(0);
      await waitFor(() => !isAlive(orphan), 10_000);
      expect(processesWith(pidFile())).toEqual([]);
    } finally {
      await provider.close();
    }
  });

  test("--help lists --mcp-list", async () => {
    const result = await runCli(["--help"], { env: baseEnv() });
    expect(result.stdout).toContain("--mcp-list");
  });
});

describe("/mcp", () => {
  test("shows each server's state and tools without starting anything", async () => {
    const settings = mcpTestSettings(dirs.ws.dir, dirs.home.dir);
    const spec = { name: "local", config: stdioServer(pidFile()), file: userConfig() };
    storeTools(settings.mcp.cacheFile, cacheKey(dirs.ws.dir, spec), [
      { name: "echo", description: "Echoes.", inputSchema: { type: "object", properties: {} } },
    ]);
    const hub = await hubFor({ local: spec.config, remote: { url: http.url } });
    const said: string[] = [];
    const session = { parts: { mcp: hub } } as unknown as Session;
    await runSlashCommand("/mcp", { session, renderer: { note: (t: string) => said.push(t) } as unknown as Renderer });
    expect(said[0]!.split("\n")).toEqual([
      `local  stdio  not started (starts on first use)  ${spec.config.command} ${spec.config.args.join(" ")}  (${userConfig()})`,
      "  tools (from the cache of an earlier run): local__echo",
      `remote  http  running  ${http.url}  (${userConfig()})`,
      "  tools: remote__echo, remote__add, remote__picture, remote__fail, remote__big, remote__sleep, remote__crash",
    ]);
    expect(existsSync(pidFile())).toBe(false);
    expect(formatMcpStatus([], [{ name: "repo", file: "mini-cursor.config.json" }])).toBe(
      "repo  not trusted: mini-cursor.config.json has not been trusted (run mini-cursor on a terminal here to be asked)",
    );
  });
});
