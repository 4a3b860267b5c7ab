import { existsSync, mkdirSync, readdirSync, watch, writeFileSync, type FSWatcher } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, expect, test } from "@jest/globals";
import { baseEnv, jsonEvents, runCli } from "../helpers/cli.js";
import { startOpenAIServer, type ChatRequest, type OpenAIServer } from "../helpers/openai-server.js";
import { makeTempDir, waitFor } from "../helpers/tmp.js";

/**
 * The first step's rehearsal (agent/rehearsal.ts), started by app/warm-up.ts while the first
 * request waits for the model, through the CLI: it must leave the workspace, the stored thread and
 * the model's requests exactly as the run makes them, and a rehearsal that fails changes nothing.
 */

const REHEARSAL_PREFIX = "mini-cursor-rehearsal-";
const PACKAGE_JSON = '{ "name": "rehearsed" }\n';

let tmp: ReturnType<typeof makeTempDir>;
let workspace: string;
let tempRoot: string;
let server: OpenAIServer | undefined;
let watcher: FSWatcher | undefined;

beforeEach(() => {
  tmp = makeTempDir();
  workspace = path.join(tmp.dir, "ws");
  tempRoot = path.join(tmp.dir, "tmp");
  mkdirSync(workspace);
  mkdirSync(tempRoot);
  writeFileSync(path.join(workspace, "package.json"), PACKAGE_JSON);
});
afterEach(async () => {
  watcher?.close();
  watcher = undefined;
  await server?.close();
  server = undefined;
  tmp.cleanup();
});

/** Role and what was said, per message of a request: what the model saw of the thread. */
function conversation(request: ChatRequest): string[] {
  return request.messages
    .filter((m) => m.role !== "system" && m.role !== "developer")
    .map((m) =>
      m.tool_calls
        ? `${m.role}: ${m.tool_calls.map((c) => `${c.function.name} ${c.function.arguments}`).join(", ")}`
        : `${m.role}: ${typeof m.content === "string" ? m.content : JSON.stringify(m.content)}`,
    );
}

/** A first run that reads package.json and answers, then a second turn of the same thread. */
async function runTwoTurns(env: NodeJS.ProcessEnv, beforeRunAnswers: (run: number) => Promise<void>) {
  server = await startOpenAIServer(async (_request, index) => {
    if (index === 0) {
      await beforeRunAnswers(1);
      return { content: "", toolCalls: [{ name: "read_file", args: { filePath: "package.json" } }] };
    }
    if (index === 2) await beforeRunAnswers(2);
    return { content: index === 1 ? "Read it." : "Again." };
  });
  const args = ["--workspace", workspace, "--json", "--approval", "full-auto", "--thread", "t1"];
  const runEnv = baseEnv({
    OPENAI_BASE_URL: server.url,
    OPENAI_API_KEY: "sk-test",
    MINI_CURSOR_STATE_HOME: path.join(tmp.dir, "state"),
    ...env,
  });
  const first = await runCli([...args, "go"], { env: runEnv, cwd: workspace });
  const afterFirst = {
    workspace: readdirSync(workspace, { recursive: true }).sort(),
    requests: server.requests.length,
  };
  const second = await runCli([...args, "again"], { env: runEnv, cwd: workspace });
  return { first, second, afterFirst };
}

/** What the first run told (--json), without ids, times and sizes. */
function outcome(stdout: string): string[] {
  return jsonEvents(stdout).map((e) =>
    e.type === "final" ? `final: ${String(e.text)}` : e.type === "run_end" ? `run_end: ${String(e.reason)}` : e.type,
  );
}

const FIRST_RUN = [
  "run_start",
  "step",
  "usage",
  "tool_call",
  "tool_result",
  "step",
  "token",
  "token",
  "usage",
  "final: Read it.",
  "run_end: done",
];

const STORED_THREAD = [
  "user: go",
  'assistant: read_file {"filePath":"package.json"}',
  "tool: " + "     1\t" + PACKAGE_JSON.trimEnd() + "\n\n[Lines 1-1 of 1, end of file.]",
  "assistant: Read it.",
  "user: again",
];

test("the rehearsal runs while the first request waits, and leaves the workspace, the thread and the requests as the run makes them", async () => {
  const seen = new Set<string>();
  watcher = watch(tempRoot, (_event, name) => {
    if (name?.startsWith(REHEARSAL_PREFIX)) seen.add(name);
  });
  const rehearsed = (runs: number) =>
    seen.size >= runs && [...seen].every((name) => !existsSync(path.join(tempRoot, name)));
  // Each run's first answer waits until its rehearsal folder came and went: the rehearsal ran in
  // full before the real step (a response stops it, app/warm-up.ts).
  const { first, second, afterFirst } = await runTwoTurns({ TMPDIR: tempRoot }, async (run) => {
    await waitFor(() => rehearsed(run), 60_000);
  });
  expect(first.stderr).toBe("");
  expect(first.code).toBe(0);
  expect(second.code).toBe(0);
  // One rehearsal per process, and each of the two runs is one.
  expect(seen.size).toBe(2);
  expect(readdirSync(tempRoot).filter((n) => n.startsWith(REHEARSAL_PREFIX))).toEqual([]);
  // Nothing of the rehearsal in the workspace, and no request of its own.
  expect(afterFirst).toEqual({ workspace: ["package.json"], requests: 2 });
  // The stored thread, as the second turn sends it: exactly the first turn's messages and the new one.
  expect(server!.requests).toHaveLength(3);
  expect(conversation(server!.requests[2]!)).toEqual(STORED_THREAD);
  expect(outcome(first.stdout)).toEqual(FIRST_RUN);
});

test("a rehearsal that fails (no temporary folder to make) changes nothing of the run", async () => {
  // TMPDIR names a folder that does not exist: the rehearsal's mkdtemp fails at once.
  const { first, second, afterFirst } = await runTwoTurns({ TMPDIR: path.join(tmp.dir, "missing") }, async () => {});
  expect(first.stderr).toBe("");
  expect(first.code).toBe(0);
  expect(second.code).toBe(0);
  expect(afterFirst).toEqual({ workspace: ["package.json"], requests: 2 });
  expect(conversation(server!.requests[2]!)).toEqual(STORED_THREAD);
  expect(outcome(first.stdout)).toEqual(FIRST_RUN);
});
