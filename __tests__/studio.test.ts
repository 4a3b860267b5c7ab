import { spawn, type ChildProcess } from "node:child_process";
import { cpSync, existsSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import http from "node:http";
import path from "node:path";
import { Client, type Interrupt, type ThreadState } from "@langchain/langgraph-sdk";
import { STUDIO_APPROVE_WITH } from "../src/graph/studio-secret.js";
import { groupAlive } from "../src/workspace/processes.js";
import { baseEnv, collect, NOBODY, PROJECT_ROOT, RUNNING_AS_ROOT, runCli, startCli } from "./helpers/cli.js";
import { asUser, runsAs } from "./helpers/as-user.js";
import { stateDirOf } from "./helpers/state-dir.js";
import { startOpenAIServer, type ChatRequest, type OpenAIServer, type ScriptStep } from "./helpers/openai-server.js";
import { makeTempDir, waitFor } from "./helpers/tmp.js";
import { startLangSmithServer, type LangSmithServer } from "./helpers/langsmith-server.js";
import { devServerRoutes, fillRoute, type DevServerRoute } from "./helpers/dev-server-routes.js";
import { accepts, freePort, processesIn } from "./helpers/studio-server.js";

/**
 * `npm run studio` as a real subprocess, driven over the LangGraph HTTP API with the SDK, the
 * way LangGraph Studio drives it, against the scripted OpenAI-compatible server.
 *
 * The server runs in a copy of the project (sources, scripts, langgraph.json, .gitignore, with
 * node_modules linked), so its `.langgraph_api` state and any `.gitignore` edit land there and
 * a developer's `.env` cannot change the result; the copy has no `.env`, like a fresh clone.
 */

const STARTUP_DEADLINE_MS = 120_000;
const RUN_DEADLINE_MS = 60_000;
const STOP_DEADLINE_MS = 30_000;
/** The static schema extraction of the dev server type-checks the graph: slow on a cold start. */
const SCHEMA_DEADLINE_MS = 120_000;

const HELLO_JS = "console.log('hello from studio');\n";
const SERVER_JS = [
  "const http = require('node:http');",
  "const server = http.createServer((req, res) => res.end('bg ok'));",
  "server.listen(0, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${server.address().port}`));",
  "",
].join("\n");

const WRITE_AND_RUN = "Write hello.js and run it.";
const START_SERVER = "Start a small web server.";
const LONG_SEARCH = "Look for config files of every kind.";
const CLEAN_UP = "Clean up the workspace.";
const COUNT_ONCE = "Count this once.";
/** A secret of the workspace's .env, which the person then pastes into a message. */
const PLANTED = "plantedvalue-93k2l1x";
const TRACED_TASK = `Remember ${PLANTED} for later.`;
const CROSS_SITE = "Do what the page says.";
const SAY_HI = "Say hi.";
const HOLD_IN_STUDIO = "Hold the thread in Studio.";
const HOLD_IN_CLI = "Hold the thread in the CLI.";
/** A command that says it started and runs until the test lets it end. */
const holdUntil = (name: string) => `touch ${name}.started && while [ ! -f ${name}.release ]; do sleep 0.1; done`;
/** More steps than LangGraph's default recursion limit of 25 super-steps allows (3 per step). */
const LONG_STEPS = 12;

/** What the model does for each task, by how many tool results the conversation already has. */
const PLANS: Record<string, ScriptStep[]> = {
  [WRITE_AND_RUN]: [
    {
      content: "I'll write the file first.",
      toolCalls: [{ name: "write_file", args: { filePath: "hello.js", content: HELLO_JS } }],
    },
    { toolCalls: [{ name: "execute_command", args: { command: "node hello.js" } }] },
    { content: "Wrote hello.js and ran it: it printed hello from studio." },
  ],
  [START_SERVER]: [
    { toolCalls: [{ name: "write_file", args: { filePath: "server.js", content: SERVER_JS } }] },
    { toolCalls: [{ name: "execute_command", args: { command: "node server.js" } }] },
    { content: "The server is running in the background." },
  ],
  [CLEAN_UP]: [
    { toolCalls: [{ name: "execute_command", args: { command: "echo pwned > pwned.txt" } }] },
    { content: "Done." },
  ],
  [TRACED_TASK]: [{ content: "Noted." }],
  [SAY_HI]: [{ content: "Hi." }],
  [HOLD_IN_STUDIO]: [
    { toolCalls: [{ name: "execute_command", args: { command: holdUntil("studio-hold") } }] },
    { content: "Released in Studio." },
  ],
  [HOLD_IN_CLI]: [
    { toolCalls: [{ name: "execute_command", args: { command: holdUntil("cli-hold") } }] },
    { content: "Released in the CLI." },
  ],
  [COUNT_ONCE]: [
    { toolCalls: [{ name: "execute_command", args: { command: "echo once >> count.txt" } }] },
    { content: "Counted." },
  ],
  [CROSS_SITE]: [
    { toolCalls: [{ name: "execute_command", args: { command: "echo crossed > crossed.txt" } }] },
    { content: "Done." },
  ],
  [LONG_SEARCH]: [
    ...Array.from(
      { length: LONG_STEPS },
      (_, i): ScriptStep => ({ toolCalls: [{ name: "find_files", args: { pattern: `*.conf${i}` } }] }),
    ),
    { content: "There are no config files." },
  ],
};

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content))
    return content
      .map((part) => (typeof part === "string" ? part : String((part as { text?: string }).text ?? "")))
      .join("");
  return "";
}

/** Time travel (issue 21): plans picked by the latest request of the thread, steps (model turns) counted from it. */
const NOTES_V1 = "Write notes v1.";
const NOTES_V2 = "Write notes v2.";
const COPY_NOTES = "Copy the notes.";
const TRAVEL_PLANS: Record<string, ScriptStep[]> = {
  [NOTES_V1]: [
    { toolCalls: [{ name: "write_file", args: { filePath: "notes.txt", content: "v1\n" } }] },
    { content: "Wrote v1." },
  ],
  [NOTES_V2]: [
    {
      toolCalls: [
        { name: "write_file", args: { filePath: "notes.txt", content: "v2\n" } },
        { name: "write_file", args: { filePath: "extra.txt", content: "extra\n" } },
      ],
    },
    { content: "Wrote v2." },
  ],
  [COPY_NOTES]: [
    { toolCalls: [{ name: "execute_command", args: { command: "cp notes.txt copy.txt" } }] },
    { content: "Copied." },
  ],
};

function travelStep(request: ChatRequest): ScriptStep | undefined {
  const lastUser = request.messages.map((m) => m.role).lastIndexOf("user");
  const plan = TRAVEL_PLANS[textOf(request.messages[lastUser]?.content)];
  return plan?.[request.messages.slice(lastUser).filter((m) => m.role === "assistant").length];
}

