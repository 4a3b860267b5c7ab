import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { expect, jest, test } from "@jest/globals";
import { PLAN_ACCEPTED_TASK, PLAN_MODE_NOTE, planAcceptedNote } from "../src/policy/plan-mode.js";
import { baseEnv } from "./helpers/cli.js";
import { startOpenAIServer, type ChatRequest } from "./helpers/openai-server.js";
import { atPrompt, count, createTmux, paneExitCode, startCliInPane, type TmuxTerminal } from "./helpers/tmux.js";
import { usePaneFixture } from "./helpers/pane-fixture.js";

/**
 * Plan mode on a real terminal (tmux), against the scripted OpenAI-compatible server: after a
 * plan the person is asked; feedback makes the model revise the plan, accepting carries it out
 * on the same thread in the chosen mode (by default the one plan mode was entered from).
 */

jest.setTimeout(120_000);

const fx = usePaneFixture((dir) => writeFileSync(path.join(dir, "a.txt"), "original\n"));

const QUESTION = "/ or type what to change / Enter: not now:";
async function startCli(args: string[]): Promise<TmuxTerminal> {
  fx.term = createTmux(
    baseEnv({ OPENAI_BASE_URL: fx.server!.url, OPENAI_API_KEY: "test", MINI_CURSOR_MAX_RETRIES: "1" }),
  );
  await startCliInPane(fx.term, fx.tmp.dir, args);
  return fx.term;
}

async function enter(t: TmuxTerminal, line: string): Promise<void> {
  await t.type(line);
  await t.press("Enter");
}

const exitCode = () => paneExitCode(fx.tmp.dir);

/** The user messages of a request: what the model was asked, in order. */
function userTurns(request: ChatRequest): string[] {
  return request.messages.filter((m) => m.role === "user").map((m) => String(m.content));
}

const todos = (n: number) => Array.from({ length: n }, (_, i) => ({ content: `Step ${i + 1}`, status: "pending" }));

test("one-shot --approval plan: feedback revises the plan, f accepts it in full-auto, and the same thread carries it out", async () => {
  fx.server = await startOpenAIServer([
    { toolCalls: [{ name: "execute_command", args: { command: "printf 'hello\\n' > a.txt" } }] },
    { toolCalls: [{ name: "write_todos", args: { todos: todos(1) } }] },
    { content: "Plan one." },
    { toolCalls: [{ name: "write_todos", args: { todos: todos(2) } }] },
    { content: "Plan two." },
    { toolCalls: [{ name: "execute_command", args: { command: "printf 'hello\\n' > a.txt" } }] },
    { content: "Done." },
  ]);
  const t = await startCli(["--approval", "plan", "make a.txt say hello"]);
  await t.waitForScreen((s) => s.includes(QUESTION), "the plan question");
  const first = await t.screen();
  expect(first).toContain("[a]ccept and carry it out (auto-edit) / accept in [s]uggest, auto-[e]dit or [f]ull-auto");
  expect(first).toContain("    [ ] Step 1");
  expect(readFileSync(path.join(fx.tmp.dir, "a.txt"), "utf8")).toBe("original\n");

  await enter(t, "split it in two steps");
  await t.waitForScreen((s) => count(s, QUESTION) === 2 && s.includes("Plan two."), "the revised plan's question");
  await enter(t, "f");
  expect(await exitCode()).toBe("EXITED:0");
  expect(await t.screen()).toContain("Plan accepted: approval mode full-auto.");
  expect(readFileSync(path.join(fx.tmp.dir, "a.txt"), "utf8")).toBe("hello\n");
  expect(fx.server.requests).toHaveLength(7);
  // One thread: the carrying-out request holds both plans, the feedback and the acceptance.
  expect(userTurns(fx.server.requests[5]!)).toEqual([
    `make a.txt say hello\n\n${PLAN_MODE_NOTE}`,
    `split it in two steps\n\n${PLAN_MODE_NOTE}`,
    `${PLAN_ACCEPTED_TASK}\n\n${planAcceptedNote("full-auto")}`,
  ]);
  expect(
    fx.server.requests[5]!.messages.filter((m) => m.role === "assistant" && !m.tool_calls?.length).map(
      (m) => m.content,
    ),
  ).toEqual(["Plan one.", "Plan two."]);
});

test("a session: /plan from suggest, then a (accept) goes back to suggest, whose question then guards the write", async () => {
  fx.server = await startOpenAIServer([
    { toolCalls: [{ name: "write_todos", args: { todos: todos(1) } }] },
    { content: "Plan: write a.txt." },
    // Read before replacing: write_file replaces only what its thread has seen.
    { toolCalls: [{ name: "read_file", args: { filePath: "a.txt" } }] },
    { toolCalls: [{ name: "write_file", args: { filePath: "a.txt", content: "hello\n" } }] },
    { content: "Done." },
  ]);
  const t = await startCli(["--approval", "suggest"]);
  await t.waitForScreen(atPrompt, "the first prompt");
  await enter(t, "/plan make a.txt say hello");
  await t.waitForScreen((s) => s.includes(QUESTION), "the plan question");
  expect(await t.screen()).toContain("[a]ccept and carry it out (suggest)");
  await enter(t, "a");
  await t.waitForScreen(/\[y\]es \/ \[n\]o/, "the write's approval question (suggest)");
  await enter(t, "y");
  await t.waitForScreen((s) => atPrompt(s) && count(s, "✔ Done:") === 2, "the carried-out turn's end");
  expect(readFileSync(path.join(fx.tmp.dir, "a.txt"), "utf8")).toBe("hello\n");
  expect(userTurns(fx.server.requests[2]!)).toEqual([
    `make a.txt say hello\n\n${PLAN_MODE_NOTE}`,
    `${PLAN_ACCEPTED_TASK}\n\n${planAcceptedNote("suggest")}`,
  ]);
  await enter(t, "/exit");
  expect(await exitCode()).toBe("EXITED:0");
});

test("one-shot: Enter at the question carries nothing out, says how to later, and exits 0", async () => {
  fx.server = await startOpenAIServer([
    { toolCalls: [{ name: "write_todos", args: { todos: todos(1) } }] },
    { content: "Plan: write a.txt." },
  ]);
  const t = await startCli(["--approval", "plan", "--thread", "later-1", "make a.txt say hello"]);
  await t.waitForScreen((s) => s.includes(QUESTION), "the plan question");
  await t.press("Enter");
  expect(await exitCode()).toBe("EXITED:0");
  expect(await t.screen()).toMatch(
    /Not carried out\. To carry out this plan later: mini-cursor --approval auto-edit --workspace \S+ --thread later-1 'Carry out the plan\.'/,
  );
  expect(readFileSync(path.join(fx.tmp.dir, "a.txt"), "utf8")).toBe("original\n");
  expect(fx.server.requests).toHaveLength(2);
});
