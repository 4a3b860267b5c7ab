import { afterEach, describe, expect, jest, test } from "@jest/globals";
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync, truncateSync, writeFileSync } from "node:fs";
import path from "node:path";
import { startOpenAIServer, type OpenAIServer, type ScriptStep } from "../helpers/openai-server.js";
import { openFixture, waitOnRun, type Fixture } from "./harness.js";

/**
 * Issue 42 item 11 and issue 44 item 1, as state promises on the real CLI: the first snapshot of
 * a workspace is as crash-safe as every later one (a SIGKILL right after a new thread's first
 * write leaves a turn whose undo removes that file), two processes making a workspace's snapshot
 * store at the same moment each keep an undoable turn, and a damaged store (a truncated pack) is
 * said to be damaged, by the run and by undo, never taken for another state folder.
 */

jest.setTimeout(600_000);

const write = (file: string, content: string): ScriptStep => ({
  toolCalls: [{ name: "write_file", args: { filePath: file, content } }],
});

describe("the snapshot store under kills, a second process and damage", () => {
  let fx: Fixture | undefined;
  let second: OpenAIServer | undefined;
  afterEach(async () => {
    await second?.close();
    second = undefined;
    await fx?.close();
    fx = undefined;
  });

  const exists = (name: string) => existsSync(path.join(fx!.workspace, name));

  /** A new workspace and thread whose first write_file is SIGKILLed `delayMs` after the file appears. */
  async function killedAfterFirstWrite(engine: string, delayMs: number, script: ScriptStep[] = []) {
    // The answer after the write waits, so a kill 15 ms late still lands inside the turn: on a quick
    // machine the loop otherwise ends the whole turn within 15 ms and nothing is left to recover.
    fx = await openFixture("sqlite", [write("a.txt", "one\n"), { content: "done", delayMs: 3_000 }, ...script]);
    writeFileSync(path.join(fx.workspace, "kept.txt"), "kept\n");
    const run = fx.start(["--engine", engine, "--thread", "t", "FIRST"]);
    await waitOnRun(run, () => exists("a.txt"));
    await new Promise((resolve) => setTimeout(resolve, delayMs));
    process.kill(run.pid, "SIGKILL");
    expect((await run.done).signal).toBe("SIGKILL");
  }

  test.each(["graph", "loop"])(
    "SIGKILL 0–15 ms after a new thread's first write_file (%s): the next --undo removes the file, the next run too",
    async (engine) => {
      const cli = (...args: string[]) => fx!.run(["--engine", engine, "--thread", "t", ...args]);
      for (const delayMs of [0, 5, 10, 15]) {
        await killedAfterFirstWrite(engine, delayMs);
        const undo = await cli("--undo");
        expect([delayMs, undo.code, undo.stdout.trim(), undo.stderr]).toEqual([
          delayMs,
          0,
          "Undid turn 1: FIRST\nFiles (1):\n  removed    a.txt",
          "",
        ]);
        expect([exists("a.txt"), readFileSync(path.join(fx!.workspace, "kept.txt"), "utf8")]).toEqual([
          false,
          "kept\n",
        ]);
        await fx!.close();
        // The same kill, then a run that recovers the step: undoing it afterwards removes the file too.
        await killedAfterFirstWrite(engine, delayMs, [{ content: "second" }]);
        const next = await cli("SECOND");
        expect(next.code).toBe(0);
        // Killed before the call's result was in the journal, or after it; or (the kill comes up to
        // 65 ms after the file appears, with the poll) after the whole step was saved, when there is
        // nothing to close and the model is sent the call's own result.
        const recovered = /stopped in the middle of a step/.test(next.stdout);
        if (recovered)
          expect(next.stdout).toMatch(
            /1 interrupted while running \(1 file\(s\) changed since\)|1 finished \(result recovered\)/,
          );
        const sent = fx!.server.requests.at(-1)!.messages.filter((m) => m.role === "tool");
        expect([recovered, sent.length, String(sent[0]?.content).includes("interrupted")]).toEqual([
          recovered,
          1,
          recovered && /interrupted while running/.test(next.stdout),
        ]);
        expect((await cli("--undo")).code).toBe(0);
        const undoFirst = await cli("--undo");
        expect([delayMs, undoFirst.code, undoFirst.stdout.trim()]).toEqual([
          delayMs,
          0,
          "Undid turn 1: FIRST\nFiles (1):\n  removed    a.txt",
        ]);
        expect(exists("a.txt")).toBe(false);
        await fx!.close();
        fx = undefined;
      }
    },
  );

  test("two processes make a workspace's first snapshot store at the same moment: each thread's turn is undone", async () => {
    fx = await openFixture("sqlite", [write("a.txt", "from A\n"), { content: "done" }]);
    second = await startOpenAIServer([write("b.txt", "from B\n"), { content: "done" }]);
    // A stops with its store made in a folder of its own, not yet in place; B then makes its own and runs whole.
    const a = fx.start(["--thread", "ta", "FIRST"], { MINI_CURSOR_FAULT_POINT: "snapshot-store:stop" });
    await waitOnRun(a, () => procState(a.pid) === "T");
    const made = readdirSync(fx.stateFolder).filter((n) => n.startsWith("snapshots.new-"));
    expect(made).toEqual([expect.stringMatching(new RegExp(`^snapshots\\.new-${a.pid}-[0-9a-f]{8}$`))]);
    const b = await fx.run(["--thread", "tb", "SECOND"], { OPENAI_BASE_URL: second.url });
    expect([b.code, b.stderr, exists("b.txt")]).toEqual([0, "", true]);
    process.kill(a.pid, "SIGCONT");
    const ra = await a.done;
    expect([ra.code, ra.stderr]).toEqual([0, ""]);
    for (const out of [ra.stdout, b.stdout]) expect(out).not.toContain("snapshot");
    // A's store lost the race and went; one store is left, and each thread's undo takes back its own file.
    expect(readdirSync(fx.stateFolder).filter((n) => n.startsWith("snapshots"))).toEqual(["snapshots"]);
    const undoA = await fx.run(["--thread", "ta", "--undo"]);
    expect([undoA.code, undoA.stdout.trim()]).toEqual([0, "Undid turn 1: FIRST\nFiles (1):\n  removed    a.txt"]);
    const undoB = await fx.run(["--thread", "tb", "--undo"]);
    expect([undoB.code, undoB.stdout.trim()]).toEqual([0, "Undid turn 1: SECOND\nFiles (1):\n  removed    b.txt"]);
    expect([exists("a.txt"), exists("b.txt")]).toEqual([false, false]);
  });

  test("a damaged snapshot store (a truncated pack): the run says so, and undo names the damage, not another state folder", async () => {
    fx = await openFixture("sqlite", [
      ...[write("a.txt", "one\n"), { content: "done" }, write("b.txt", "two\n"), { content: "ok" }],
      ...[write("c.txt", "three\n"), { content: "fine" }],
    ]);
    expect((await fx.run(["--thread", "t", "FIRST"])).code).toBe(0);
    const store = path.join(fx.stateFolder, "snapshots");
    const env = { PATH: process.env.PATH, GIT_DIR: store, GIT_CONFIG_NOSYSTEM: "1", HOME: fx.workspace };
    expect(spawnSync("git", ["repack", "-a", "-d", "-q"], { env }).status).toBe(0);
    const packs = path.join(store, "objects", "pack");
    const pack = path.join(packs, readdirSync(packs).find((n) => n.endsWith(".pack"))!);
    truncateSync(pack, Math.floor(statSync(pack).size / 2));
    const damaged = `the snapshot store ${store} is damaged (${pack} is not the pack its index describes), so the snapshots in it cannot be read. Move it aside (mv ${store} ${store}.damaged) and the next snapshot starts a new store; the turns recorded in the old one can no longer be undone`;

    const undo = await fx.run(["--thread", "t", "--undo"]);
    expect([undo.code, undo.stdout.trim(), undo.stderr]).toEqual([
      1,
      `The undo failed: ${damaged}. Files it had already put back stay so; the conversation was not changed.`,
      "",
    ]);
    expect(exists("a.txt")).toBe(true);

    const run = await fx.run(["--thread", "t", "--json", "SECOND"]);
    expect(run.code).toBe(0);
    const notices = run.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { type: string; message?: string })
      .filter((e) => e.type === "notice")
      .map((e) => e.message);
    expect(notices).toEqual([
      `Workspace snapshots failed (${damaged}); the run goes on, but /undo cannot bring back the files of this step.`,
    ]);
    const again = await fx.run(["--thread", "t", "--undo"]);
    expect([again.code, again.stdout.trim()]).toEqual([
      1,
      `The files of turn 2 were not recorded (the snapshot failed: ${damaged}), so they cannot be brought back; nothing was changed.`,
    ]);
    // Moved aside as it says, the next run starts a new store, and its turn is undone again.
    expect(spawnSync("mv", [store, `${store}.damaged`]).status).toBe(0);
    const third = await fx.run(["--thread", "t", "THIRD"]);
    expect([third.code, third.stdout]).toEqual([0, expect.not.stringContaining("snapshot")]);
    const undoThird = await fx.run(["--thread", "t", "--undo"]);
    expect([undoThird.code, undoThird.stdout.trim()]).toEqual([
      0,
      "Undid turn 3: THIRD\nFiles (1):\n  removed    c.txt",
    ]);
    expect([exists("c.txt"), exists("b.txt"), exists("a.txt")]).toEqual([false, true, true]);
  });
});

/** A process's state letter from /proc (R, S, T stopped, Z zombie), undefined once it is gone. */
function procState(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0];
  } catch {
    return undefined;
  }
}
