import { createTools } from "../../src/tools/index.js";
import { readOnlyTools } from "../../src/policy/effects.js";
import { TASK_TOOL } from "../../src/tools/task.js";
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { jest } from "@jest/globals";
import path from "node:path";
import { HumanMessage } from "@langchain/core/messages";
import {
  PLAN_ACCEPTED_TASK,
  PLAN_MODE_NOTE,
  planAcceptedNote,
  requestTask,
  withRequestNote,
} from "../../src/policy/plan-mode.js";
import { formatTurns, listTurns } from "../../src/app/undo.js";
import { parsePlanAnswer } from "../../src/ui/plan-prompt.js";
import { createSession } from "../../src/app/session.js";
import { loadSettings } from "../../src/settings.js";
import { createJsonRenderer } from "../../src/ui/render.js";
import { runSlashCommand } from "../../src/app/slash-commands.js";
import { baseEnv, runCli } from "../helpers/cli.js";
import { engineHarness, eventsOf, type EngineKind } from "../helpers/engine-harness.js";
import { startOpenAIServer, type ChatRequest, type OpenAIServer, type ScriptStep } from "../helpers/openai-server.js";
import { makeTempDir } from "../helpers/tmp.js";

/**
 * Plan mode: only read-only tools run (every other call, commands included, is refused with a
 * result that says so), the model ends with a plan, and accepting it carries it out on the
 * same thread in the chosen mode. The terminal's accept question is in plan-mode-pty.test.ts.
 */

jest.setTimeout(90_000);

let tmp: ReturnType<typeof makeTempDir>;
let server: OpenAIServer | undefined;
beforeEach(() => {
  tmp = makeTempDir();
  writeFileSync(path.join(tmp.dir, "a.txt"), "original\n");
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  tmp.cleanup();
});

/** A plan-mode refusal as the model reads it, with the tools that run in plan mode. */
const refused = (tool: string, runs = readOnlyTools(createTools({ workspace: "" }))) =>
  `Refused: this ${tool} call was not run, because mini-cursor is in plan mode, where only ${runs.join(", ")} run and nothing is changed or executed until the user accepts a plan. ` +
  `Put what this ${tool} call would do into the plan (write_todos) instead. Do not try to get around the rule; do something else or ask the user.`;

const PLAN = [
  { content: "Change a.txt to say hello", status: "pending" },
  { content: "Check a.txt", status: "pending" },
];

test("answers to the plan question", () => {
  expect(parsePlanAnswer("a", "suggest")).toEqual({ action: "accept", mode: "suggest" });
  expect(parsePlanAnswer(" Y ", "auto-edit")).toEqual({ action: "accept", mode: "auto-edit" });
  expect(parsePlanAnswer("f", "suggest")).toEqual({ action: "accept", mode: "full-auto" });
  expect(parsePlanAnswer("auto-edit", "suggest")).toEqual({ action: "accept", mode: "auto-edit" });
  expect(parsePlanAnswer("s", "full-auto")).toEqual({ action: "accept", mode: "suggest" });
  expect(parsePlanAnswer("", "suggest")).toEqual({ action: "keep" });
  expect(parsePlanAnswer("also update b.txt", "suggest")).toEqual({ action: "refine", feedback: "also update b.txt" });
  // "plan" is no mode to carry a plan out in: it is feedback.
  expect(parsePlanAnswer("plan", "suggest")).toEqual({ action: "refine", feedback: "plan" });
});

