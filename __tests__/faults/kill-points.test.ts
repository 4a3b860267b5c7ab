import { afterEach, describe, expect, jest, test } from "@jest/globals";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { ScriptStep } from "../helpers/openai-server.js";
import { SAVERS } from "../helpers/postgres.js";
import {
  killedResult,
  openFixture,
  resumeSecond,
  roles,
  toolResults,
  userTexts,
  waitOnRun,
  type Fixture,
  type Started,
} from "./harness.js";

/**
 * SIGKILL at named points of a run (MINI_CURSOR_FAULT_POINT, or a kill from outside during a
 * command or mid-stream), with SQLite and PostgreSQL: the id the banner printed resumes, and
 * the next request the model gets is a valid conversation that says what is on disk.
 */

jest.setTimeout(240_000);

const WRITE: ScriptStep = { toolCalls: [{ name: "write_file", args: { filePath: "a.txt", content: "one\n" } }] };
const COMMAND: ScriptStep = {
  toolCalls: [{ name: "execute_command", args: { command: "echo $$ > cmd.pid; echo partial > b.txt; sleep 60" } }],
};

describe.each(SAVERS)("killed runs resume truthfully (%s)", (saver) => {
  let fx: Fixture | undefined;
  afterEach(async () => {
    await fx?.close();
    fx = undefined;
  });

  interface Kill {
    point?: string;
    engine?: string;
    /** Kills the run from outside once the test's condition holds. */
    from?: (f: Fixture, run: Started) => Promise<void>;
  }

  /** Run 1 ("FIRST") starts with `first` and is killed; run 2 ("SECOND") on the banner's thread is answered "ok". */
  async function killThenResume(first: ScriptStep, kill: Kill) {
    fx = await openFixture(saver, [first, { content: "ok" }, { content: "again" }]);
    const engine = kill.engine ? ["--engine", kill.engine] : [];
    const run1 = fx.start([...engine, "FIRST"], kill.point ? { MINI_CURSOR_FAULT_POINT: kill.point } : {});
    if (kill.from) await kill.from(fx, run1);
    const resumed = await resumeSecond(fx, await killedResult(run1), engine);
    expect(userTexts(resumed.next)).toEqual(["FIRST", "SECOND"]);
    return resumed;
  }

  test.each(["graph", "loop"])(
    "after a write (%s): the call's real result comes back from the journal",
    async (engine) => {
      const { next, r2 } = await killThenResume(WRITE, { point: "tool-end", engine });
      expect(readFileSync(path.join(fx!.workspace, "a.txt"), "utf8")).toBe("one\n");
      expect(roles(next)).toEqual(["system", "user", "assistant", "tool", "user"]);
      const [result] = toolResults(next);
      expect(result).toContain("a.txt");
      expect(result).not.toMatch(/not run|interrupted/);
      expect(r2.stdout).toContain("1 finished (result recovered)");
    },
  );

  test("after a read (its journal writes are not flushed: a read changes nothing): the result still comes back", async () => {
    const read: ScriptStep = { toolCalls: [{ name: "read_file", args: { filePath: "notes.txt" } }] };
    fx = await openFixture(saver, [read, { content: "ok" }, { content: "again" }]);
    writeFileSync(path.join(fx.workspace, "notes.txt"), "a note\n");
    const run1 = fx.start(["FIRST"], { MINI_CURSOR_FAULT_POINT: "tool-end" });
    const { next, r2 } = await resumeSecond(fx, await killedResult(run1), []);
    expect(roles(next)).toEqual(["system", "user", "assistant", "tool", "user"]);
    expect(toolResults(next)[0]).toContain("a note");
    expect(r2.stdout).toContain("1 finished (result recovered)");
  });

  test("calls that end together share a journal write: killed after the last one's end, both results come back", async () => {
    const pair: ScriptStep = {
      toolCalls: [
        { name: "write_file", args: { filePath: "a.txt", content: "one\n" } },
        { name: "write_file", args: { filePath: "b.txt", content: "two\n" } },
      ],
    };
    const { next, r2 } = await killThenResume(pair, { point: "tool-end@2" });
    expect(roles(next)).toEqual(["system", "user", "assistant", "tool", "tool", "user"]);
    const results = toolResults(next);
    expect(results[0]).toContain("a.txt");
    expect(results[1]).toContain("b.txt");
    for (const r of results) expect(r).not.toMatch(/not run|interrupted/);
    expect(r2.stdout).toContain("2 finished (result recovered)");
  });

  test('after the journal said started, before the tool ran: interrupted, nothing changed, never "not run"', async () => {
    const { next } = await killThenResume(WRITE, { point: "tool-start" });
    expect(existsSync(path.join(fx!.workspace, "a.txt"))).toBe(false);
    expect(roles(next)).toEqual(["system", "user", "assistant", "tool", "user"]);
    const [result] = toolResults(next);
    expect(result).toMatch(/^This write_file call was interrupted: it started, but mini-cursor stopped/);
    expect(result).toContain("No file in the workspace changed since this step started.");
    expect(result).not.toContain("not run");
  });

  test("during a command: interrupted, naming the file it wrote; undoing that turn removes the file", async () => {
    const { next, thread } = await killThenResume(COMMAND, {
      from: async (f, run) => {
        const marker = path.join(f.workspace, "b.txt");
        await waitOnRun(run, () => existsSync(marker) && readFileSync(marker, "utf8") === "partial\n");
        process.kill(run.pid, "SIGKILL");
        // The command outlives its parent: end it here (its pid is the one it wrote).
        const cmd = Number(readFileSync(path.join(f.workspace, "cmd.pid"), "utf8"));
        try {
          process.kill(cmd, "SIGKILL");
        } catch {
          // already gone
        }
      },
    });
    const [result] = toolResults(next);
    expect(result).toMatch(/^This execute_command call was interrupted/);
    expect(result).toContain("b.txt (added)");
    expect(result).not.toContain("not run");
    // The second turn changed nothing; undoing it, then the interrupted turn, takes b.txt away.
    expect((await fx!.run(["--thread", thread, "--undo"])).code).toBe(0);
    const undo = await fx!.run(["--thread", thread, "--undo"]);
    expect(undo.code).toBe(0);
    expect(existsSync(path.join(fx!.workspace, "b.txt"))).toBe(false);
  });

  test("mid-stream: the unfinished answer is not in the thread, the request is", async () => {
    const stalled: ScriptStep = {
      content: "This answer is streamed and then stalls forever here",
      stallAfterChunks: 2,
    };
    const { next } = await killThenResume(stalled, {
      from: async (f, run) => {
        await waitOnRun(run, () => f.server.requests.length === 1);
        process.kill(run.pid, "SIGKILL");
      },
    });
    expect(roles(next)).toEqual(["system", "user", "user"]);
  });

  test("during a checkpoint: valid, and the thread agrees with the disk", async () => {
    // The fifth checkpoint of the graph's run is the one after its tools (input, compact, agent, approve, tools).
    const { next } = await killThenResume(WRITE, { point: "checkpoint@5" });
    const [result] = toolResults(next);
    if (existsSync(path.join(fx!.workspace, "a.txt"))) {
      expect(result).toContain("a.txt");
      expect(result).not.toContain("not run");
    } else expect(result).toContain("not run");
  });
});