function scriptStep(request: ChatRequest): ScriptStep {
  const travel = travelStep(request);
  if (travel) return travel;
  const task = textOf(request.messages.find((m) => m.role === "user")?.content);
  const plan = PLANS[task];
  const done = request.messages.filter((m) => m.role === "tool").length;
  const step = plan?.[done];
  if (!step) return { status: 500, error: { message: `no scripted step for "${task}" after ${done} tool results` } };
  return step;
}

interface ApiMessage {
  type: string;
  content: unknown;
  name?: string;
  tool_call_id?: string;
  status?: string;
  tool_calls?: Array<{ name: string; args: Record<string, unknown>; id?: string }>;
}
type AgentValues = { messages: ApiMessage[]; alwaysAllow: string[] };

interface ApprovalValue {
  toolCallId: string;
  tool: string;
  args: Record<string, unknown>;
  reason: string;
  preview?: unknown;
  approveWith?: string;
}

let model: OpenAIServer;
let langsmith: LangSmithServer;
let project: ReturnType<typeof makeTempDir>;
let workspace: ReturnType<typeof makeTempDir>;
let studio: ChildProcess | undefined;
let output = "";
let apiUrl = "";
let client: Client;
let assistantId = "";
let schemas: Promise<Awaited<ReturnType<Client["assistants"]["getSchemas"]>>> | undefined;
let repoGitignore = "";
let copyGitignore = "";
const timings: Record<string, number> = {};

function killStudio(signal: NodeJS.Signals): void {
  if (!studio?.pid) return;
  try {
    process.kill(-studio.pid, signal);
  } catch {
    // Already gone.
  }
}

function killPid(pid: number): void {
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // Already gone.
  }
}