test("/plan and /approval remember the mode plan mode was entered from; /plan accept and /plan off need plan mode", async () => {
  const notes: string[] = [];
  const renderer = { ...createJsonRenderer({ verbose: false }), note: (t: string) => void notes.push(t) };
  const settings = loadSettings(
    { workspace: tmp.dir, engine: "loop", approval: "full-auto", sandbox: "off" },
    { MINI_CURSOR_DOTENV: "off" },
  );
  const session = await createSession(settings, { renderer });
  try {
    expect(await runSlashCommand("/plan off", { session, renderer })).toBe("continue");
    expect(await runSlashCommand("/plan accept", { session, renderer })).toBe("continue");
    expect(session.approval).toBe("full-auto");
    expect(notes.splice(0)).toEqual([
      "Not in plan mode (approval mode full-auto): /plan [request] plans first.",
      "Not in plan mode (approval mode full-auto): /plan [request] plans first.",
    ]);
    expect(await runSlashCommand("/plan add a route", { session, renderer })).toEqual({ request: "add a route" });
    expect([session.approval, session.beforePlan]).toEqual(["plan", "full-auto"]);
    expect(await runSlashCommand("/plan accept plan", { session, renderer })).toBe("continue");
    expect(notes.at(-1)).toBe("Usage: /plan accept [suggest | auto-edit | full-auto]");
    expect(await runSlashCommand("/plan off", { session, renderer })).toBe("continue");
    expect([session.approval, session.beforePlan]).toEqual(["full-auto", undefined]);
    await runSlashCommand("/approval suggest", { session, renderer });
    await runSlashCommand("/approval plan", { session, renderer });
    expect([session.approval, session.beforePlan]).toEqual(["plan", "suggest"]);
    // No plan made yet: nothing is sent, and plan mode stays on.
    expect(await runSlashCommand("/plan accept", { session, renderer })).toBe("continue");
    expect([session.approval, notes.at(-1)]).toEqual([
      "plan",
      "There is no plan to accept yet: send a request in plan mode first (/plan <request>). Still in plan mode.",
    ]);
    // The offline model makes one.
    const plan = await session.runTurn("read a.txt", new AbortController().signal, async () => ({ decision: "deny" }));
    expect(plan.reason).toBe("done");
    expect(await runSlashCommand("/plan accept", { session, renderer })).toEqual({ request: PLAN_ACCEPTED_TASK });
    expect([session.approval, notes.at(-1)]).toEqual(["suggest", "Plan accepted: approval mode suggest."]);
  } finally {
    await session.close();
  }
});

describe.each<EngineKind>(["graph", "loop"])("engine %s in plan mode", (kind) => {
  test("reading tools and write_todos run; writes, edits, process control and every command (read-only ones too) are refused unasked", async () => {
    const h = engineHarness(
      kind,
      tmp.dir,
      [
        {
          toolCalls: [
            { name: "read_file", args: { filePath: "a.txt" } },
            { name: "list_directory", args: { directoryPath: "." } },
            { name: "write_file", args: { filePath: "a.txt", content: "changed\n" } },
            { name: "write_file", args: { filePath: "new.txt", content: "new\n" } },
            { name: "edit_file", args: { filePath: "a.txt", oldString: "original", newString: "edited" } },
            { name: "execute_command", args: { command: "cat a.txt" } },
            { name: "execute_command", args: { command: "touch made.txt" } },
            { name: "stop_process", args: { id: "bg-1" } },
          ],
        },
        { toolCalls: [{ name: "write_todos", args: { todos: PLAN } }] },
        "Plan: change a.txt, then check it.",
      ],
      { approval: "plan" },
    );
    const before = statSync(path.join(tmp.dir, "a.txt")).mtimeMs;
    const summary = await h.run("make a.txt say hello");
    expect(summary.reason).toBe("done");
    expect(h.approvals).toEqual([]);
    expect(readFileSync(path.join(tmp.dir, "a.txt"), "utf8")).toBe("original\n");
    expect(statSync(path.join(tmp.dir, "a.txt")).mtimeMs).toBe(before);
    expect(existsSync(path.join(tmp.dir, "new.txt"))).toBe(false);
    expect(existsSync(path.join(tmp.dir, "made.txt"))).toBe(false);
    const results = eventsOf(h.events, "tool_result").map((e) => [e.name, e.status, e.notRun === true]);
    expect(results).toEqual([
      // Refusals are answered before anything runs, in both engines.
      ["write_file", "error", true],
      ["write_file", "error", true],
      ["edit_file", "error", true],
      ["execute_command", "error", true],
      ["execute_command", "error", true],
      ["stop_process", "error", true],
      ["read_file", "success", false],
      ["list_directory", "success", false],
      ["write_todos", "success", false],
    ]);
    const refusal = eventsOf(h.events, "tool_result").find((e) => e.name === "execute_command")!;
    expect(refusal.content).toBe(refused("execute_command"));
    expect(eventsOf(h.events, "todos").map((e) => e.todos)).toEqual([PLAN]);
    expect(eventsOf(h.events, "final").map((e) => e.text)).toEqual(["Plan: change a.txt, then check it."]);
  });

  test("a plan whose only attempted change was refused still ends as done (the plan is the result)", async () => {
    const h = engineHarness(
      kind,
      tmp.dir,
      [{ toolCalls: [{ name: "write_file", args: { filePath: "a.txt", content: "x" } }] }, "Plan: write x to a.txt."],
      {
        approval: "plan",
      },
    );
    expect((await h.run("write x")).reason).toBe("done");
    expect(readFileSync(path.join(tmp.dir, "a.txt"), "utf8")).toBe("original\n");
  });
});

