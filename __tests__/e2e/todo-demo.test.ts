import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, readlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeAll, beforeEach, expect, jest, test } from "@jest/globals";
import { loadRecording } from "../../src/models/replay.js";
import { baseEnv, collect, PROJECT_ROOT } from "../helpers/cli.js";
import {
  startOpenAIServerProcess,
  type ChatRequest,
  type OpenAIServerProcess,
  type ScriptStep,
} from "../helpers/openai-server.js";
import { makeTempDir, waitFor } from "../helpers/tmp.js";
import {
  createTmux,
  httpGet,
  pidAlive,
  requireTmux,
  shellQuote,
  waitAllDead,
  waitForValue,
  waitRefused,
  type TmuxTerminal,
} from "../helpers/tmux.js";

/**
 * The seed's flagship task for real: scaffold a Vite React TypeScript app with
 * `npm create vite@latest`, write the TodoList, `npm install`, `npm run build`, `npm run dev`.
 * Needs the npm registry and takes minutes, so it is not part of `npm test`:
 * `npm run test:e2e` runs it (and CI does, after `npm test`).
 *
 * 1. `npm run demo` on a terminal (tmux) replays demos/todo-app.jsonl offline: the app builds,
 *    the dev server answers with the page until Ctrl-C, and nothing is left running after.
 * 2. The same trajectory served by the scripted OpenAI-compatible server (a separate process)
 *    through `npm start -- --approval full-auto`, with no terminal: the build succeeds, the
 *    dev-server call returns the URL to the model, and no process is left after exit.
 *
 * Both use npm's default cache, so the second install is served mostly from it.
 */

jest.setTimeout(600_000);

const TASK = "create a React todo app with Vite";
const DEMO_RECORDING = path.join(PROJECT_ROOT, "demos", "todo-app.jsonl");
/** The whole run: npm create, an install from the registry, a build and a server start. */
const RUN_TIMEOUT_MS = 480_000;

/** The test's clean environment, without Jest's NODE_ENV=test (Vite would bundle React's development build). */
function e2eEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env = baseEnv(extra);
  delete env.NODE_ENV;
  return env;
}

let tmp: ReturnType<typeof makeTempDir>;
let term: TmuxTerminal | undefined;
let server: OpenAIServerProcess | undefined;
const groups: number[] = [];

beforeAll(() => requireTmux());

beforeEach(() => {
  tmp = makeTempDir("mini-cursor-e2e-");
});

afterEach(async () => {
  await term?.kill();
  term = undefined;
  await server?.close();
  server = undefined;
  for (const pgid of groups.splice(0)) {
    try {
      process.kill(-pgid, "SIGKILL");
    } catch {
      // gone
    }
  }
  for (const p of processesIn(tmp.dir)) {
    try {
      process.kill(p.pid, "SIGKILL");
    } catch {
      // gone
    }
  }
  tmp.cleanup();
});

interface FoundProcess {
  pid: number;
  command: string;
}

/** Live processes whose working directory or command line is inside `dir` (the app's servers, npm, vite). */
function processesIn(dir: string): FoundProcess[] {
  const found: FoundProcess[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    if (pid === process.pid) continue;
    let cwd = "";
    let command = "";
    try {
      cwd = readlinkSync(`/proc/${entry}/cwd`);
    } catch {
      // gone, or not ours to look at
    }
    try {
      command = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0").join(" ").trim();
    } catch {
      continue;
    }
    const inside = cwd === dir || cwd.startsWith(`${dir}/`) || command.includes(`${dir}/`);
    if (inside && path.basename(command.split(" ")[0] ?? "") !== "tmux" && pidAlive(pid)) found.push({ pid, command });
  }
  return found;
}

async function waitNothingRunningIn(dir: string, timeoutMs = 15_000): Promise<void> {
  try {
    await waitFor(() => processesIn(dir).length === 0, timeoutMs, 100);
  } catch {
    throw new Error(
      `processes left in ${dir}:\n${processesIn(dir)
        .map((p) => `${p.pid} ${p.command}`)
        .join("\n")}`,
    );
  }
}

/** The app the run built: its production bundle and the TodoList source. */
function expectBuiltApp(workspace: string): void {
  const app = path.join(workspace, "react-todo-app");
  expect(readFileSync(path.join(app, "dist", "index.html"), "utf8")).toContain('<div id="root"></div>');
  expect(readdirSync(path.join(app, "dist", "assets")).some((f) => f.endsWith(".js"))).toBe(true);
  expect(readFileSync(path.join(app, "src", "App.tsx"), "utf8")).toContain("localStorage");
}

