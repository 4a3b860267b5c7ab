import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "@jest/globals";
import { baseEnv, runCli } from "../helpers/cli.js";
import { startLangSmithServer, type LangSmithServer, type TracedRun } from "../helpers/langsmith-server.js";
import { closedPortUrl, startOpenAIServer, type OpenAIServer } from "../helpers/openai-server.js";
import { makeTempDir } from "../helpers/tmp.js";

/**
 * LangSmith tracing end to end: the CLI with LANGSMITH_TRACING=true against a local
 * LangSmith-compatible endpoint and the scripted OpenAI-compatible server. Each turn must arrive
 * as one trace (a root run with the model and tool runs nested), tagged with engine, thread and
 * workspace, and no secret — a token the model reads from .env, the OpenAI key, the LangSmith
 * key — may appear in anything posted.
 */

const PLANTED = "ghp_plantedTokenValue0123456789";
const OPENAI_KEY = "sk-test-openai-key-7f3a9c2e";
const LANGSMITH_KEY = "lsv2_pt_test_langsmith_key_5d8e1b";
const PROJECT = "mini-cursor-tests";

let tmp: ReturnType<typeof makeTempDir>;
let workspace: string;
let openai: OpenAIServer | undefined;
let langsmith: LangSmithServer;

beforeEach(async () => {
  tmp = makeTempDir();
  workspace = path.join(tmp.dir, "traced-ws");
  mkdirSync(workspace);
  writeFileSync(path.join(workspace, ".env"), `GITHUB_TOKEN=${PLANTED}\n`);
  langsmith = await startLangSmithServer();
});
afterEach(async () => {
  await openai?.close();
  openai = undefined;
  await langsmith.close();
  tmp.cleanup();
});

function tracedEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return baseEnv({
    OPENAI_BASE_URL: openai!.url,
    OPENAI_API_KEY: OPENAI_KEY,
    MINI_CURSOR_MAX_RETRIES: "0",
    LANGSMITH_TRACING: "true",
    LANGSMITH_API_KEY: LANGSMITH_KEY,
    LANGSMITH_ENDPOINT: langsmith.url,
    LANGSMITH_PROJECT: PROJECT,
    ...extra,
  });
}

/** The runs below `root`, at any depth. */
function descendants(runs: TracedRun[], root: TracedRun): TracedRun[] {
  const below = new Set([root.id]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const r of runs) {
      if (r.parent_run_id && below.has(r.parent_run_id) && !below.has(r.id)) {
        below.add(r.id);
        grew = true;
      }
    }
  }
  return runs.filter((r) => r.id !== root.id && below.has(r.id));
}

describe.each(["graph", "loop"])("--engine %s", (engine) => {
  test("each turn posts one trace with nested model and tool runs, tagged, and no secret anywhere", async () => {
    openai = await startOpenAIServer([
      { toolCalls: [{ name: "read_file", args: { filePath: ".env" } }] },
      { content: "It sets GITHUB_TOKEN." },
      // The user hands the model the secret itself: the tool's input holds it, the trace must not.
      { toolCalls: [{ name: "write_file", args: { filePath: "token.txt", content: PLANTED } }] },
      { content: "Saved." },
    ]);
    const args = ["--workspace", workspace, "--engine", engine, "--approval", "full-auto", "--thread", "trace-thread"];
    const first = await runCli([...args, "what does .env set?"], { env: tracedEnv() });
    expect(first.stderr).toBe("");
    expect(first.code).toBe(0);
    const second = await runCli([...args, `keep ${PLANTED} in token.txt`], { env: tracedEnv() });
    expect(second.code).toBe(0);

    const runs = langsmith.runs();
    const roots = runs.filter((r) => !r.parent_run_id);
    expect(roots.map((r) => r.name)).toEqual(["mini-cursor turn", "mini-cursor turn"]);
    for (const root of roots) {
      expect(root.run_type).toBe("chain");
      expect(root.session_name).toBe(PROJECT);
      expect(root.tags).toEqual(expect.arrayContaining(["mini-cursor", `engine:${engine}`, "thread:trace-thread"]));
      expect(root.extra?.metadata).toEqual(
        expect.objectContaining({ engine, thread_id: "trace-thread", workspace: "traced-ws" }),
      );
      expect(root.end_time).toBeDefined();
      // LangChain's own two words about the runtime; the host's name, platform and versions stay home.
      expect((root.extra as { runtime?: unknown }).runtime).toEqual({ library: "langchain-js", runtime: "node" });
      // Nested runs inherit the tags and metadata, and belong to the root's trace.
      for (const r of descendants(runs, root)) {
        expect(r.trace_id).toBe(root.id);
        expect(r.extra?.metadata).toEqual(expect.objectContaining({ thread_id: "trace-thread", engine }));
        expect(r.end_time).toBeDefined();
      }
    }
    const [turn1, turn2] = roots as [TracedRun, TracedRun];
    const kinds = (root: TracedRun) =>
      descendants(runs, root)
        .filter((r) => r.run_type === "llm" || r.run_type === "tool")
        .map((r) => `${r.run_type}:${r.run_type === "tool" ? r.name : "model"}`);
    expect(kinds(turn1)).toEqual(["llm:model", "tool:read_file", "llm:model"]);
    expect(kinds(turn2)).toEqual(["llm:model", "tool:write_file", "llm:model"]);
    expect(readFileSync(path.join(workspace, "token.txt"), "utf8")).toBe(PLANTED);
    // Every run posted belongs to one of the two traces.
    expect(runs).toHaveLength(2 + descendants(runs, turn1).length + descendants(runs, turn2).length);
    expect(turn1.outputs).toEqual(expect.objectContaining({ reason: "done", finalText: "It sets GITHUB_TOKEN." }));

    const readRun = descendants(runs, turn1).find((r) => r.run_type === "tool")!;
    expect(JSON.stringify(readRun.outputs)).toContain("GITHUB_TOKEN=[redacted]");
    const writeRun = descendants(runs, turn2).find((r) => r.run_type === "tool")!;
    expect(JSON.stringify(writeRun.inputs)).toContain("[redacted]");
    // The key went where it belongs (the header), and no payload holds a secret.
    expect(
      langsmith.requests.filter((r) => r.method !== "GET").every((r) => r.headers["x-api-key"] === LANGSMITH_KEY),
    ).toBe(true);
    const sent = langsmith.requests.map((r) => r.body).join("\n");
    expect(sent.length).toBeGreaterThan(0);
    for (const secret of [PLANTED, OPENAI_KEY, LANGSMITH_KEY]) expect(sent).not.toContain(secret);
    expect(sent).not.toContain(`"${process.version}"`);
    if (os.hostname().length >= 6) expect(sent).not.toContain(os.hostname());
    // The model saw the redacted file, as the trace says.
    expect(JSON.stringify(openai!.requests[1])).not.toContain(PLANTED);
  });
});