/** The roles and texts of a request, tool calls by name: enough to compare conversations exactly. */
function transcript(request: ChatRequest): string[] {
  return request.messages
    .filter((m) => m.role !== "system" && m.role !== "developer")
    .map((m) => {
      if (m.role === "assistant" && m.tool_calls?.length)
        return `assistant calls ${m.tool_calls.map((c) => c.function.name).join(",")}`;
      if (m.role === "tool") return `tool ${String(m.content)}`;
      return `${m.role}: ${String(m.content)}`;
    });
}

const PLAN_SCRIPT: ScriptStep[] = [
  { toolCalls: [{ name: "write_file", args: { filePath: "a.txt", content: "hello\n" } }] },
  { toolCalls: [{ name: "write_todos", args: { todos: PLAN } }] },
  { content: "Plan: change a.txt to say hello." },
];
// The model reads a.txt before replacing it: write_file never overwrites content its thread has not seen.
const CARRY_OUT: ScriptStep[] = [
  { toolCalls: [{ name: "read_file", args: { filePath: "a.txt" } }] },
  { toolCalls: [{ name: "write_file", args: { filePath: "a.txt", content: "hello\n" } }] },
  { content: "Done: a.txt says hello." },
];
const PLAN_TRANSCRIPT = [
  `user: make a.txt say hello\n\n${PLAN_MODE_NOTE}`,
  "assistant calls write_file",
  // The CLI has task too: its sub-agent runs in plan mode as well.
  `tool ${refused("write_file", [...readOnlyTools(createTools({ workspace: "" })), TASK_TOOL])}`,
  "assistant calls write_todos",
  "tool Todo list updated: 0 completed, 0 in progress, 2 pending. Next: Change a.txt to say hello",
  "assistant: Plan: change a.txt to say hello.",
];

