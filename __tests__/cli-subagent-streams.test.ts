import { existsSync } from "node:fs";
import path from "node:path";
import { jest } from "@jest/globals";
import { MAX_PARALLEL_SUBAGENTS, QUEUED_NOTICE } from "../src/agent/subagents.js";
import { baseEnv, runCli } from "./helpers/cli.js";
import {
  conversationOf,
  routedScript,
  startOpenAIServer,
  type ChatRequest,
  type OpenAIServer,
  type ScriptStep,
} from "./helpers/openai-server.js";
import { makeTempDir, waitFor } from "./helpers/tmp.js";

/**
 * Sub-agents through the real CLI, in both engines (issues 43 item 6 and 42 kinds 6 and 9):
 * every streamed event of a sub-agent carries its label, tokens included; two sub-agents whose
 * calls share an id (servers that number a response's calls) each get their own question; and
 * twelve task calls at once run at most MAX_PARALLEL_SUBAGENTS at a time, all twelve reported in
 * the model's order.
 */

jest.setTimeout(300_000);
const CLI_DEADLINE_MS = 150_000;

let tmp: ReturnType<typeof makeTempDir>;
let server: OpenAIServer | undefined;
beforeEach(() => (tmp = makeTempDir()));
afterEach(async () => {
  await server?.close();
  server = undefined;
  tmp.cleanup();
});

type Json = { type: string; subagent?: string } & Record<string, unknown>;

const task = (prompt: string, description: string, subagent_type = "general") => ({
  name: "task",
  args: { description, prompt, subagent_type },
});

async function cli(args: string[]) {
  const r = await runCli(["--workspace", tmp.dir, "--sandbox", "off", ...args], {
    env: baseEnv({ OPENAI_BASE_URL: server!.url, OPENAI_API_KEY: "sk-test" }),
    timeoutMs: CLI_DEADLINE_MS,
  });
  const events = r.stdout
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as Json);
  return { ...r, events };
}

const taskIds = (events: Json[]) =>
  (events.filter((e) => e.type === "tool_call" && e.name === "task") as Array<Json & { id: string }>).map((e) => e.id);

describe.each(["graph", "loop"])("%s engine", (engine) => {
  test("--json: every event of a sub-agent, its streamed tokens included, carries its task call's id", async () => {
    server = await startOpenAIServer(
      routedScript({
        "look around": [
          { content: "Delegating.", toolCalls: [task("Look at the files.", "Look", "explore")] },
          { content: "Parent done." },
        ],
        "Look at the files.": [{ content: "Nothing much here." }],
      }),
    );
    const r = await cli(["--engine", engine, "--json", "look around"]);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
    const [id] = taskIds(r.events);
    const shown = r.events
      .filter((e) => !["run_start", "usage", "run_end", "tool_result"].includes(e.type))
      .map((e) => [
        e.type,
        e.type === "token" || e.type === "final" ? e.text : e.type === "step" ? e.step : "",
        e.subagent,
      ]);
    expect(shown).toEqual([
      ["step", 1, undefined],
      ["token", "Delegating.", undefined],
      ["tool_call", "", undefined],
      ["step", 1, id],
      ["token", "Nothing", id],
      ["token", " much", id],
      ["token", " here.", id],
      ["final", "Nothing much here.", id],
      ["step", 2, undefined],
      ["token", "Parent", undefined],
      ["token", " done.", undefined],
      ["final", "Parent done.", undefined],
    ]);

    // The trace shows the sub-agent's report under its label, never its text as the parent's.
    await server.close();
    server = await startOpenAIServer(
      routedScript({
        "look around": [
          { content: "Delegating.", toolCalls: [task("Look at the files.", "Look", "explore")] },
          { content: "Parent done." },
        ],
        "Look at the files.": [{ content: "Nothing much here." }],
      }),
    );
    const human = await cli(["--engine", engine, "look around"]);
    expect({ code: human.code, stderr: human.stderr }).toEqual({ code: 0, stderr: "" });
    const lines = human.stdout.split("\n");
    const from = lines.findIndex((l) => l.includes("Nothing much"));
    expect(lines.slice(from, from + 3).map((l) => l.replace(/\d+ ms$/, "N ms"))).toEqual([
      "  ⎿ [explore: Look] report: Nothing much here.",
      "  ✓ task 1 lines, 18 B, N ms",
      "    Nothing much here.",
    ]);
    expect(lines.filter((l) => l.includes("Nothing much"))).toHaveLength(2);
  });

  test("two sub-agents' calls with the same id (call_0 each): each question names its own sub-agent", async () => {
    const both = new Set<string>();
    const held = (key: string, step: ScriptStep) => async () => {
      both.add(key);
      await waitFor(() => both.size === 2, 90_000, 20).catch(() => undefined);
      return step;
    };
    server = await startOpenAIServer(
      routedScript({
        "write both": [
          { toolCalls: [task("Write alpha.txt.", "Alpha"), task("Write beta.txt.", "Beta")] },
          { content: "Neither was allowed." },
        ],
        "Write alpha.txt.": [
          held("a", {
            toolCalls: [{ id: "call_0", name: "write_file", args: { filePath: "alpha.txt", content: "a" } }],
          }),
          { content: "Not allowed." },
        ],
        "Write beta.txt.": [
          held("b", {
            toolCalls: [{ id: "call_0", name: "write_file", args: { filePath: "beta.txt", content: "b" } }],
          }),
          { content: "Not allowed." },
        ],
      }),
    );
    const r = await cli(["--engine", engine, "--approval", "suggest", "--json", "write both"]);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
    const [alpha, beta] = taskIds(r.events);
    const approvals = r.events.filter((e) => e.type === "approval") as Array<
      Json & { request: { toolCallId: string; args: { filePath: string }; askedBy?: string; subagent?: unknown } }
    >;
    expect(
      approvals
        .map((a) => [a.request.toolCallId, a.request.args.filePath, a.request.askedBy, a.subagent, a.request.subagent])
        .sort(),
    ).toEqual([
      ["call_0", "alpha.txt", "general: Alpha", alpha, { callId: alpha, type: "general", description: "Alpha" }],
      ["call_0", "beta.txt", "general: Beta", beta, { callId: beta, type: "general", description: "Beta" }],
    ]);
    // Each result went back to its own sub-agent.
    const results = r.events.filter((e) => e.type === "tool_result" && e.name === "write_file");
    expect(results.map((e) => e.subagent).sort()).toEqual([alpha, beta].sort());
  });

  test(`twelve task calls at once: at most ${MAX_PARALLEL_SUBAGENTS} run at a time, the rest are queued, all twelve report in the model's order`, async () => {
    const COUNT = 12;
    const briefs = Array.from({ length: COUNT }, (_, i) => `Sub-task number ${i + 1}.`);
    let inFlight = 0;
    let arrived = 0;
    let most = 0;
    // A sub-agent's one request is held until as many are in flight as may be (or the rest have
    // all arrived): without the cap all twelve would be in flight at once.
    const hold = async (request: ChatRequest): Promise<ScriptStep> => {
      inFlight++;
      arrived++;
      most = Math.max(most, inFlight);
      await waitFor(() => inFlight >= MAX_PARALLEL_SUBAGENTS || arrived === COUNT, 90_000, 20).catch(() => undefined);
      inFlight--;
      return { content: `Report of ${conversationOf(request)}` };
    };
    server = await startOpenAIServer((request) => {
      const key = conversationOf(request);
      if (key !== "fan out") return hold(request);
      const answered = request.messages.some((m) => m.role === "tool");
      return answered
        ? { content: "All reported." }
        : { toolCalls: briefs.map((b, i) => task(b, `Part ${i + 1}`, "explore")) };
    });
    const r = await cli(["--engine", engine, "--json", "fan out"]);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
    expect(most).toBe(MAX_PARALLEL_SUBAGENTS);
    expect(arrived).toBe(COUNT);
    const ids = taskIds(r.events);
    const queued = r.events.filter((e) => e.type === "notice" && e.message === QUEUED_NOTICE);
    expect(queued).toHaveLength(COUNT - MAX_PARALLEL_SUBAGENTS);
    expect(queued.every((e) => e.subagent !== undefined && ids.includes(e.subagent))).toBe(true);
    const last = server.requests.filter((q) => conversationOf(q) === "fan out").at(-1)!;
    const results = last.messages.filter((m) => m.role === "tool");
    expect(results.map((m) => [m.tool_call_id, m.content])).toEqual(briefs.map((b, i) => [ids[i], `Report of ${b}`]));
    expect(r.events.at(-1)).toMatchObject({ type: "run_end", reason: "done" });
  });
});