beforeAll(async () => {
  repoGitignore = readFileSync(path.join(PROJECT_ROOT, ".gitignore"), "utf8");
  model = await startOpenAIServer(scriptStep);
  langsmith = await startLangSmithServer();
  workspace = makeTempDir("mini-cursor-studio-ws-");
  writeFileSync(path.join(workspace.dir, ".env"), `DEPLOY_SECRET=${PLANTED}\n`);
  project = makeTempDir("mini-cursor-studio-project-");
  for (const entry of ["src", "scripts", "package.json", "langgraph.json", "tsconfig.json", ".gitignore", ".npmrc"]) {
    const from = path.join(PROJECT_ROOT, entry);
    if (existsSync(from)) cpSync(from, path.join(project.dir, entry), { recursive: true });
  }
  symlinkSync(path.join(PROJECT_ROOT, "node_modules"), path.join(project.dir, "node_modules"), "dir");
  copyGitignore = readFileSync(path.join(project.dir, ".gitignore"), "utf8");

  const port = await freePort();
  apiUrl = `http://127.0.0.1:${port}`;
  const env = baseEnv({
    OPENAI_BASE_URL: model.url,
    OPENAI_API_KEY: "test",
    MINI_CURSOR_WORKSPACE: workspace.dir,
    LANGGRAPH_CLI_NO_ANALYTICS: "1",
    // Commands run unsandboxed, so stopping the background server below is the dev server's own
    // doing on exit (under bubblewrap, --die-with-parent would do it) on every machine.
    MINI_CURSOR_SANDBOX: "off",
  });
  // Nothing may leave the machine: LangSmith tracing goes to a local stand-in only.
  for (const key of Object.keys(env)) if (key.startsWith("LANGSMITH_") || key.startsWith("LANGCHAIN_")) delete env[key];
  Object.assign(env, {
    LANGSMITH_TRACING: "true",
    LANGSMITH_API_KEY: "lsv2_pt_studio_test_key_4c1d",
    LANGSMITH_ENDPOINT: langsmith.url,
  });

  const started = Date.now();
  // Started in full-auto on its command line, so its runs may ask for any mode; the runs that
  // show a question ask for auto-edit.
  studio = spawn("npm", ["run", "studio", "--", "--port", String(port), "--no-reload", "--approval", "full-auto"], {
    cwd: project.dir,
    env,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  studio.stdout!.on("data", (d: Buffer) => (output += d.toString()));
  studio.stderr!.on("data", (d: Buffer) => (output += d.toString()));
  await waitFor(
    async () => {
      if (studio!.exitCode !== null || studio!.signalCode !== null)
        throw new Error(`npm run studio exited early:\n${output}`);
      return (await accepts(`${apiUrl}/ok`)) && output.includes("mini-cursor is ready for LangGraph Studio");
    },
    STARTUP_DEADLINE_MS,
    250,
  ).catch((err: Error) => {
    throw new Error(`${err.message}\n--- npm run studio output ---\n${output}`);
  });
  timings.startupMs = Date.now() - started;

  client = new Client({ apiUrl });
  const [assistant] = await client.assistants.search({ graphId: "agent" });
  assistantId = assistant?.assistant_id ?? "";
  // Studio asks for these when it opens the graph; started now, checked at the end (slow, type-checked).
  const schemaStarted = Date.now();
  schemas = client.assistants.getSchemas(assistantId).then((s) => {
    timings.schemasMs = Date.now() - schemaStarted;
    return s;
  });
  schemas.catch(() => undefined);
}, STARTUP_DEADLINE_MS + 30_000);

afterAll(async () => {
  // Normally the last tests stopped it; after a failure, nothing of it may stay behind.
  killStudio("SIGKILL");
  for (const dir of [project?.dir, workspace?.dir]) if (dir) for (const pid of processesIn(dir)) killPid(pid);
  await model?.close();
  await langsmith?.close();
  workspace?.cleanup();
  project?.cleanup();
  process.stdout.write(`studio.test timings: ${JSON.stringify(timings)}\n`);
});

test("npm run studio prints the local API URL and the Studio link", () => {
  const port = new URL(apiUrl).port;
  expect(output).toContain(`API     http://127.0.0.1:${port}`);
  expect(output).toContain(`Studio  https://smith.langchain.com/studio/?baseUrl=http://127.0.0.1:${port}`);
  // A fresh clone has no .env: the server says so and goes on.
  expect(output).toContain('Env file ".env" not found');
});

test("the assistant for graph agent exists", async () => {
  const assistants = await client.assistants.search({ graphId: "agent" });
  expect(assistants.map((a) => a.graph_id)).toEqual(["agent"]);
  expect(assistantId).toBe(assistants[0]!.assistant_id);
});

test(
  "a run stops at the approval for execute_command after the write; approving runs it and finishes",
  async () => {
    const thread = await client.threads.create();
    const started = Date.now();
    // runs/wait answers a paused run with its interrupts: the approval request, nothing else.
    const paused = (await client.runs.wait(thread.thread_id, assistantId, {
      input: { messages: [{ type: "human", content: WRITE_AND_RUN }] },
      config: { configurable: { approval: "auto-edit" } },
    })) as { __interrupt__?: Interrupt<ApprovalValue>[] };
    expect(Object.keys(paused)).toEqual(["__interrupt__"]);
    // The write ran without asking (auto-edit); the command waits for an answer.
    expect(readFileSync(path.join(workspace.dir, "hello.js"), "utf8")).toBe(HELLO_JS);
    const state = (await client.threads.getState(thread.thread_id)) as ThreadState<AgentValues>;
    expect(state.next).toEqual(["approve"]);
    expect(state.values.messages.map((m) => m.type)).toEqual(["human", "ai", "tool", "ai"]);
    const call = state.values.messages[3]!.tool_calls![0]!;
    const request = {
      toolCallId: call.id,
      tool: "execute_command",
      args: { command: "node hello.js" },
      reason: "runs a shell command (approval mode auto-edit)",
      approveWith: STUDIO_APPROVE_WITH,
      // What {decision: "always"} would allow for the rest of the thread.
      alwaysRules: ["node"],
    };
    expect(paused.__interrupt__!.map((i) => i.value)).toEqual([request]);
    expect(state.tasks.flatMap((t) => t.interrupts).map((i) => i.value)).toEqual([request]);
    expect(
      model.requests.filter((r) => textOf(r.messages.find((m) => m.role === "user")?.content) === WRITE_AND_RUN),
    ).toHaveLength(2);

    const finished = (await client.runs.wait(thread.thread_id, assistantId, {
      command: { resume: { decision: "approve", code: await approvalCode(thread.thread_id) } },
    })) as AgentValues;
    timings.approvalRunMs = Date.now() - started;
    expect(finished.messages.map((m) => m.type)).toEqual(["human", "ai", "tool", "ai", "tool", "ai"]);

    // GET /threads/<id>/state: the whole conversation.
    const final = (await client.threads.getState(thread.thread_id)) as ThreadState<AgentValues>;
    expect(final.next).toEqual([]);
    const messages = final.values.messages;
    expect(messages.map((m) => m.type)).toEqual(["human", "ai", "tool", "ai", "tool", "ai"]);
    expect(textOf(messages[0]!.content)).toBe(WRITE_AND_RUN);
    expect(messages[1]!.tool_calls!.map((c) => [c.name, c.args])).toEqual([
      ["write_file", { filePath: "hello.js", content: HELLO_JS }],
    ]);
    expect(messages[2]).toMatchObject({ name: "write_file", tool_call_id: messages[1]!.tool_calls![0]!.id });
    expect(textOf(messages[2]!.content)).toMatch(/Created hello\.js/i);
    expect(messages[3]!.tool_calls!.map((c) => [c.name, c.args])).toEqual([
      ["execute_command", { command: "node hello.js" }],
    ]);
    expect(messages[4]).toMatchObject({ name: "execute_command", tool_call_id: call.id });
    expect(messages[4]!.status).not.toBe("error");
    expect(textOf(messages[4]!.content)).toContain("hello from studio");
    expect(textOf(messages[5]!.content)).toBe("Wrote hello.js and ran it: it printed hello from studio.");

    // Three model requests for this task, with the model and tools of the environment.
    const requests = model.requests.filter(
      (r) => textOf(r.messages.find((m) => m.role === "user")?.content) === WRITE_AND_RUN,
    );
    expect(requests).toHaveLength(3);
    expect(requests.map((r) => r.model)).toEqual(["gpt-5-mini", "gpt-5-mini", "gpt-5-mini"]);
    expect(requests[0]!.tools?.map((t) => t.function.name)).toEqual(
      expect.arrayContaining(["read_file", "write_file", "execute_command"]),
    );
    expect(textOf(requests[0]!.messages[0]!.content)).toContain(`Workspace root: ${workspace.dir}`);
  },
  RUN_DEADLINE_MS * 2,
);

/** Codes the person has used, which no trace may carry. */
const spentCodes: string[] = [];

/** The one-time code the server printed to its terminal for the thread's waiting call (studio-secret.ts). */
async function approvalCode(threadId: string): Promise<string> {
  const pattern = new RegExp(`in thread ${threadId} waits for approval[^\\n]*\\n  One-time approval code: (\\S+)`, "g");
  const found = await waitFor(() => [...output.matchAll(pattern)].at(-1)?.[1], 10_000).catch(() => undefined);
  if (!found) throw new Error(`the server printed no approval code for thread ${threadId}:\n${output}`);
  spentCodes.push(found);
  return found;
}

/** A process on the machine (as one the agent started would) resuming every interrupt with "approve". */
const SELF_APPROVER = `
const api = process.argv[1];
const post = (p, body) => fetch(api + p, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) }).then((r) => r.json());
(async () => {
  let resumed = 0;
  for (const t of await post("/threads/search", { status: "interrupted" })) {
    const [assistant] = await post("/assistants/search", { graph_id: "agent" });
    await post("/threads/" + t.thread_id + "/runs/wait", { assistant_id: assistant.assistant_id, command: { resume: { decision: "approve" } } });
    resumed++;
  }
  console.log("resumed " + resumed);
})();
`;

test(
  "a process calling the dev server's API cannot approve an interrupt without the code; CORS admits only Studio",
  async () => {
    const thread = await client.threads.create();
    const paused = (await client.runs.wait(thread.thread_id, assistantId, {
      input: { messages: [{ type: "human", content: CLEAN_UP }] },
      config: { configurable: { approval: "auto-edit" } },
    })) as { __interrupt__?: Interrupt<ApprovalValue>[] };
    expect(paused.__interrupt__!.map((i) => i.value?.approveWith)).toEqual([STUDIO_APPROVE_WITH]);
    const attacker = spawn(process.execPath, ["-e", SELF_APPROVER, apiUrl], { stdio: ["ignore", "pipe", "pipe"] });
    let said = "";
    attacker.stdout!.on("data", (d: Buffer) => (said += d.toString()));
    attacker.stderr!.on("data", (d: Buffer) => (said += d.toString()));
    await new Promise((resolve) => attacker.once("close", resolve));
    expect(said).toMatch(/^resumed [1-9]\d*\n$/);
    const final = (await client.threads.getState(thread.thread_id)) as ThreadState<AgentValues>;
    expect(final.next).toEqual([]);
    const result = final.values.messages.find((m) => m.type === "tool")!;
    expect(result.status).toBe("error");
    expect(textOf(result.content)).toContain("did not carry this call's one-time Studio approval code");
    expect(existsSync(path.join(workspace.dir, "pwned.txt"))).toBe(false);

    const preflight = (origin: string) =>
      fetch(`${apiUrl}/threads/search`, {
        method: "OPTIONS",
        headers: { Origin: origin, "Access-Control-Request-Method": "POST" },
      });
    expect((await preflight("https://evil.example")).headers.get("access-control-allow-origin")).toBeNull();
    expect((await preflight("https://smith.langchain.com")).headers.get("access-control-allow-origin")).toBe(
      "https://smith.langchain.com",
    );
  },
  RUN_DEADLINE_MS * 2,
);

/**
 * The agent's own background process, unsandboxed, doing everything it can without the server's
 * terminal: every endpoint that lists threads, runs, state and history; every file the dev
 * server wrote; the environment and command line of every process in /proc. It collects
 * anything that looks like a code (and every resume the person sent), replays the person's
 * earlier approval from the checkpoint before it, and answers every waiting call with what it found.
 */
const API_ATTACKER = `
const fs = require("node:fs");
const path = require("node:path");
const [api, projectDir] = process.argv.slice(1);
const call = (method, p, body) => fetch(api + p, { method, headers: body ? { "content-type": "application/json" } : {}, body: body ? JSON.stringify(body) : undefined }).then(async (r) => { const t = await r.text(); texts.push(t); try { return JSON.parse(t); } catch { return t; } });
const texts = [];
const entries = (dir) => { try { return fs.readdirSync(dir, { withFileTypes: true }); } catch { return []; } };
const walk = (dir) => { for (const e of entries(dir)) { const f = path.join(dir, e.name); if (e.isDirectory()) walk(f); else try { texts.push(fs.readFileSync(f, "latin1")); } catch {} } };
(async () => {
  const [assistant] = await call("POST", "/assistants/search", { graph_id: "agent" });
  const threads = await call("POST", "/threads/search", { limit: 100 });
  const resumes = [];
  for (const t of threads) {
    const runs = await call("GET", "/threads/" + t.thread_id + "/runs");
    for (const r of runs) if (r.kwargs && r.kwargs.command && r.kwargs.command.resume) resumes.push({ thread: t.thread_id, resume: r.kwargs.command.resume });
    await call("GET", "/threads/" + t.thread_id + "/state");
    await call("POST", "/threads/" + t.thread_id + "/history", { limit: 100 });
  }
  walk(path.join(projectDir, ".langgraph_api"));
  for (const pid of fs.readdirSync("/proc").filter((p) => /^\\d+$/.test(p))) {
    for (const f of ["environ", "cmdline"]) try { texts.push(fs.readFileSync("/proc/" + pid + "/" + f, "latin1")); } catch {}
  }
  const all = texts.join("\\n");
  const codes = new Set(all.match(/[A-Z2-9]{5}-[A-Z2-9]{5}/g) || []);
  for (const r of resumes) if (typeof r.resume.code === "string") codes.add(r.resume.code);
  // Replay: the person's approvals, from the checkpoint where their call was waiting.
  let replayed = 0;
  for (const r of resumes) {
    const history = await call("POST", "/threads/" + r.thread + "/history", { limit: 100 });
    for (const state of history.filter((s) => s.next.includes("approve"))) {
      await call("POST", "/threads/" + r.thread + "/runs/wait", { assistant_id: assistant.assistant_id, checkpoint: state.checkpoint, command: { resume: r.resume } });
      replayed++;
    }
  }
  // Every waiting call, answered with every code found.
  let tried = 0;
  for (const t of await call("POST", "/threads/search", { status: "interrupted" })) {
    for (const code of [...codes, undefined]) {
      await call("POST", "/threads/" + t.thread_id + "/runs/wait", { assistant_id: assistant.assistant_id, command: { resume: { decision: "approve", code, secret: code } } });
      tried++;
    }
  }
  console.log(JSON.stringify({ codes: codes.size, replayed, tried }));
})();
`;

/** API_ATTACKER as this process's user, or as `uid` (setpriv); its report. */
async function runApiAttacker(uid: number | undefined): Promise<{ codes: number; replayed: number; tried: number }> {
  const argv = [process.execPath, "-e", API_ATTACKER, apiUrl, project.dir];
  const attacker =
    uid === undefined
      ? spawn(argv[0]!, argv.slice(1), { stdio: ["ignore", "pipe", "pipe"] })
      : spawn(...asUser(uid, argv), {
          stdio: ["ignore", "pipe", "pipe"],
          cwd: "/",
        });
  let said = "";
  attacker.stdout!.on("data", (d: Buffer) => (said += d.toString()));
  attacker.stderr!.on("data", (d: Buffer) => (said += d.toString()));
  await new Promise((resolve) => attacker.once("close", resolve));
  return JSON.parse(said) as { codes: number; replayed: number; tried: number };
}

/** Text of every endpoint, file and /proc entry the attacker reads, gathered here to look for a code. */
async function everythingReadable(threadIds: string[]): Promise<string> {
  const texts: string[] = [];
  const get = async (p: string, body?: object) => {
    const res = await fetch(`${apiUrl}${p}`, {
      method: body ? "POST" : "GET",
      headers: body ? { "content-type": "application/json" } : {},
      body: body ? JSON.stringify(body) : undefined,
    });
    texts.push(await res.text());
  };
  await get("/threads/search", { limit: 100 });
  for (const id of threadIds) {
    await get(`/threads/${id}/runs`);
    await get(`/threads/${id}/state`);
    await get(`/threads/${id}/history`, { limit: 100 });
  }
  // Every GET route the dev server has, filled with these threads' ids, runs and checkpoints.
  const getRoutes = (await devServerRoutes()).filter((r) => r.method === "GET");
  for (const id of threadIds) {
    const runs = (await client.runs.list(id)) as Array<{ run_id: string }>;
    const checkpoint = (await client.threads.getState(id)).checkpoint?.checkpoint_id ?? "";
    for (const run of runs.length > 0 ? runs : [{ run_id: "" }]) {
      const ids = {
        thread_id: id,
        run_id: run.run_id,
        assistant_id: assistantId,
        checkpoint_id: checkpoint,
        agent: "agent",
        basename: "index.js",
      };
      // All at once: each stream that stays open costs its 5 s cut-off, not one after another.
      const bodies = await Promise.all(
        getRoutes.map(async (route) => {
          try {
            const res = await fetch(`${apiUrl}${fillRoute(route.path, ids)}`, { signal: AbortSignal.timeout(5_000) });
            return await res.text();
          } catch {
            // A stream that stays open is cut off; what it sent so far is not kept, and it had to wait for news.
            return "";
          }
        }),
      );
      texts.push(...bodies);
    }
  }
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const f = path.join(dir, e.name);
      if (e.isDirectory()) walk(f);
      else texts.push(readFileSync(f, "latin1"));
    }
  };
  walk(path.join(project.dir, ".langgraph_api"));
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    for (const f of ["environ", "cmdline"]) {
      try {
        texts.push(readFileSync(`/proc/${pid}/${f}`, "latin1"));
      } catch {
        // Gone meanwhile.
      }
    }
  }
  return texts.join("\n");
}