test("tracing is off by default: nothing is posted", async () => {
  openai = await startOpenAIServer([{ content: "Hi." }]);
  const env = tracedEnv();
  delete env.LANGSMITH_TRACING;
  const r = await runCli(["--workspace", workspace, "hello"], { env });
  expect(r.code).toBe(0);
  expect(langsmith.requests).toEqual([]);
});

test("LANGSMITH_TRACING without a key is refused with what to do", async () => {
  openai = await startOpenAIServer([{ content: "Hi." }]);
  const env = tracedEnv();
  delete env.LANGSMITH_API_KEY;
  const r = await runCli(["--workspace", workspace, "hello"], { env });
  expect(r.code).toBe(2);
  expect(r.stderr).toContain("LANGSMITH_TRACING is on but LANGSMITH_API_KEY is not set");
  expect(langsmith.requests).toEqual([]);
});

test("an unreachable LangSmith endpoint neither fails the run nor holds its exit for the SDK's retries", async () => {
  openai = await startOpenAIServer([{ content: "Hi." }]);
  const r = await runCli(["--workspace", workspace, "hello"], {
    env: tracedEnv({ LANGSMITH_ENDPOINT: (await closedPortUrl()).replace(/\/v1$/, "") }),
    // The SDK's own backoff held the exit for about 90 s; the CLI waits TRACE_FLUSH_TIMEOUT_MS.
    timeoutMs: 45_000,
  });
  expect(r.code).toBe(0);
  expect(r.stdout).toContain("Hi.");
});

describe("issue 31: LangSmith that rejects the key or cannot be reached gives one plain line", () => {
  /** The lines a person sees, stdout and stderr together, without the library's logs or stack traces. */
  function expectOneLine(r: { stdout: string; stderr: string }, why: RegExp): void {
    const all = `${r.stdout}\n${r.stderr}`;
    expect(all).not.toContain("[LANGSMITH]");
    expect(all).not.toMatch(/^\s+at .+:\d+:\d+\)?$/m);
    expect(all).not.toMatch(/Failed to|Error exporting|Context: trace=/);
    const lines = all.split("\n").filter((l) => l.includes("LangSmith"));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(why);
  }

  test("a rejected key: the run goes on, one line says tracing is off and why", async () => {
    openai = await startOpenAIServer([{ content: "Hi." }]);
    await langsmith.close();
    langsmith = await startLangSmithServer({ rejectKey: true });
    const r = await runCli(["--workspace", workspace, "hello"], {
      env: tracedEnv({ LANGSMITH_ENDPOINT: langsmith.url }),
    });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Hi.");
    expectOneLine(
      r,
      new RegExp(
        `^  ⚠ LangSmith tracing is off for the rest of this run: ${langsmith.url.replace(/[./]/g, "\\$&")} rejected LANGSMITH_API_KEY \\(HTTP 401\\); check the key`,
      ),
    );
    // Nothing was sent after the refusal.
    expect(langsmith.requests.length).toBeLessThanOrEqual(2);
  }, 120_000);

  test("an endpoint that cannot be reached: one line, and --json gets it as a notice event", async () => {
    openai = await startOpenAIServer([{ content: "Hi." }]);
    const endpoint = (await closedPortUrl()).replace(/\/v1$/, "");
    const r = await runCli(["--workspace", workspace, "--json", "hello"], {
      env: tracedEnv({ LANGSMITH_ENDPOINT: endpoint }),
      timeoutMs: 45_000,
    });
    expect(r.code).toBe(0);
    expectOneLine(
      r,
      /"type":"notice".*LangSmith tracing is off for the rest of this run: .* cannot be reached \(ECONNREFUSED\)/,
    );
  }, 120_000);
});
