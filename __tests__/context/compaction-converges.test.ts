import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { baseEnv, runCli } from "../helpers/cli.js";
import { startOpenAIServer, type ChatRequest, type OpenAIServer, type ScriptStep } from "../helpers/openai-server.js";
import { makeTempDir } from "../helpers/tmp.js";
import { SUMMARY_PROMPT } from "../../src/context/compaction.js";

/**
 * Issue 30, item 4: with a small window over many steps, compaction converges. The scripted
 * provider counts tokens as a provider does (the whole request, tool schemas included), so the
 * test sees what was really sent after each compaction.
 */

const BUDGET = 16_000;
const STEPS = 80;
const SUMMARY = `Requests: read every file f0..f199 in turn. Done: ${"read a file and noted its size; ".repeat(30)}Open: go on.`;

let tmp: ReturnType<typeof makeTempDir>;
let workspace: string;
let server: OpenAIServer | undefined;
beforeEach(() => {
  tmp = makeTempDir();
  workspace = path.join(tmp.dir, "ws");
  mkdirSync(workspace);
  for (let i = 0; i < STEPS; i++)
    writeFileSync(path.join(workspace, `f${i}.txt`), `${`line of file ${i}\n`.repeat(30)}`);
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  tmp.cleanup();
});

/** What the scripted provider says it counted: the request's JSON, messages and tool schemas, at 4 characters a token. */
const providerCount = (request: ChatRequest) =>
  Math.ceil((JSON.stringify(request.messages).length + JSON.stringify(request.tools ?? []).length) / 4);
const isSummary = (request: ChatRequest) => request.messages[0]?.content === SUMMARY_PROMPT;

function script(request: ChatRequest): ScriptStep {
  const usage = { prompt_tokens: providerCount(request), completion_tokens: 20 };
  if (isSummary(request)) return { content: SUMMARY, usage };
  const last = [...request.messages]
    .reverse()
    .find((m) => m.role === "assistant" && /^read file \d+$/.test(String(m.content)));
  const step = last ? Number(String(last.content).slice("read file ".length)) + 1 : 0;
  return step < STEPS
    ? { content: `read file ${step}`, toolCalls: [{ name: "read_file", args: { filePath: `f${step}.txt` } }], usage }
    : { content: "All read.", usage };
}

/** The CLI on `task` with a `budget`-token window, against the scripted server, snapshots off. */
function runWindowed(engine: string, task: string, budget = BUDGET, timeoutMs = 240_000) {
  return runCli(
    ["--workspace", workspace, "--engine", engine, "--approval", "full-auto", "--json", "--max-steps", "200", task],
    {
      env: baseEnv({
        OPENAI_BASE_URL: server!.url,
        OPENAI_API_KEY: "test",
        MINI_CURSOR_CONTEXT_TOKENS: String(budget),
        MINI_CURSOR_SNAPSHOTS: "off",
      }),
      timeoutMs,
    },
  );
}

const eventsOf = (stdout: string) =>
  stdout
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as Record<string, unknown>);

/**
 * `count` files big<i>.txt of `lines` lines of 100 characters, read one per step by the scripted
 * model; the run, its events, the requests, where summaries were asked for and the compactions.
 */
async function readBigFiles(engine: string, count: number, lines: number) {
  for (let i = 0; i < count; i++)
    writeFileSync(path.join(workspace, `big${i}.txt`), `${`big file ${i} `.padEnd(99, "x")}\n`.repeat(lines));
  let step = -1;
  server = await startOpenAIServer((request: ChatRequest): ScriptStep => {
    const usage = { prompt_tokens: providerCount(request), completion_tokens: 20 };
    if (isSummary(request)) return { content: SUMMARY, usage };
    step++;
    return step < count
      ? { content: `read big ${step}`, toolCalls: [{ name: "read_file", args: { filePath: `big${step}.txt` } }], usage }
      : { content: "All read.", usage };
  });
  const r = await runWindowed(engine, "read the big files");
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  const events = eventsOf(r.stdout);
  const requests = server.requests;
  const summaryAt = requests.flatMap((req, i) => (isSummary(req) ? [i] : []));
  const compactions = events.filter((e) => e.type === "compaction") as Array<{
    tokensBefore: number;
    tokensAfter: number;
  }>;
  return { events, requests, summaryAt, compactions };
}