test(
  "approval codes are one-time and per call: the agent's background process finds none it can use, and a replayed approval is refused",
  async () => {
    // The person approves one call with its code.
    const once = await client.threads.create();
    await client.runs.wait(once.thread_id, assistantId, {
      input: { messages: [{ type: "human", content: COUNT_ONCE }] },
      config: { configurable: { approval: "auto-edit" } },
    });
    const onceCode = await approvalCode(once.thread_id);
    await client.runs.wait(once.thread_id, assistantId, {
      command: { resume: { decision: "approve", code: onceCode } },
    });
    expect(readFileSync(path.join(workspace.dir, "count.txt"), "utf8")).toBe("once\n");

    // A second call waits; its code is in the server's terminal and nowhere the API, files or /proc show.
    const waiting = await client.threads.create();
    await client.runs.wait(waiting.thread_id, assistantId, {
      input: { messages: [{ type: "human", content: CLEAN_UP }] },
      config: { configurable: { approval: "auto-edit" } },
    });
    const waitingCode = await approvalCode(waiting.thread_id);
    expect(waitingCode).not.toBe(onceCode);
    const readable = await everythingReadable([once.thread_id, waiting.thread_id]);
    expect(readable).not.toContain(waitingCode);
    expect(readable).not.toContain(waitingCode.replace("-", ""));

    const report = await runApiAttacker(undefined);
    // It found the person's spent code, replayed the approval, and answered the waiting call.
    expect(report.codes).toBeGreaterThan(0);
    expect(report.replayed).toBeGreaterThan(0);
    expect(report.tried).toBeGreaterThan(0);

    expect(readFileSync(path.join(workspace.dir, "count.txt"), "utf8")).toBe("once\n");
    expect(existsSync(path.join(workspace.dir, "pwned.txt"))).toBe(false);
    // The replay did reach the approval (a fork from the checkpoint before it), and was refused there.
    const replayed = (await client.threads.getState(once.thread_id)) as ThreadState<AgentValues>;
    const replayedResult = replayed.values.messages.filter((m) => m.type === "tool").at(-1)!;
    expect(textOf(replayedResult.content)).toContain("did not carry this call's one-time Studio approval code");
    const final = (await client.threads.getState(waiting.thread_id)) as ThreadState<AgentValues>;
    const result = final.values.messages.find((m) => m.type === "tool")!;
    expect(result.status).toBe("error");
    expect(textOf(result.content)).toContain("did not carry this call's one-time Studio approval code");

    // The same attack from a process of an ordinary user (uid 65534), on a new waiting call.
    if (!RUNNING_AS_ROOT || !runsAs(NOBODY, "studio's API attacker as uid 65534")) return;
    const next = await client.threads.create();
    await client.runs.wait(next.thread_id, assistantId, {
      input: { messages: [{ type: "human", content: CLEAN_UP }] },
      config: { configurable: { approval: "auto-edit" } },
    });
    const nextCode = await approvalCode(next.thread_id);
    const asNobody = await runApiAttacker(NOBODY);
    expect(asNobody.codes).toBeGreaterThan(0);
    expect(asNobody.tried).toBeGreaterThan(0);
    expect(existsSync(path.join(workspace.dir, "pwned.txt"))).toBe(false);
    expect(await everythingReadable([next.thread_id])).not.toContain(nextCode);
    const nextFinal = (await client.threads.getState(next.thread_id)) as ThreadState<AgentValues>;
    const nextResult = nextFinal.values.messages.find((m) => m.type === "tool")!;
    expect(textOf(nextResult.content)).toContain("did not carry this call's one-time Studio approval code");
  },
  // Its attacker answers every waiting call of the server with every code it found: many runs.
  RUN_DEADLINE_MS * 10,
);

