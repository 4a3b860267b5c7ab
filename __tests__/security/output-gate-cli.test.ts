import { chmodSync, chownSync, mkdirSync, writeFileSync } from "node:fs";
import { jest } from "@jest/globals";
import path from "node:path";
import { baseEnv, NOBODY, RUNNING_AS_ROOT, runCliAs } from "../helpers/cli.js";
import { startOpenAIServer, type OpenAIServer } from "../helpers/openai-server.js";
import { makeTempDir } from "../helpers/tmp.js";

/**
 * Issue 42.8 against the real CLI and the scripted provider: one output gate covers every line
 * and every `--json` field. A tool name the model made up with an OSC 52 clipboard write in it,
 * and an MCP server whose failed start prints the API key and a bearer token, reach neither
 * stdout nor stderr raw, in the trace or with --json, as root and as an ordinary user.
 */

jest.setTimeout(120_000);

const OSC52 = "\x1b]52;c;cHduZWQ=\x07";
const SHOWN = "^[]52;c;cHduZWQ=^G";
/** Not shaped like any known key: only the gate's list of known secrets can mask it. */
const API_KEY = "test-key-8f2c91d04b7e4a55c3";
const TOKEN = "tok9f8e7d6c5b4a39281706aa";
/** Anything a terminal would act on (no colour: NO_COLOR is set). */
const RAW = /[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\p{Cf}]/u;

let tmp: ReturnType<typeof makeTempDir>;
let server: OpenAIServer | undefined;
beforeEach(() => {
  tmp = makeTempDir();
  chmodSync(tmp.dir, 0o755);
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  tmp.cleanup();
});

/** A workspace and a home the user `uid` owns, with the user config naming `servers`. */
function prepare(uid: number | undefined, servers: Record<string, unknown> = {}) {
  const ws = path.join(tmp.dir, "ws");
  const home = path.join(tmp.dir, "home");
  mkdirSync(ws);
  mkdirSync(home);
  writeFileSync(path.join(home, "config.json"), JSON.stringify({ mcpServers: servers }));
  if (uid !== undefined) for (const dir of [ws, home, path.join(home, "config.json")]) chownSync(dir, uid, uid);
  return { ws, home };
}

async function run(uid: number | undefined, dirs: { ws: string; home: string }, args: string[]) {
  return runCliAs(uid, ["--workspace", dirs.ws, "--sandbox", "off", ...args], {
    env: baseEnv({
      OPENAI_BASE_URL: server!.url,
      OPENAI_API_KEY: API_KEY,
      MINI_CURSOR_MAX_RETRIES: "0",
      HOME: dirs.home,
      MINI_CURSOR_USER_CONFIG: path.join(dirs.home, "config.json"),
      MINI_CURSOR_MCP_CACHE: path.join(dirs.home, "mcp-tools.json"),
      MINI_CURSOR_TRUST_FILE: path.join(dirs.home, "trusted.json"),
    }),
  });
}

describe.each([
  ["as this user", undefined],
  ["as an ordinary user", NOBODY],
] as const)("%s", (_, uid) => {
  const maybe = uid === undefined || RUNNING_AS_ROOT ? test : test.skip;

  maybe("a tool named with an OSC 52 escape: every trace line shows it made visible", async () => {
    const name = `steal${OSC52}`;
    server = await startOpenAIServer([
      { toolCalls: [{ name, args: { [`x${OSC52}`]: `v${OSC52}` } }] },
      { content: "Done." },
      { toolCalls: [{ name, args: {} }] },
      { content: "Done." },
    ]);
    const dirs = prepare(uid);
    const pretty = await run(uid, dirs, ["--approval", "suggest", "go"]);
    expect(pretty.stdout + pretty.stderr).not.toMatch(RAW);
    const lines = pretty.stdout.split("\n");
    expect(lines).toContain(`→ steal${SHOWN} x${SHOWN}="v\\u001b]52;c;cHduZWQ=\\u0007"`);
    expect(lines.some((l) => l.startsWith(`  ✗ steal${SHOWN} 1 lines, `))).toBe(true);
    expect(lines).toContain(
      `    Error: there is no tool named "steal${SHOWN}". Available tools: read_file, write_file, apply_patch, edit_file, list_directory, find_files, search_files,`,
    );
    const json = await run(uid, dirs, ["--json", "--approval", "suggest", "go"]);
    expect(json.stdout + json.stderr).not.toMatch(RAW);
    const call = json.events.find((e) => e.type === "tool_call");
    // JSON's escaping keeps the value: a reader gets the name the model sent, no terminal acts on it.
    expect(call?.name).toBe(name);
    expect(json.stdout).toContain('"name":"steal\\u001b]52;c;cHduZWQ=\\u0007"');
  });

  maybe("--json: an MCP server whose failed start prints the API key and a bearer token shows neither", async () => {
    server = await startOpenAIServer([{ content: "Done." }]);
    const dirs = prepare(uid);
    const script = path.join(dirs.home, "leaky-server.sh");
    writeFileSync(
      script,
      `#!/bin/sh\necho "starting with setting=$MY_SETTING Authorization: Bearer $AUTH" >&2\nexit 3\n`,
    );
    chmodSync(script, 0o755);
    writeFileSync(
      path.join(dirs.home, "config.json"),
      JSON.stringify({ mcpServers: { leaky: { command: script, env: { MY_SETTING: API_KEY, AUTH: TOKEN } } } }),
    );
    if (uid !== undefined) chownSync(path.join(dirs.home, "config.json"), uid, uid);
    const r = await run(uid, dirs, ["--json", "hello"]);
    expect(r.code).toBe(0);
    const all = r.stdout + r.stderr;
    expect(all).not.toContain(API_KEY);
    expect(all).not.toContain(TOKEN);
    expect(r.stderr).toContain(
      `MCP server "leaky" (${script}) could not start: exited with code 3 (stderr: starting with setting=[redacted] Authorization: Bearer [redacted]).`,
    );
    expect(r.events.at(-1)?.type).toBe("run_end");
    const list = await run(uid, dirs, ["--json", "--mcp-list"]);
    expect(list.stdout + list.stderr).not.toContain(API_KEY);
    expect(list.stdout + list.stderr).not.toContain(TOKEN);
  });
});