test("npm run demo on a terminal builds the TodoList app, serves it until Ctrl-C, and leaves nothing running", async () => {
  const workspace = path.join(tmp.dir, "demo");
  const exitFile = path.join(tmp.dir, "exit-code");
  term = createTmux(e2eEnv());
  await term.start(
    `cd ${shellQuote(PROJECT_ROOT)} && npm run demo -- --workspace ${shellQuote(workspace)}; echo EXITED:$? > ${shellQuote(exitFile)}`,
  );

  const screen = await term.waitForScreen(
    /Press Ctrl-C to stop them and exit\./,
    "the dev server kept up",
    RUN_TIMEOUT_MS,
  );
  const url = /bg-1 {2}(http:\/\/localhost:\d+\/)/.exec(screen)?.[1];
  expect(url).toBeDefined();
  expect(screen).toContain("model     replay of demos/todo-app.jsonl (recorded responses, no model provider)");
  expect(screen).toMatch(/→ execute_command command="npm run build"[\s\S]*?Exit code: 0/);
  // The recorded answer names the URL this run's server announced (another port if 5173 was taken).
  expect(screen).toContain(`The React TodoList app is ready and running at ${url}`);
  expectBuiltApp(workspace);

  const page = await httpGet(url!);
  expect(page).toMatchObject({ status: 200 });
  const html = (page as { body: string }).body;
  expect(html).toContain('<div id="root"></div>');
  expect(html).toContain("<title>react-todo-app</title>");
  const app = await httpGet(`${url}src/App.tsx`);
  expect(app).toMatchObject({ status: 200 });
  expect((app as { body: string }).body).toContain("localStorage");
  expect(existsSync(exitFile)).toBe(false);

  await term.press("C-c");
  const exit = await waitForValue(
    () => (existsSync(exitFile) ? readFileSync(exitFile, "utf8").trim() : undefined),
    30_000,
  );
  expect(exit).toBe("EXITED:0");
  await waitRefused(url!, 10_000);
  await waitNothingRunningIn(workspace);
  const after = await term.screen();
  expect(after).toContain(`Stopped background process bg-1 (npm run dev) at ${url}.`);
  expect(after).toContain(`The app is in ${path.join(workspace, "react-todo-app")}`);
});

/** The recording as the scripted server's script: the same text and tool calls, streamed like OpenAI's. */
function scriptFromRecording(file: string): ScriptStep[] {
  return loadRecording(file).responses.map((r) => {
    const data = r.message.data as {
      content?: unknown;
      tool_calls?: Array<{ name: string; args: Record<string, unknown> }>;
    };
    const step: ScriptStep = {};
    if (typeof data.content === "string" && data.content) step.content = data.content;
    if (data.tool_calls?.length) step.toolCalls = data.tool_calls.map((c) => ({ name: c.name, args: c.args }));
    return step;
  });
}

/** The text of the tool results a chat request answers: those after the last assistant message. */
function toolResults(request: ChatRequest): string[] {
  const lastAssistant = request.messages.map((m) => m.role).lastIndexOf("assistant");
  return request.messages
    .slice(lastAssistant + 1)
    .filter((m) => m.role === "tool")
    .map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content)));
}

test("the trajectory from an OpenAI-compatible server through npm start --approval full-auto builds, returns the URL, and leaves nothing running", async () => {
  const workspace = path.join(tmp.dir, "server-run");
  const scriptPath = path.join(tmp.dir, "script.json");
  const logPath = path.join(tmp.dir, "requests.jsonl");
  const script = scriptFromRecording(DEMO_RECORDING);
  writeFileSync(scriptPath, JSON.stringify(script));
  mkdirSync(workspace);
  server = await startOpenAIServerProcess(scriptPath, logPath);

  const child = spawn("npm", ["start", "--silent", "--", "--approval", "full-auto", "--workspace", workspace, TASK], {
    cwd: PROJECT_ROOT,
    env: e2eEnv({ OPENAI_BASE_URL: server.url, OPENAI_API_KEY: "test-key" }),
    stdio: ["pipe", "pipe", "pipe"],
    detached: true,
  });
  groups.push(child.pid!);
  child.stdin!.end();
  const r = await collect(child, RUN_TIMEOUT_MS);
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);

  const requests = readFileSync(logPath, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as ChatRequest);
  expect(requests).toHaveLength(script.length);
  // What the model was told after each step: scaffolded, listed, read, written, installed, built, serving.
  const results = requests.map(toolResults);
  expect(results[1]![0]).toMatch(/^Exit code: 0\n[\s\S]*Scaffolding project in /);
  // The starter files are read before they are replaced (write_file replaces only what its thread has seen).
  expect(results[3]).toHaveLength(3);
  for (const read of results[3]!) expect(read).toMatch(/\[Lines 1-\d+ of \d+, end of file\.\]$/);
  expect(results[4]).toEqual([
    expect.stringMatching(/^(Created|Replaced) react-todo-app\/src\/App\.tsx /),
    expect.stringMatching(/^(Created|Replaced) react-todo-app\/src\/App\.css /),
    expect.stringMatching(/^(Created|Replaced) react-todo-app\/src\/index\.css /),
  ]);
  expect(results[5]![0]).toMatch(/^Exit code: 0\n/);
  // (`npm start --silent` passes npm_config_loglevel=silent on, so npm does not echo the script's command.)
  expect(results[6]![0]).toMatch(/^Exit code: 0\n[\s\S]*vite v[\d.]+ building[\s\S]*✓ built in/);
  const serving = /^Running in the background as bg-1 \(pid (\d+)\) at (http:\/\/localhost:\d+\/)\.\n/.exec(
    results[7]![0]!,
  );
  expect(serving).not.toBeNull();
  const [, pid, url] = serving!;
  expectBuiltApp(workspace);

  expect(r.stdout).toContain("The React TodoList app is ready and running at http://localhost:5173/");
  expect(r.stdout).toMatch(/✔ Done: 8 steps, 11 tool calls/);
  expect(r.stdout).toContain(`Stopped background process bg-1 (npm run dev) at ${url}.`);
  await waitAllDead([Number(pid)]);
  await waitRefused(url!, 10_000);
  await waitNothingRunningIn(workspace);
});