/** A raw request, so Host and Origin are exactly what a browser or a rebinding page would send. */
function rawRequest(
  method: string,
  p: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; body: string }> {
  const url = new URL(apiUrl);
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: url.hostname, port: Number(url.port), method, path: p, headers, setHost: false },
      (res) => {
        let text = "";
        res.on("data", (d: Buffer) => (text += d.toString()));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.once("error", reject);
    req.end(body);
  });
}

test(
  "cross-site text/plain POSTs, foreign Host headers and non-JSON bodies are refused before any run starts",
  async () => {
    const host = new URL(apiUrl).host;
    const threadsBefore = (await client.threads.search({ limit: 1000 })).length;
    const requestsBefore = model.requests.length;
    const run = JSON.stringify({
      assistant_id: assistantId,
      input: { messages: [{ type: "human", content: CROSS_SITE }] },
      config: { configurable: { approval: "full-auto" } },
    });
    // What a page on another site can send without a preflight.
    const crossSite = await rawRequest(
      "POST",
      "/runs/wait",
      { Host: host, Origin: "https://evil.example", "Content-Type": "text/plain;charset=UTF-8" },
      run,
    );
    expect(crossSite.status).toBe(403);
    expect(JSON.parse(crossSite.body).detail).toContain("not a page from https://evil.example");
    const created = await rawRequest(
      "POST",
      "/threads",
      { Host: host, Origin: "null", "Content-Type": "text/plain" },
      "{}",
    );
    expect(created.status).toBe(403);
    // DNS rebinding: the page's own host name, pointing at 127.0.0.1, and no Origin to give it away.
    for (const foreign of [
      `evil.example:${new URL(apiUrl).port}`,
      `localhost.evil.example:${new URL(apiUrl).port}`,
      "127.0.0.1:1",
    ]) {
      const rebound = await rawRequest(
        "POST",
        "/runs/wait",
        { Host: foreign, "Content-Type": "application/json" },
        run,
      );
      expect(rebound.status).toBe(403);
      expect(JSON.parse(rebound.body).detail).toContain(`not to "${foreign}"`);
      expect((await rawRequest("GET", "/threads/search", { Host: foreign })).status).toBe(403);
    }
    // Not JSON, even from a local tool.
    const plain = await rawRequest("POST", "/runs/wait", { Host: host, "Content-Type": "text/plain" }, run);
    expect(plain.status).toBe(415);
    const form = await rawRequest(
      "POST",
      "/threads",
      { Host: host, "Content-Type": "application/x-www-form-urlencoded" },
      "a=b",
    );
    expect(form.status).toBe(415);

    expect(model.requests.length).toBe(requestsBefore);
    expect(existsSync(path.join(workspace.dir, "crossed.txt"))).toBe(false);
    expect((await client.threads.search({ limit: 1000 })).length).toBe(threadsBefore);
    // Studio's own origin and local tools still get in.
    const studioPage = await rawRequest(
      "POST",
      "/threads",
      { Host: host, Origin: "https://smith.langchain.com", "Content-Type": "application/json" },
      "{}",
    );
    expect(studioPage.status).toBe(200);
    expect((await client.threads.search({ limit: 1000 })).length).toBe(threadsBefore + 1);
  },
  RUN_DEADLINE_MS,
);