describe.each(["graph", "loop"])("%s engine: undo after parallel sub-agents", (engine) => {
  /**
   * Beta writes x.txt first; alpha (first in the model's order) writes y.txt only after that. The
   * request's snapshot entry merges the sub-agents' in the model's order: its `before` is the
   * earliest step's (mergeSnapshots goes by start time), and after the sub-agents it ends at the
   * files as they left them (the graph's step_done, the loop's latestWorkspaceSnapshot). Before
   * both, undo kept x.txt (graph) or y.txt (loop) and said nothing.
   */
  test("--undo takes back both sub-agents' files, whichever wrote first", async () => {
    let betaWrote = false;
    server = await startOpenAIServer(
      routedScript({
        "write two": [
          { toolCalls: [task("Write y.txt.", "Alpha"), task("Write x.txt.", "Beta")] },
          { content: "Both written." },
        ],
        "Write y.txt.": [
          async () => {
            await waitFor(() => betaWrote, 90_000, 20).catch(() => undefined);
            return { toolCalls: [{ name: "write_file", args: { filePath: "y.txt", content: "y\n" } }] };
          },
          { content: "Wrote y." },
        ],
        "Write x.txt.": [
          { toolCalls: [{ name: "write_file", args: { filePath: "x.txt", content: "x\n" } }] },
          () => {
            betaWrote = true;
            return { content: "Wrote x." };
          },
        ],
      }),
    );
    const made = await cli(["--engine", engine, "--approval", "full-auto", "--thread", "two", "--json", "write two"]);
    expect({ code: made.code, stderr: made.stderr }).toEqual({ code: 0, stderr: "" });
    expect(existsSync(path.join(tmp.dir, "x.txt")) && existsSync(path.join(tmp.dir, "y.txt"))).toBe(true);
    const undone = await cli(["--engine", engine, "--thread", "two", "--undo"]);
    expect(undone.code).toBe(0);
    const left = ["x.txt", "y.txt"].filter((f) => existsSync(path.join(tmp.dir, f)));
    expect({ left, said: undone.stdout }).toEqual({ left: [], said: expect.any(String) });
  });
});