describe.each<EngineKind>(["graph", "loop"])("--engine %s", (kind) => {
  const env = () => baseEnv({ OPENAI_BASE_URL: server!.url, OPENAI_API_KEY: "test", MINI_CURSOR_MAX_RETRIES: "1" });

  test("off a terminal the plan is the output (exit 0, nothing changed); the printed command carries it out on the same thread", async () => {
    server = await startOpenAIServer([...PLAN_SCRIPT, ...CARRY_OUT]);
    const plan = await runCli(
      ["--workspace", tmp.dir, "--engine", kind, "--approval", "plan", "--thread", "p1", "make a.txt say hello"],
      { env: env() },
    );
    expect(plan.code).toBe(0);
    expect(readFileSync(path.join(tmp.dir, "a.txt"), "utf8")).toBe("original\n");
    expect(plan.stdout).toContain(
      "  ☰ Todo list (0/2 done)\n    [ ] Change a.txt to say hello\n    [ ] Check a.txt\n",
    );
    expect(plan.stdout).toContain("Plan: change a.txt to say hello.");
    expect(plan.stdout).toContain("✔ Done:");
    const hint = /Plan mode: nothing was changed or run\. To carry out this plan: (.+)/.exec(plan.stdout)![1]!;
    expect(hint).toMatch(
      new RegExp(
        ` --approval auto-edit --workspace \\S+${kind === "loop" ? " --engine loop" : ""} --thread p1 'Carry out the plan\\.'$`,
      ),
    );
    // The model was told it is in plan mode, with the request; the trace shows the request alone.
    expect(transcript(server.requests[0]!)).toEqual([`user: make a.txt say hello\n\n${PLAN_MODE_NOTE}`]);
    expect(plan.stdout).toContain("❯ make a.txt say hello\n");

    const carry = await runCli(
      ["--workspace", tmp.dir, "--engine", kind, "--approval", "auto-edit", "--thread", "p1", PLAN_ACCEPTED_TASK],
      { env: env() },
    );
    expect(carry.code).toBe(0);
    expect(readFileSync(path.join(tmp.dir, "a.txt"), "utf8")).toBe("hello\n");
    expect(transcript(server.requests[3]!)).toEqual([...PLAN_TRANSCRIPT, `user: ${PLAN_ACCEPTED_TASK}`]);
  });

  test("--json: only events on stdout, the plan as the final event, the carry-out command on stderr", async () => {
    server = await startOpenAIServer(PLAN_SCRIPT);
    const r = await runCli(
      ["--workspace", tmp.dir, "--engine", kind, "--approval", "plan", "--json", "make a.txt say hello"],
      { env: env() },
    );
    expect(r.code).toBe(0);
    const events = r.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { type: string; text?: string; reason?: string; todos?: unknown });
    expect(events.find((e) => e.type === "todos")?.todos).toEqual(PLAN);
    expect(events.filter((e) => e.type === "final").map((e) => e.text)).toEqual(["Plan: change a.txt to say hello."]);
    expect(events.at(-1)).toMatchObject({ type: "run_end", reason: "done" });
    expect(r.stderr).toContain("Plan mode: nothing was changed or run. To carry out this plan: ");
    expect(readFileSync(path.join(tmp.dir, "a.txt"), "utf8")).toBe("original\n");
  });

  test("a session: /plan <request> plans, /plan accept full-auto carries the plan out on the same thread in full-auto", async () => {
    server = await startOpenAIServer([
      ...PLAN_SCRIPT,
      // full-auto: a command runs without asking (in plan mode it was refused).
      { toolCalls: [{ name: "execute_command", args: { command: "printf 'hello\\n' > a.txt" } }] },
      { content: "Done: a.txt says hello." },
    ]);
    const r = await runCli(["--workspace", tmp.dir, "--engine", kind, "--each-line"], {
      env: env(),
      input: "/plan make a.txt say hello\n/plan accept full-auto\n/approval\n/exit\n",
    });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Plan accepted: approval mode full-auto.");
    expect(r.stdout).toContain("Approval mode is full-auto.");
    expect(readFileSync(path.join(tmp.dir, "a.txt"), "utf8")).toBe("hello\n");
    expect(server.requests).toHaveLength(5);
    expect(transcript(server.requests[3]!)).toEqual([
      ...PLAN_TRANSCRIPT,
      `user: ${PLAN_ACCEPTED_TASK}\n\n${planAcceptedNote("full-auto")}`,
    ]);
  });
});

test("/rewind lists a planned or accepted request by the person's words, not mini-cursor's note", () => {
  const planned = new HumanMessage({ id: "r1", content: withRequestNote("add a /health route", PLAN_MODE_NOTE) });
  const accepted = new HumanMessage({
    id: "r2",
    content: withRequestNote(PLAN_ACCEPTED_TASK, planAcceptedNote("suggest")),
  });
  expect(requestTask(withRequestNote("a\n\nb", undefined))).toBe("a\n\nb");
  expect(formatTurns(listTurns([planned, accepted], {}))).toBe(
    [
      "Turns (/rewind <n> goes back to before turn n):",
      "    1  add a /health route  (changed no files)",
      `    2  ${PLAN_ACCEPTED_TASK}  (changed no files)`,
    ].join("\n"),
  );
});