const MUTATING = new Set(["POST", "PUT", "PATCH", "DELETE"]);

test(
  "every route of the dev server, /internal/truncate included, refuses a cross-site text/plain request, a foreign Host and a non-JSON body before anything runs",
  async () => {
    const routes: DevServerRoute[] = await devServerRoutes();
    expect(routes).toContainEqual({ method: "POST", path: "/internal/truncate" });
    const mutating = routes.filter((r) => MUTATING.has(r.method));
    expect(mutating.length).toBeGreaterThan(30);
    const host = new URL(apiUrl).host;
    const foreign = `evil.example:${new URL(apiUrl).port}`;
    // A thread with a finished run: its ids fill the routes' parameters, and it must come through untouched.
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, assistantId, {
      input: { messages: [{ type: "human", content: SAY_HI }] },
    });
    const [run] = (await client.runs.list(thread.thread_id)) as Array<{ run_id: string }>;
    const stateBefore = JSON.stringify(await client.threads.getState(thread.thread_id));
    const threadsBefore = (await client.threads.search({ limit: 1000 })).length;
    const assistantsBefore = (await client.assistants.search({ limit: 1000 })).length;
    const requestsBefore = model.requests.length;
    const ids = { thread_id: thread.thread_id, run_id: run!.run_id, assistant_id: assistantId, agent: "agent" };
    // One body that every route would act on: truncate everything, or start a full-auto run.
    const payload = JSON.stringify({
      runs: true,
      threads: true,
      assistants: true,
      checkpointer: true,
      store: true,
      assistant_id: assistantId,
      graph_id: "agent",
      input: { messages: [{ type: "human", content: CROSS_SITE }] },
      config: { configurable: { approval: "full-auto" } },
      values: { messages: [{ type: "human", content: CROSS_SITE }] },
      namespace: ["pwned"],
      key: "k",
      value: { pwned: true },
    });
    const answered: Record<string, number[]> = {};
    for (const route of mutating) {
      const p = fillRoute(route.path, ids);
      // A browser sends no body with DELETE (nor with GET); the content type alone is refused.
      const body = route.method === "DELETE" ? undefined : payload;
      const crossSite = await rawRequest(
        route.method,
        p,
        { Host: host, Origin: "https://evil.example", "Content-Type": "text/plain;charset=UTF-8" },
        body,
      );
      const rebound = await rawRequest(route.method, p, { Host: foreign, "Content-Type": "application/json" }, body);
      const plain = await rawRequest(route.method, p, { Host: host, "Content-Type": "text/plain" }, body);
      answered[`${route.method} ${route.path}`] = [crossSite.status, rebound.status, plain.status];
    }
    expect(Object.entries(answered).filter(([, s]) => s.join() !== "403,403,415")).toEqual([]);
    // Reading under a foreign Host (a rebinding page reading the conversation) is refused as well.
    const reads: Record<string, number> = {};
    for (const route of routes.filter((r) => r.method === "GET"))
      reads[route.path] = (await rawRequest("GET", fillRoute(route.path, ids), { Host: foreign })).status;
    expect(Object.entries(reads).filter(([, status]) => status !== 403)).toEqual([]);

    expect(output).toContain(
      `mini-cursor: refused POST /internal/truncate: mini-cursor's Studio server answers only LangGraph Studio`,
    );
    expect(model.requests.length).toBe(requestsBefore);
    expect(existsSync(path.join(workspace.dir, "crossed.txt"))).toBe(false);
    expect((await client.threads.search({ limit: 1000 })).length).toBe(threadsBefore);
    expect((await client.assistants.search({ limit: 1000 })).length).toBe(assistantsBefore);
    expect(JSON.stringify(await client.threads.getState(thread.thread_id))).toBe(stateBefore);
    expect(await client.store.searchItems(["pwned"])).toEqual({ items: [] });
  },
  RUN_DEADLINE_MS * 3,
);

test(
  "a workspace outside the folder the server was started for, named directly or through a symlink inside it, is refused",
  async () => {
    const outside = makeTempDir("mini-cursor-studio-outside-");
    try {
      const requestsBefore = model.requests.length;
      const thread = await client.threads.create();
      const run = await client.runs.create(thread.thread_id, assistantId, {
        input: { messages: [{ type: "human", content: CROSS_SITE }] },
        config: { configurable: { workspace: outside.dir, approval: "full-auto" } },
      });
      await client.runs.join(thread.thread_id, run.run_id).catch(() => undefined);
      const done = await client.runs.get(thread.thread_id, run.run_id);
      expect(done.status).toBe("error");
      expect(model.requests.length).toBe(requestsBefore);
      expect(readdirSync(outside.dir)).toEqual([]);
      expect(output).toContain(`The workspace ${outside.dir} is outside ${workspace.dir}`);

      // A symlink inside that leads out is outside too.
      symlinkSync(outside.dir, path.join(workspace.dir, "escape"));
      const viaLink = await client.threads.create();
      const linked = await client.runs.create(viaLink.thread_id, assistantId, {
        input: { messages: [{ type: "human", content: CROSS_SITE }] },
        config: { configurable: { workspace: path.join(workspace.dir, "escape"), approval: "full-auto" } },
      });
      await client.runs.join(viaLink.thread_id, linked.run_id).catch(() => undefined);
      expect((await client.runs.get(viaLink.thread_id, linked.run_id)).status).toBe("error");
      expect(readdirSync(outside.dir)).toEqual([]);
      expect(model.requests.length).toBe(requestsBefore);
    } finally {
      rmSync(path.join(workspace.dir, "escape"), { force: true });
      outside.cleanup();
    }
  },
  RUN_DEADLINE_MS,
);

