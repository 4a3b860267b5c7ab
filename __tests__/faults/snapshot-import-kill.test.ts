import { afterEach, describe, expect, jest, test } from "@jest/globals";
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { liveGitProcesses } from "../../src/snapshots/git.js";
import type { ScriptStep } from "../helpers/openai-server.js";
import { waitFor } from "../helpers/tmp.js";
import {
  bannerThread,
  killedResult,
  openFixture,
  toolResults,
  waitOnRun,
  type Fixture,
  type Started,
} from "./harness.js";

/**
 * Issue 30, goal 3, as a state promise: a file step's snapshot is one `git fast-import` into the
 * private store (snapshots/read.ts, through fast-import). Killed at its named points (this process mid-import,
 * or after the import moved the branch), or with the fast-import child itself killed mid-import,
 * the next conversation gets the step's real result, its snapshot equals a full scan of the
 * workspace, undo of the turn puts its files back, and the store keeps no crash report, temporary
 * pack or lock, and a branch git can read whole.
 */

jest.setTimeout(240_000);

/** A command step first: it waits for the first whole snapshot, so the write step after it takes the direct way (not the pending one). */
const COMMAND: ScriptStep = { toolCalls: [{ name: "execute_command", args: { command: "echo made > b.txt" } }] };
const READ: ScriptStep = { toolCalls: [{ name: "read_file", args: { filePath: "a.txt" } }] };
const WRITE: ScriptStep = { toolCalls: [{ name: "write_file", args: { filePath: "a.txt", content: "two\n" } }] };
const WRITE_RESULT = "Replaced a.txt (1 line, 4 bytes).";