describe.each(["graph", "loop"])("--engine %s with a 16k window", (engine) => {
  test("compacts at most once every 20 steps, each time to under half the budget, and reports the true sizes", async () => {
    server = await startOpenAIServer(script);
    const r = await runWindowed(engine, "read every file");
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const events = eventsOf(r.stdout);
    expect(events.filter((e) => e.type === "notice")).toEqual([]);
    const requests = server.requests;
    const summaryAt = requests.flatMap((req, i) => (isSummary(req) ? [i] : []));
    const compactions = events.filter((e) => e.type === "compaction");
    expect(compactions).toHaveLength(summaryAt.length);
    expect(summaryAt.length).toBeGreaterThanOrEqual(2);
    // At most once every 20 steps: at least 20 model turns between two summary requests.
    for (let k = 1; k < summaryAt.length; k++) expect(summaryAt[k]! - summaryAt[k - 1]! - 1).toBeGreaterThanOrEqual(20);
    expect(events.filter((e) => e.type === "step")).toHaveLength(STEPS + 1);
    summaryAt.forEach((at, k) => {
      const c = compactions[k] as { tokensBefore: number; tokensAfter: number };
      const counted = { before: providerCount(requests[at - 1]!), after: providerCount(requests[at + 1]!) };
      // Triggered past 80% of the budget, by what the provider counted (the request before it and its answer).
      expect(counted.before).toBeLessThanOrEqual(c.tokensBefore);
      expect(c.tokensBefore).toBeGreaterThan(BUDGET * 0.8);
      // The next request really is under half the budget, and the trace said so within 10%.
      expect(counted.after).toBeLessThan(BUDGET * 0.5);
      expect(c.tokensAfter).toBeLessThan(BUDGET * 0.5);
      expect(Math.abs(c.tokensAfter - counted.after)).toBeLessThanOrEqual(counted.after * 0.1);
    });
  }, 300_000);

  test("big results the model has read, which requests no longer carry, do not count: no summary at every step", async () => {
    // Each result is over OFFLOAD_RESULT_CHARS, so once read it is sent as its start and a pointer
    // (in a 16k window even at first sight: a step then adds little, and a summary comes ~25 steps in).
    const steps = 30;
    const { summaryAt, compactions } = await readBigFiles(engine, steps, 220);
    expect(summaryAt.length).toBeGreaterThanOrEqual(1);
    // Measured with the full results, every step went over 80% and was summarised.
    expect(summaryAt.length).toBeLessThanOrEqual(steps / 2);
    for (let k = 1; k < summaryAt.length; k++) expect(summaryAt[k]! - summaryAt[k - 1]! - 1).toBeGreaterThanOrEqual(2);
    // The trace's "before" is the request as it would have been sent: under the budget.
    expect(compactions).toHaveLength(summaryAt.length);
    for (const c of compactions) expect(c.tokensBefore).toBeLessThan(BUDGET);
  }, 300_000);

  test("40 KB results, each alone about the whole window: sent as their start and a pointer at first sight, compaction converges", async () => {
    // Each result alone (~10k tokens) with the fixed part (~5.4k) passed the budget, and a summary
    // ran at every step (29 in 30). Now a result over the first-sight limit (three quarters of what
    // half the budget leaves after the fixed part and the summary's allowance, ~4.4k characters
    // here) is sent as its start and a pointer from the first request that carries it, and as a
    // shorter start once read; a step then adds ~1.3k characters, so at most one summary in 20 steps.
    const steps = 60;
    const { events, requests, summaryAt, compactions } = await readBigFiles(engine, steps, 400);
    expect(events.filter((e) => e.type === "notice")).toEqual([]);
    expect(events.filter((e) => e.type === "step")).toHaveLength(steps + 1);
    expect(compactions).toHaveLength(summaryAt.length);
    expect(summaryAt.length).toBeGreaterThanOrEqual(1);
    expect(summaryAt.length).toBeLessThanOrEqual(steps / 20);
    for (let k = 1; k < summaryAt.length; k++) expect(summaryAt[k]! - summaryAt[k - 1]! - 1).toBeGreaterThanOrEqual(20);
    summaryAt.forEach((at, k) => {
      const c = compactions[k]!;
      expect(c.tokensBefore).toBeGreaterThan(BUDGET * 0.8);
      expect(c.tokensBefore).toBeLessThan(BUDGET);
      const after = providerCount(requests[at + 1]!);
      expect(after).toBeLessThan(BUDGET * 0.5);
      expect(c.tokensAfter).toBeLessThan(BUDGET * 0.5);
      expect(Math.abs(c.tokensAfter - after)).toBeLessThanOrEqual(after * 0.1);
    });
    // No request passes the budget.
    for (const req of requests) expect(providerCount(req)).toBeLessThan(BUDGET);

    // What the model gets of the first result, first sight and once read: the saved file has all of it.
    const resultIn = (req: ChatRequest) => String(req.messages.find((m) => m.role === "tool")!.content);
    const first = resultIn(requests[1]!);
    const saved = /The full text is in (\S+\.txt);/.exec(first)![1]!;
    const whole = readFileSync(saved, "utf8");
    expect(whole).toBe(
      `${readFileSync(path.join(workspace, "big0.txt"), "utf8")
        .split("\n")
        .slice(0, 400)
        .map((line, i) => `${String(i + 1).padStart(6)}\t${line}`)
        .join("\n")}\n\n[Lines 1-400 of 400, end of file.]`,
    );
    const head = (n: number) => whole.slice(0, n);
    const chars = whole.length.toLocaleString("en-US");
    // The first-sight limit follows the fixed part (the tools' schemas): ~4k characters here, of
    // which 500 are kept for the note; once read, a tenth of it stays (as 2,000 of 20,000 by default).
    const shown = Number(/^\[\.\.\. this is the start \(([\d,]+) characters\)/m.exec(first)![1]!.replace(/,/g, ""));
    expect(shown).toBeGreaterThan(3_000);
    expect(shown).toBeLessThan(4_000);
    const limit = shown + 500;
    const pageLines = Math.floor((whole.split("\n").length * limit) / (2 * whole.length));
    expect(first).toBe(
      `${head(shown)}\n[... this is the start (${shown.toLocaleString("en-US")} characters) of a result of ${chars} characters, more than the context window holds at once. The full text is in ${saved}; read it page by page with read_file (offset and limit, about ${pageLines} lines at a time) if you need the rest.]`,
    );
    expect(resultIn(requests[2]!)).toBe(
      `${head(Math.floor(limit / 10))}\n[... this result (${chars} characters) was moved out of the conversation to save context. The full text is in ${saved}; read it page by page with read_file (offset and limit, about ${pageLines} lines at a time) if you need it again.]`,
    );
  }, 300_000);

  test("says once, at the start, when the system prompt and tools alone exceed the budget", async () => {
    // The window is too small for the tool results to be sent back, so the script goes by request number.
    server = await startOpenAIServer((_request, index) =>
      index < 2 ? { toolCalls: [{ name: "read_file", args: { filePath: `f${index}.txt` } }] } : { content: "Done." },
    );
    const r = await runWindowed(engine, "read two files", 2000, 60_000);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const notices = r.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { type: string; step?: number; message?: string })
      .filter((e) => e.type === "notice");
    expect(notices).toHaveLength(1);
    expect(notices[0]!.step).toBe(1);
    expect(notices[0]!.message).toMatch(
      /^The system prompt and the schemas of \d+ tools alone come to about \d+ tokens, \d+% of the context budget of 2000 tokens \(MINI_CURSOR_CONTEXT_TOKENS\), more than all of it: the conversation gets little room and compaction cannot bring a request under half the budget\. Set MINI_CURSOR_CONTEXT_TOKENS to the model's real context window, or connect fewer MCP servers\.$/,
    );
    expect(server.requests.some(isSummary)).toBe(false);
  }, 120_000);
});