test(
  "Studio's LangSmith traces pass the output gate: no workspace secret, no approval code, no LangSmith key",
  async () => {
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, assistantId, {
      input: { messages: [{ type: "human", content: TRACED_TASK }] },
    });
    // Traces are posted in the background, in batches.
    await waitFor(() => langsmith.requests.some((r) => r.body.includes("Noted.")), 30_000, 100);
    const posted = langsmith.requests.map((r) => r.body).join("\n");
    expect(posted).toContain("[redacted] for later");
    expect(posted).not.toContain(PLANTED);
    expect(posted).not.toContain("lsv2_pt_studio_test_key_4c1d");
    for (const code of spentCodes) {
      expect(posted).not.toContain(code);
      expect(posted).not.toContain(code.replace("-", ""));
    }
  },
  RUN_DEADLINE_MS,
);

let backgroundUrl = "";

test(
  "runs.stream emits messages and updates events; model and approval come from the run's configuration",
  async () => {
    const thread = await client.threads.create();
    const started = Date.now();
    const events: Array<{ event: string; data: unknown }> = [];
    for await (const chunk of client.runs.stream(thread.thread_id, assistantId, {
      input: { messages: [{ type: "human", content: START_SERVER }] },
      streamMode: ["messages", "updates"],
      config: { configurable: { model: "scripted-model", approval: "full-auto", maxSteps: 5 } },
    })) {
      events.push({ event: chunk.event, data: chunk.data });
    }
    timings.streamRunMs = Date.now() - started;
    const names = events.map((e) => e.event);
    expect(names[0]).toBe("metadata");
    expect(names).not.toContain("error");

    // Tokens: the final answer arrives in several partial message events, growing.
    const partial = events
      .filter((e) => e.event === "messages/partial")
      .map((e) => (e.data as ApiMessage[])[0]!)
      .filter((m) => m.type === "ai" && textOf(m.content) !== "");
    expect(partial.length).toBeGreaterThan(1);
    expect(textOf(partial[partial.length - 1]!.content)).toBe("The server is running in the background.");

    // Updates: agent, tools, agent, tools, agent (full-auto: no approval pause). Each step starts
    // with the compact node (nothing to compact here) and may pass through approve.
    const updates = events
      .filter((e) => e.event === "updates")
      .map((e) => e.data as Record<string, { messages?: ApiMessage[] }>);
    const nodes = updates
      .flatMap((u) => Object.keys(u))
      .filter((n) => !["approve", "start_step", "restore_files", "summarise"].includes(n));
    expect(nodes).toEqual(["agent", "tools", "step_done", "agent", "tools", "step_done", "agent"]);
    expect(updates.some((u) => "__interrupt__" in u)).toBe(false);
    const toolResults = updates.flatMap((u) => u.tools?.messages ?? []);
    expect(toolResults.map((m) => m.name)).toEqual(["write_file", "execute_command"]);
    const commandResult = textOf(toolResults[1]!.content);
    expect(commandResult).toMatch(/Running in the background as bg-1/);
    backgroundUrl = /http:\/\/127\.0\.0\.1:\d+/.exec(commandResult)?.[0] ?? "";
    expect(backgroundUrl).not.toBe("");
    expect(await accepts(backgroundUrl)).toBe(true);

    // The run's configuration chose the model.
    const requests = model.requests.filter(
      (r) => textOf(r.messages.find((m) => m.role === "user")?.content) === START_SERVER,
    );
    expect(requests.map((r) => r.model)).toEqual(["scripted-model", "scripted-model", "scripted-model"]);
    const final = (await client.threads.getState(thread.thread_id)) as ThreadState<AgentValues>;
    expect(final.values.messages.map((m) => m.type)).toEqual(["human", "ai", "tool", "ai", "tool", "ai"]);
  },
  RUN_DEADLINE_MS,
);

test(
  "a long run is not cut short by LangGraph's default recursion limit; configuration may come as context",
  async () => {
    const thread = await client.threads.create();
    const values = (await client.runs.wait(thread.thread_id, assistantId, {
      input: { messages: [{ type: "human", content: LONG_SEARCH }] },
      // Newer Studio versions send the assistant's fields as context.
      context: { model: "scripted-model" },
    })) as AgentValues;
    expect(values.messages.filter((m) => m.type === "tool")).toHaveLength(LONG_STEPS);
    expect(textOf(values.messages[values.messages.length - 1]!.content)).toBe("There are no config files.");
    const requests = model.requests.filter(
      (r) => textOf(r.messages.find((m) => m.role === "user")?.content) === LONG_SEARCH,
    );
    expect(requests).toHaveLength(LONG_STEPS + 1);
    expect(new Set(requests.map((r) => r.model))).toEqual(new Set(["scripted-model"]));
  },
  // Twelve steps: room for each on a busy machine.
  RUN_DEADLINE_MS * 3,
);

test(
  "forking a thread from an earlier checkpoint brings that checkpoint's files back before the run goes on",
  async () => {
    const thread = await client.threads.create();
    const config = { configurable: { approval: "full-auto" } };
    await client.runs.wait(thread.thread_id, assistantId, {
      input: { messages: [{ type: "human", content: NOTES_V1 }] },
      config,
    });
    await client.runs.wait(thread.thread_id, assistantId, {
      input: { messages: [{ type: "human", content: NOTES_V2 }] },
      config,
    });
    expect(readFileSync(path.join(workspace.dir, "notes.txt"), "utf8")).toBe("v2\n");
    expect(readFileSync(path.join(workspace.dir, "extra.txt"), "utf8")).toBe("extra\n");
    // The checkpoint where the first request had finished, as Studio's history shows it.
    const history = (await client.threads.getHistory(thread.thread_id, { limit: 50 })) as ThreadState<AgentValues>[];
    const endOfFirst = history.find((s) => s.next.length === 0 && s.values.messages?.length === 4);
    expect(endOfFirst?.values.messages.map((m) => textOf(m.content)).at(-1)).toBe("Wrote v1.");
    const forked = (await client.runs.wait(thread.thread_id, assistantId, {
      input: { messages: [{ type: "human", content: COPY_NOTES }] },
      config,
      checkpoint: endOfFirst!.checkpoint,
    })) as AgentValues;
    expect(
      forked.messages.map((m) => textOf(m.content)).filter((t) => t.startsWith("Wrote") || t === "Copied."),
    ).toEqual(["Wrote v1.", "Copied."]);
    // The command saw v1: the files went back before the run continued; the file v2 created is gone.
    expect(readFileSync(path.join(workspace.dir, "copy.txt"), "utf8")).toBe("v1\n");
    expect(readFileSync(path.join(workspace.dir, "notes.txt"), "utf8")).toBe("v1\n");
    expect(existsSync(path.join(workspace.dir, "extra.txt"))).toBe(false);
  },
  RUN_DEADLINE_MS * 3,
);

