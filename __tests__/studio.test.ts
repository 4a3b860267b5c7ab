import { spawn, type ChildProcess } from "node:child_process";
import { cpSync, existsSync, readdirSync, readFileSync, readlinkSync, symlinkSync } from "node:fs";
import net, { type AddressInfo } from "node:net";
import path from "node:path";
import { Client, type Interrupt, type ThreadState } from "@langchain/langgraph-sdk";
import { STUDIO_APPROVE_WITH } from "../src/graph/studio-secret.js";
import { groupAlive } from "../src/workspace/processes.js";
import { baseEnv, PROJECT_ROOT } from "./helpers/cli.js";
import { startOpenAIServer, type ChatRequest, type OpenAIServer, type ScriptStep } from "./helpers/openai-server.js";
import { makeTempDir, waitFor } from "./helpers/tmp.js";

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

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

/** Live processes (zombies aside) working in `dir` or naming it on their command line. */
function processesIn(dir: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      if (stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z")) continue;
      const cwd = readlinkSync(`/proc/${entry}/cwd`);
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8");
      if (cwd === dir || cwd.startsWith(`${dir}/`) || cmdline.includes(dir)) found.push(Number(entry));
    } catch {
      // Gone meanwhile, or not ours to read.
    }
  }
  return found;
}

async function accepts(url: string): Promise<boolean> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(2_000) });
    return res.ok;
  } catch {
    return false;
  }
}

let model: OpenAIServer;
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
  workspace = makeTempDir("mini-cursor-studio-ws-");
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
  // Nothing may leave the machine: no LangSmith tracing of test runs.
  for (const key of Object.keys(env)) if (key.startsWith("LANGSMITH_") || key.startsWith("LANGCHAIN_")) delete env[key];

  const started = Date.now();
  studio = spawn("npm", ["run", "studio", "--", "--port", String(port), "--no-reload"], {
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
      command: { resume: { decision: "approve", secret: approvalCode() } },
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

/** The approval code the server printed to its terminal (studio-secret.ts). */
function approvalCode(): string {
  const code = /Studio approval code: (\S+)/.exec(output)?.[1];
  if (!code) throw new Error(`the server printed no approval code:\n${output}`);
  return code;
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
    expect(textOf(result.content)).toContain("the approval did not carry the Studio approval code");
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
    const nodes = updates.flatMap((u) => Object.keys(u)).filter((n) => n !== "approve" && n !== "compact");
    expect(nodes).toEqual(["agent", "tools", "agent", "tools", "agent"]);
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
  RUN_DEADLINE_MS,
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