describe("SIGKILL inside a file step's fast-import snapshot: the next conversation", () => {
  let fx: Fixture | undefined;
  let run: Started | undefined;
  afterEach(async () => {
    // A run stopped at a point and left so by a failed assertion: its whole group goes.
    if (run) killGroup(run.pid);
    run = undefined;
    await fx?.close();
    fx = undefined;
  });

  const store = () => path.join(fx!.stateFolder, "snapshots");

  function storeGit(args: string[]): string {
    const env = { PATH: process.env.PATH, GIT_DIR: store(), GIT_CONFIG_NOSYSTEM: "1", HOME: fx!.workspace };
    const r = spawnSync("git", args, { env });
    if (r.status !== 0) throw new Error(`git ${args.join(" ")}: ${r.stderr.toString()}`);
    return r.stdout.toString();
  }

  /** The tree a full scan of the workspace makes (a throwaway repository: a tree's id is its content). */
  function fullScanTree(): string {
    const dir = path.join(path.dirname(fx!.workspace), "full-scan.git");
    const env = { PATH: process.env.PATH, GIT_DIR: dir, GIT_WORK_TREE: fx!.workspace, GIT_CONFIG_NOSYSTEM: "1" };
    expect(spawnSync("git", ["init", "--quiet"], { env }).status).toBe(0);
    expect(spawnSync("git", ["add", "-A"], { env }).status).toBe(0);
    return spawnSync("git", ["write-tree"], { env }).stdout.toString().trim();
  }

  /** The results of the command and the write, as the model was sent them last. */
  const lastResults = () => {
    const results = toolResults(fx!.server.requests.at(-1)!.messages);
    return [results[0], results.at(-1)];
  };

  /** Crash reports, temporary packs and locks in the store. */
  function leftovers(): string[] {
    const found: string[] = [];
    const walk = (dir: string) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const rel = path.relative(store(), path.join(dir, entry.name));
        if (entry.isDirectory()) walk(path.join(dir, entry.name));
        else if (/^fast_import_crash_|^tmp_|\.lock$/.test(entry.name)) found.push(rel);
      }
    };
    walk(store());
    return found;
  }

  /** Run 1 ("FIRST"): a command step, a read, then the write step whose snapshot after it is killed as `point` says. */
  async function startKilledRun(point: string): Promise<Started> {
    fx = await openFixture("sqlite", [COMMAND, READ, WRITE, { content: "ok" }, { content: "again" }]);
    writeFileSync(path.join(fx.workspace, "a.txt"), "zero\n");
    // The command step waits for the first snapshot as long as a busy machine needs, so the write
    // takes the direct way; it scans (no watcher), so the write's is the run's one import.
    run = fx.start(["FIRST"], {
      MINI_CURSOR_FAULT_POINT: point,
      MINI_CURSOR_SNAPSHOT_WAIT_MS: "120000",
      MINI_CURSOR_SNAPSHOT_WATCH: "off",
    });
    return run;
  }

  /** The next conversation gets the write's result, the store is whole, and undo of FIRST puts the files back. */
  async function expectNextConversation(thread: string) {
    const r2 = await fx!.run(["--thread", thread, "SECOND"]);
    expect(r2.stderr).toBe("");
    expect(r2.code).toBe(0);
    expect(r2.stdout).toContain("1 finished (result recovered)");
    expect(lastResults()).toEqual(["Exit code: 0\n(no output)", WRITE_RESULT]);
    // Its snapshot of the workspace is what a full scan makes, on a branch git reads whole.
    expect(storeGit(["rev-parse", "refs/heads/snapshots^{tree}"]).trim()).toBe(fullScanTree());
    storeGit(["fsck", "--no-dangling", "--no-progress"]);
    expect(leftovers()).toEqual([]);
    await expectUndoOfFirst(thread, 2);
  }

  async function expectUndoOfFirst(thread: string, turns: number) {
    for (let i = 1; i < turns; i++) {
      const later = await fx!.run(["--thread", thread, "--undo"]);
      expect([later.code, later.stdout, later.stderr]).toEqual([0, expect.stringContaining("Undid turn"), ""]);
    }
    const undo = await fx!.run(["--thread", thread, "--undo"]);
    expect([undo.code, undo.stdout, undo.stderr]).toEqual([
      0,
      expect.stringContaining("Files (2):\n  restored   a.txt (+1 -1)\n  removed    b.txt"),
      "",
    ]);
    expect(readFileSync(path.join(fx!.workspace, "a.txt"), "utf8")).toBe("zero\n");
    expect(existsSync(path.join(fx!.workspace, "b.txt"))).toBe(false);
    expect(leftovers()).toEqual([]);
  }

  test("killed while fast-import had its stream but not its end: the import moved nothing, and what it left goes", async () => {
    const r1 = await killedResult(await startKilledRun("snapshot-import"));
    expect(readFileSync(path.join(fx!.workspace, "a.txt"), "utf8")).toBe("two\n");
    // The orphaned fast-import moves no ref. It leaves a crash report when the stream's end is what
    // it meets first, or its unfinished pack when an answer it writes to its gone reader kills it (SIGPIPE).
    await waitFor(() => liveGitProcesses(store())?.length === 0, 30_000);
    run = undefined;
    expect(leftovers()).toEqual([expect.stringMatching(/^(fast_import_crash_\d+|objects\/pack\/tmp_pack_\w+)$/)]);
    expect(storeGit(["cat-file", "blob", "refs/heads/snapshots:a.txt"])).toBe("zero\n");
    await expectNextConversation(bannerThread(r1.stdout));
  });

  test("killed after fast-import moved the branch, before the step recorded its snapshot", async () => {
    const r1 = await killedResult(await startKilledRun("snapshot-imported"));
    run = undefined;
    expect(storeGit(["cat-file", "blob", "refs/heads/snapshots:a.txt"])).toBe("two\n");
    await expectNextConversation(bannerThread(r1.stdout));
  });

  test("the fast-import child killed mid-import: the step is snapshotted through the index, and its temporary pack goes", async () => {
    const started = await startKilledRun("snapshot-import:stop");
    await waitOnRun(started, () => procState(started.pid) === "T");
    const imports = (liveGitProcesses(store()) ?? []).filter((pid) => cmdline(pid).includes("fast-import"));
    expect(imports).toHaveLength(1);
    process.kill(imports[0]!, "SIGKILL");
    await waitFor(() => ["Z", undefined].includes(procState(imports[0]!)), 30_000);
    process.kill(started.pid, "SIGCONT");
    const r1 = await started.done;
    run = undefined;
    expect(r1.stderr).toBe("");
    expect(r1.code).toBe(0);
    expect(r1.stdout).not.toContain("snapshot");
    expect(lastResults()).toEqual(["Exit code: 0\n(no output)", WRITE_RESULT]);
    expect(storeGit(["rev-parse", "refs/heads/snapshots^{tree}"]).trim()).toBe(fullScanTree());
    // Killed, it wrote no crash report; its unfinished pack stays until the next process opens the store.
    expect(leftovers()).toEqual([expect.stringMatching(/^objects\/pack\/tmp_pack_\w+$/)]);
    await expectUndoOfFirst(bannerThread(r1.stdout), 1);
    storeGit(["fsck", "--no-dangling", "--no-progress"]);
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

function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ");
  } catch {
    return "";
  }
}

function killGroup(pid: number): void {
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    // gone
  }
}
