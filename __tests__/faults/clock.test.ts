import { afterEach, beforeAll, describe, expect, jest, test } from "@jest/globals";
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import type { ScriptStep } from "../helpers/openai-server.js";
import { SAVERS } from "../helpers/postgres.js";
import { bannerThread, expectValidConversation, openFixture, userTexts, type Fixture } from "./harness.js";

/**
 * A clock set back (a VM restored from a snapshot, an NTP step) between two turns of a thread,
 * with SQLite and PostgreSQL: LangGraph makes checkpoint ids from the clock, so the turn saved
 * under the earlier time has the smaller ids. The thread must go on from its last turn all the
 * same: no "time travel", no file taken back, no turn dropped, and undo takes back the last turn.
 * The clock is set back with faketime (Debian's package, installed by .ci/run).
 */

jest.setTimeout(300_000);

/** Two days behind, for the CLI and everything it starts (libfaketime is preloaded). */
const TWO_DAYS_BACK = ["faketime", "-f", "-2d"];

const write = (file: string, content: string): ScriptStep => ({
  toolCalls: [{ name: "write_file", args: { filePath: file, content } }],
});

beforeAll(() => {
  const probe = spawnSync("faketime", ["-f", "-2d", "date", "+%s"], { encoding: "utf8" });
  if (probe.status !== 0)
    throw new Error(`faketime is needed for this test (apt-get install faketime): ${probe.error}`);
  expect(Math.round((Date.now() / 1000 - Number(probe.stdout)) / 86_400)).toBe(2);
});

describe.each(SAVERS)("a turn saved while the clock was two days behind (%s)", (saver) => {
  let fx: Fixture | undefined;
  afterEach(async () => {
    await fx?.close();
    fx = undefined;
  });

  test("the next run continues from it: no time travel, both turns' files kept, every turn sent, undo takes back that turn", async () => {
    fx = await openFixture(saver, [
      write("a.txt", "one\n"),
      { content: "first done" },
      write("b.txt", "two\n"),
      { content: "second done" },
      { content: "third done" },
    ]);
    const first = await fx.run(["FIRST"]);
    expect({ code: first.code, stderr: first.stderr }).toEqual({ code: 0, stderr: "" });
    const thread = bannerThread(first.stdout);

    const second = await fx.run(["--thread", thread, "SECOND"], {}, TWO_DAYS_BACK);
    expect({ code: second.code, stderr: second.stderr }).toEqual({ code: 0, stderr: "" });
    expect(readFileSync(path.join(fx.workspace, "b.txt"), "utf8")).toBe("two\n");

    const third = await fx.run(["--thread", thread, "THIRD"]);
    expect({ code: third.code, stderr: third.stderr }).toEqual({ code: 0, stderr: "" });
    expect(third.stdout).not.toContain("Time travel");
    expect(readFileSync(path.join(fx.workspace, "a.txt"), "utf8")).toBe("one\n");
    expect(readFileSync(path.join(fx.workspace, "b.txt"), "utf8")).toBe("two\n");
    const sent = fx.server.requests.at(-1)!.messages;
    expectValidConversation(sent);
    expect(userTexts(sent)).toEqual(["FIRST", "SECOND", "THIRD"]);

    // Undo goes back turn by turn: THIRD changed nothing, SECOND (saved under the earlier clock) wrote b.txt.
    const undoThird = await fx.run(["--thread", thread, "--undo"]);
    expect({ code: undoThird.code, stdout: undoThird.stdout }).toEqual({
      code: 0,
      stdout:
        "Undid turn 3: THIRD\nThat turn changed no files (or they were not recorded); only the conversation goes back.\n",
    });
    const undoSecond = await fx.run(["--thread", thread, "--undo"]);
    expect({ code: undoSecond.code, stderr: undoSecond.stderr }).toEqual({ code: 0, stderr: "" });
    expect(undoSecond.stdout).toContain("Undid turn 2: SECOND");
    expect(existsSync(path.join(fx.workspace, "b.txt"))).toBe(false);
    expect(readFileSync(path.join(fx.workspace, "a.txt"), "utf8")).toBe("one\n");
  });
});
