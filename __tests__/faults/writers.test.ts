import { afterEach, describe, expect, jest, test } from "@jest/globals";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import type { ScriptStep } from "../helpers/openai-server.js";
import { SAVERS } from "../helpers/postgres.js";
import { waitFor } from "../helpers/tmp.js";
import { expectValidConversation, openFixture, toolResults, userTexts, type Fixture } from "./harness.js";

/**
 * One writer per thread: a second process on a thread that is running is refused at once,
 * naming the first; with --wait-for-thread it waits, saying so, and goes on when the first
 * dies (a lock that dies with its holder). Another thread in the same workspace never waits.
 */

jest.setTimeout(300_000);

/** A command that marks the workspace and then runs until killed (its pid in cmd.pid). */
const LONG_COMMAND: ScriptStep = {
  toolCalls: [
    { name: "execute_command", args: { command: "echo $$ > cmd.pid; echo started > started.txt; sleep 120" } },
  ],
};

describe.each(SAVERS)("two processes (%s)", (saver) => {
  let fx: Fixture | undefined;
  let commandPid: number | undefined;
  afterEach(async () => {
    if (commandPid) {
      try {
        process.kill(commandPid, "SIGKILL");
      } catch {
        // already gone
      }
    }
    commandPid = undefined;
    await fx?.close();
    fx = undefined;
  });

  test("on one thread: refused at once naming the other; --wait-for-thread waits and then continues; other threads run", async () => {
    // Requests in arrival order: A's first (the long command), the other thread's, then B's after A died.
    fx = await openFixture(saver, (request, index) => {
      const last = request.messages.at(-1);
      if (index === 0) return LONG_COMMAND;
      return { content: last?.role === "user" && String(last.content).includes("OTHER") ? "other done" : "ok" };
    });
    const a = fx.start(["--thread", "shared", "A"]);
    const marker = path.join(fx.workspace, "started.txt");
    await waitFor(() => existsSync(marker), 120_000, 50);
    commandPid = Number(readFileSync(path.join(fx.workspace, "cmd.pid"), "utf8"));

    const refused = await fx.run(["--thread", "shared", "B"]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      `mini-cursor: thread shared is being continued by another mini-cursor (pid ${a.pid}, since `,
    );
    expect(refused.stderr).toContain("pass --wait-for-thread to wait here");
    expect(fx.server.requests).toHaveLength(1);

    // A thread of its own in the same workspace runs meanwhile.
    const other = await fx.run(["--thread", "other", "OTHER"]);
    expect(other.code).toBe(0);
    expect(other.stdout).toContain("other done");

    const waiting = fx.start(["--thread", "shared", "--wait-for-thread", "B"]);
    await waitFor(() => waiting.output().includes("Waiting for thread shared"), 120_000, 50);
    expect(waiting.output()).toContain(
      `Waiting for thread shared: it is being continued by another mini-cursor (pid ${a.pid}, since `,
    );
    // Still waiting while A runs: no request from it yet.
    expect(fx.server.requests).toHaveLength(2);
    process.kill(a.pid, "SIGKILL");
    process.kill(commandPid, "SIGKILL");
    commandPid = undefined;
    const b = await waiting.done;
    expect(b.code).toBe(0);
    const next = fx.server.requests.at(-1)!.messages;
    expectValidConversation(next);
    expect(userTexts(next)).toEqual(["A", "B"]);
    expect(toolResults(next)[0]).toMatch(/^This execute_command call was interrupted/);
    expect(toolResults(next)[0]).toContain("started.txt (added)");
  });
});
