import { afterEach, describe, expect, jest, test } from "@jest/globals";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import type { ChatRequest, Script, ScriptStep } from "../helpers/openai-server.js";
import {
  openFixture,
  resumeSecond,
  roles,
  sigkill,
  toolResults,
  userTexts,
  waitOnRun,
  type Fixture,
} from "./harness.js";

/**
 * SIGKILL while a `task` call's sub-agent runs, after it wrote a file and while it waits for its
 * next answer. The task call is in the parent's write-ahead journal with the snapshot taken
 * before its step, so the next conversation tells the model the sub-agent was interrupted and
 * which files changed since, and undoing that turn takes the sub-agent's file back. A sibling
 * sub-agent that finished before the kill keeps its report.
 */

jest.setTimeout(240_000);

/** The first user message of a request: which conversation (the parent's, a sub-agent's) it belongs to. */
function conversationOf(request: ChatRequest): string {
  const first = request.messages.find((m) => m.role === "user");
  return typeof first?.content === "string" ? first.content : JSON.stringify(first?.content);
}

/** A script per conversation, played in order whatever order the parallel requests arrive in. */
function routed(scripts: Record<string, ScriptStep[]>): Script {
  const played = new Map<string, number>();
  return (request) => {
    const key = conversationOf(request);
    const index = played.get(key) ?? 0;
    played.set(key, index + 1);
    return scripts[key]?.[index] ?? { content: `no script for ${key} turn ${index + 1}` };
  };
}

const task = (prompt: string, description: string) => ({
  name: "task",
  args: { description, prompt, subagent_type: "general" },
});

/** What the model is told of a sub-agent cut off by the kill. */
const interrupted = (changed: string) =>
  `This task call's sub-agent was interrupted: mini-cursor stopped (the process was killed or crashed) before its report was saved, so it may have done part of its task. Since this step started, these files changed: ${changed}. Check them before running it again.`;

/** Whether the state folder's tool journal holds this text (a call's result written as it ended). */
function journalHolds(fx: Fixture, text: string): boolean {
  const dir = path.join(fx.stateFolder, "journal");
  if (!existsSync(dir)) return false;
  return readdirSync(dir).some((f) => f.endsWith(".json") && readFileSync(path.join(dir, f), "utf8").includes(text));
}

describe.each(["graph", "loop"])("a run killed inside a sub-agent (%s)", (engine) => {
  let fx: Fixture | undefined;
  afterEach(async () => {
    await fx?.close();
    fx = undefined;
  });

  /** Undoes the thread's last two turns (SECOND, which changed nothing, then FIRST) and returns FIRST's undo. */
  async function undoBothTurns(thread: string) {
    const second = await fx!.run(["--engine", engine, "--thread", thread, "--undo"]);
    expect(second.code).toBe(0);
    expect(second.stdout).toContain(
      "Undid turn 2: SECOND\nThat turn changed no files (or they were not recorded); only the conversation goes back.",
    );
    return fx!.run(["--engine", engine, "--thread", thread, "--undo"]);
  }

  test("the next conversation says the sub-agent was interrupted, naming its file, and undo takes the file back", async () => {
    fx = await openFixture("sqlite", [
      { toolCalls: [task("Write a.txt with one line.", "write the file")] },
      { toolCalls: [{ name: "write_file", args: { filePath: "a.txt", content: "one\n" } }] },
      { content: "The sub-agent's report streams and then stalls here", stallAfterChunks: 2 },
      { content: "ok" },
    ]);
    const run1 = fx.start(["--engine", engine, "FIRST"]);
    // The third request is the sub-agent's, after its write: it stalls until the kill.
    await waitOnRun(run1, () => fx!.server.requests.length === 3);
    const r1 = await sigkill(run1);
    expect(readFileSync(path.join(fx.workspace, "a.txt"), "utf8")).toBe("one\n");

    const { thread, r2, next } = await resumeSecond(fx, r1, ["--engine", engine]);
    expect(r2.stdout).toContain(
      "The previous run on this thread stopped in the middle of a step (killed or crashed). Its tool calls: 1 interrupted while running (1 file(s) changed since); the model is told so.",
    );
    expect(userTexts(next)).toEqual(["FIRST", "SECOND"]);
    expect(roles(next)).toEqual(["system", "user", "assistant", "tool", "user"]);
    expect(toolResults(next)).toEqual([interrupted("a.txt (added)")]);

    const first = await undoBothTurns(thread);
    expect(first.code).toBe(0);
    expect(first.stdout).toContain("Undid turn 1: FIRST\nFiles (1):\n  removed    a.txt");
    expect(existsSync(path.join(fx.workspace, "a.txt"))).toBe(false);
  });

  test("two sub-agents in one turn, one finished before the kill: its report comes back, the other is interrupted", async () => {
    fx = await openFixture(
      "sqlite",
      routed({
        FIRST: [{ toolCalls: [task("Write a.txt.", "A"), task("Write b.txt.", "B")] }],
        "Write a.txt.": [
          { toolCalls: [{ name: "write_file", args: { filePath: "a.txt", content: "a\n" } }] },
          { content: "A's report streams and then stalls here", stallAfterChunks: 2 },
        ],
        "Write b.txt.": [
          { toolCalls: [{ name: "write_file", args: { filePath: "b.txt", content: "b\n" } }] },
          { content: "Wrote b.txt." },
        ],
        SECOND: [{ content: "ok" }],
      }),
    );
    const run1 = fx.start(["--engine", engine, "FIRST"]);
    // A stalls after its write; B has ended, its report in the journal.
    await waitOnRun(
      run1,
      () =>
        fx!.server.requests.filter((r) => conversationOf(r) === "Write a.txt.").length === 2 &&
        journalHolds(fx!, "Wrote b.txt."),
    );
    const { thread, next } = await resumeSecond(fx, await sigkill(run1), ["--engine", engine]);
    expect(roles(next)).toEqual(["system", "user", "assistant", "tool", "tool", "user"]);
    const [callA, callB] = next[2]!.tool_calls!.map((c) => c.id);
    const resultOf = (id: string | undefined) => next.find((m) => m.role === "tool" && m.tool_call_id === id)?.content;
    expect(resultOf(callB)).toBe("Wrote b.txt.");
    expect(resultOf(callA)).toBe(interrupted("a.txt (added), b.txt (added)"));

    const first = await undoBothTurns(thread);
    expect(first.code).toBe(0);
    expect(first.stdout).toContain("Undid turn 1: FIRST\nFiles (2):\n  removed    a.txt\n  removed    b.txt");
    expect(existsSync(path.join(fx.workspace, "a.txt"))).toBe(false);
    expect(existsSync(path.join(fx.workspace, "b.txt"))).toBe(false);
  });
});