test(
  "Studio's assistant panel gets the configuration fields",
  async () => {
    const s = await Promise.race([
      schemas!,
      new Promise<never>((_, reject) =>
        setTimeout(() => reject(new Error("schemas did not arrive in time")), SCHEMA_DEADLINE_MS).unref(),
      ),
    ]);
    const config = s.config_schema as {
      properties: Record<string, { type?: string; enum?: string[]; description?: string }>;
    };
    expect(Object.keys(config.properties).sort()).toEqual(["approval", "maxSteps", "model", "workspace"]);
    expect(config.properties.approval!.enum!.sort()).toEqual(["auto-edit", "full-auto", "plan", "suggest"]);
    expect(config.properties.maxSteps!.type).toBe("number");
    expect(config.properties.model!.description).toMatch(/MINI_CURSOR_MODEL/);
    const input = s.input_schema as { properties: Record<string, unknown> };
    expect(Object.keys(input.properties)).toContain("messages");
    // The model's todo list is a state field, so Studio's state view shows it.
    const state = s.state_schema as { properties: Record<string, unknown> };
    expect(Object.keys(state.properties)).toEqual(expect.arrayContaining(["messages", "alwaysAllow", "todos"]));
  },
  SCHEMA_DEADLINE_MS + 10_000,
);

/** The CLI in the server's workspace and state home, against the same scripted model. */
function cliEnv(): NodeJS.ProcessEnv {
  return baseEnv({
    OPENAI_BASE_URL: model.url,
    OPENAI_API_KEY: "test",
    MINI_CURSOR_WORKSPACE: workspace.dir,
    MINI_CURSOR_SANDBOX: "off",
  });
}

test(
  "a Studio run holds its thread's lock: the CLI continuing that thread is refused naming the server, and a Studio run on a thread the CLI runs is refused naming the CLI",
  async () => {
    // Studio runs a thread; the CLI asks for the same thread meanwhile.
    const thread = await client.threads.create();
    const held = await client.runs.create(thread.thread_id, assistantId, {
      input: { messages: [{ type: "human", content: HOLD_IN_STUDIO }] },
      config: { configurable: { approval: "full-auto" } },
    });
    await waitFor(() => existsSync(path.join(workspace.dir, "studio-hold.started")), RUN_DEADLINE_MS, 50);
    const holderFile = path.join(stateDirOf(workspace.dir), "locks", `${thread.thread_id}.holder.json`);
    const holder = JSON.parse(readFileSync(holderFile, "utf8")) as { pid: number };
    // The holder is the dev server itself (the process that loaded the graph).
    expect(readFileSync(`/proc/${holder.pid}/cmdline`, "utf8")).toMatch(/langgraph/);
    const requestsBefore = model.requests.length;
    const refused = await runCli(["--thread", thread.thread_id, "--approval", "full-auto", SAY_HI], {
      env: cliEnv(),
      cwd: workspace.dir,
      timeoutMs: RUN_DEADLINE_MS,
    });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      `thread ${thread.thread_id} is being continued by another mini-cursor (pid ${holder.pid}, since `,
    );
    expect(model.requests.length).toBe(requestsBefore);
    writeFileSync(path.join(workspace.dir, "studio-hold.release"), "");
    await client.runs.join(thread.thread_id, held.run_id);
    expect((await client.runs.get(thread.thread_id, held.run_id)).status).toBe("success");
    expect(existsSync(holderFile)).toBe(false);

    // The CLI runs a thread; Studio is asked to run the same thread id meanwhile.
    const cliThread = "0190c3d6-5c1a-7b44-9d41-2f6f8a1e0b7c";
    const cli = startCli(["--thread", cliThread, "--approval", "full-auto", HOLD_IN_CLI], {
      env: cliEnv(),
      cwd: workspace.dir,
    });
    const cliDone = collect(cli, RUN_DEADLINE_MS * 2);
    await waitFor(() => existsSync(path.join(workspace.dir, "cli-hold.started")), RUN_DEADLINE_MS, 50);
    await client.threads.create({ threadId: cliThread });
    const studioBefore = model.requests.length;
    const blocked = await client.runs.create(cliThread, assistantId, {
      input: { messages: [{ type: "human", content: SAY_HI }] },
    });
    await client.runs.join(cliThread, blocked.run_id).catch(() => undefined);
    expect((await client.runs.get(cliThread, blocked.run_id)).status).toBe("error");
    expect(model.requests.length).toBe(studioBefore);
    await waitFor(
      () => output.includes(`thread ${cliThread} is being continued by another mini-cursor (pid ${cli.pid}, since `),
      10_000,
      50,
    );
    writeFileSync(path.join(workspace.dir, "cli-hold.release"), "");
    const finished = await cliDone;
    expect(finished.code).toBe(0);
    expect(finished.stdout).toContain("Released in the CLI.");
  },
  RUN_DEADLINE_MS * 4,
);

test(
  "stopping the server stops its whole process tree and the background processes its runs left",
  async () => {
    expect(processesIn(project.dir).length).toBeGreaterThan(0);
    const started = Date.now();
    killStudio("SIGTERM");
    // A second signal while the server shuts down (Ctrl-C twice; the CLI also passes one on as it
    // exits) must not cut its shutdown short.
    await waitFor(() => output.includes("Flushing to persistent storage"), STOP_DEADLINE_MS, 20);
    killStudio("SIGTERM");
    await waitFor(
      () => processesIn(project.dir).length === 0 && !groupAlive(studio!.pid!),
      STOP_DEADLINE_MS,
      100,
    ).catch((err: Error) => {
      throw new Error(`${err.message}: still running ${processesIn(project.dir).join(", ")}\n${output.slice(-3000)}`);
    });
    timings.stopMs = Date.now() - started;
    expect(await accepts(`${apiUrl}/ok`)).toBe(false);
    // The background server a run started went with it.
    expect(backgroundUrl).not.toBe("");
    await waitFor(async () => !(await accepts(backgroundUrl)), 10_000, 100);
  },
  STOP_DEADLINE_MS + 20_000,
);

test("the server kept its state in the project it ran in and left .gitignore alone", () => {
  expect(existsSync(path.join(project.dir, ".langgraph_api"))).toBe(true);
  expect(readFileSync(path.join(project.dir, ".gitignore"), "utf8")).toBe(copyGitignore);
  expect(copyGitignore).toMatch(/^\.langgraph_api$/m);
  expect(readFileSync(path.join(PROJECT_ROOT, ".gitignore"), "utf8")).toBe(repoGitignore);
});
