import { afterEach, describe, expect, jest, test } from "@jest/globals";
import { readFileSync } from "node:fs";
import path from "node:path";
import { UNANSWERED_TASK_RESULT } from "../../src/context/budget.js";
import { waitFor } from "../helpers/tmp.js";
import {
  bannerThread,
  expectValidConversation,
  openFixture,
  roles,
  toolResults,
  userTexts,
  type Fixture,
} from "./harness.js";

/**
 * SIGKILL while a `task` call's sub-agent runs, after it wrote a file and while it waits for its
 * next answer. The sub-agent's steps are not in the parent's journal, so the next conversation
 * cannot say what it did; it must not say the call was "not run" either (the file is on disk).
 */

jest.setTimeout(240_000);

describe.each(["graph", "loop"])("a run killed inside a sub-agent (%s)", (engine) => {
  let fx: Fixture | undefined;
  afterEach(async () => {
    await fx?.close();
    fx = undefined;
  });

  test('the next conversation is valid and says the sub-agent may have run, never "not run"', async () => {
    fx = await openFixture("sqlite", [
      {
        toolCalls: [
          {
            name: "task",
            args: { description: "write the file", prompt: "Write a.txt with one line.", subagent_type: "general" },
          },
        ],
      },
      { toolCalls: [{ name: "write_file", args: { filePath: "a.txt", content: "one\n" } }] },
      { content: "The sub-agent's report streams and then stalls here", stallAfterChunks: 2 },
      { content: "ok" },
    ]);
    const run1 = fx.start(["--engine", engine, "FIRST"]);
    // The third request is the sub-agent's, after its write: it stalls until the kill.
    await waitFor(() => fx!.server.requests.length === 3, 120_000, 50);
    process.kill(run1.pid, "SIGKILL");
    const r1 = await run1.done;
    expect(r1.signal).toBe("SIGKILL");
    expect(readFileSync(path.join(fx.workspace, "a.txt"), "utf8")).toBe("one\n");

    const thread = bannerThread(r1.stdout);
    const r2 = await fx.run(["--engine", engine, "--thread", thread, "SECOND"]);
    expect(r2.stderr).toBe("");
    expect(r2.code).toBe(0);
    const next = fx.server.requests.at(-1)!.messages;
    expectValidConversation(next);
    expect(userTexts(next)).toEqual(["FIRST", "SECOND"]);
    expect(roles(next)).toEqual(["system", "user", "assistant", "tool", "user"]);
    expect(toolResults(next)).toEqual([UNANSWERED_TASK_RESULT]);
  });
});
