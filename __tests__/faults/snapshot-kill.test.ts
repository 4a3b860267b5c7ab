import { afterEach, describe, expect, jest, test } from "@jest/globals";
import type { ChildProcess } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { ScriptStep } from "../helpers/openai-server.js";
import { holdSnapshotBranch } from "../helpers/snapshot-lock.js";
import { bannerThread, openFixture, sigkill, toolResults, waitOnRun, type Fixture } from "./harness.js";

/**
 * Issue 30, goal 3, as a state promise: a process SIGKILLed while its first snapshot runs in the
 * background, or in the middle of an incremental one, leaves a thread whose undo still works, or
 * says exactly why it cannot.
 */

jest.setTimeout(240_000);

describe("SIGKILL during a snapshot: the next conversation's undo", () => {
  let fx: Fixture | undefined;
  let holder: ChildProcess | undefined;
  afterEach(async () => {
    holder?.kill("SIGKILL");
    holder = undefined;
    await fx?.close();
    fx = undefined;
  });

  test("killed while the first snapshot runs in the background: the file step ran unblocked, and the next process's undo brings its file back", async () => {
    const write: ScriptStep = { toolCalls: [{ name: "write_file", args: { filePath: "a.txt", content: "one\n" } }] };
    const stalled: ScriptStep = { content: "streamed, then it stalls", stallAfterChunks: 2 };
    fx = await openFixture("sqlite", [write, stalled]);
    writeFileSync(path.join(fx.workspace, "kept.txt"), "kept\n");
    // The first snapshot cannot finish while this git holds the snapshot branch.
    holder = await holdSnapshotBranch(path.join(fx.stateFolder, "snapshots"), fx.workspace);
    const run = fx.start(["FIRST"]);
    // The write step ended and its results were saved (the next model request is under way).
    await waitOnRun(run, () => fx!.server.requests.length === 2);
    expect(readFileSync(path.join(fx.workspace, "a.txt"), "utf8")).toBe("one\n");
    expect(run.output()).not.toContain("Workspace snapshot");
    const r1 = await sigkill(run);
    holder.kill("SIGKILL");

    // The next process's first snapshot makes the killed run's snapshots whole from the blobs it had saved.
    const undo = await fx.run(["--thread", bannerThread(r1.stdout), "--undo"]);
    expect(undo.stdout).toContain("Files (1):\n  removed    a.txt");
    expect(undo.code).toBe(0);
    expect(existsSync(path.join(fx.workspace, "a.txt"))).toBe(false);
    expect(readFileSync(path.join(fx.workspace, "kept.txt"), "utf8")).toBe("kept\n");
  });

  test("killed in the middle of an incremental snapshot: the step's result and snapshot are recovered, and undo removes what it made", async () => {
    const command: ScriptStep = { toolCalls: [{ name: "execute_command", args: { command: "echo made > b.txt" } }] };
    fx = await openFixture("sqlite", [command, { content: "ok" }, { content: "again" }]);
    writeFileSync(path.join(fx.workspace, "a.txt"), "kept\n");
    // Snapshots of the command step: the first whole one, the one before the command, the one after it (killed there).
    const r1 = await fx.run(["FIRST"], { MINI_CURSOR_FAULT_POINT: "snapshot@3" });
    expect(r1.signal).toBe("SIGKILL");
    expect(readFileSync(path.join(fx.workspace, "b.txt"), "utf8")).toBe("made\n");
    const thread = bannerThread(r1.stdout);

    const r2 = await fx.run(["--thread", thread, "SECOND"]);
    expect(r2.code).toBe(0);
    // The command had ended (its result was in the journal) when the snapshot after it was killed.
    expect(toolResults(fx.server.requests.at(-1)!.messages)).toEqual(["Exit code: 0\n(no output)"]);
    expect(r2.stdout).toContain("1 finished (result recovered)");

    // Undo the second turn (no files), then the interrupted one: b.txt goes, a.txt stays.
    expect((await fx.run(["--thread", thread, "--undo"])).code).toBe(0);
    const undo = await fx.run(["--thread", thread, "--undo"]);
    expect(undo.code).toBe(0);
    expect(undo.stdout).toContain("removed    b.txt");
    expect(existsSync(path.join(fx.workspace, "b.txt"))).toBe(false);
    expect(readFileSync(path.join(fx.workspace, "a.txt"), "utf8")).toBe("kept\n");
  });
});
