import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "@jest/globals";
import { snapshotGitDir, snapshotStore } from "../../src/snapshots/store.js";
import { baseEnv, collect, runCli, startCli } from "../helpers/cli.js";
import { createTestDatabase, POSTGRES_URL, type TestDatabase } from "../helpers/postgres.js";
import { makeTempDir, waitFor } from "../helpers/tmp.js";

/**
 * Issue 26 items 4 and 5, issue 31 item 3: snapshots never silently stop, and undo belongs to
 * the turn. A lock left by a git that was SIGKILLed is recovered (one a live git holds is
 * waited for); two CLIs snapshot one workspace at once, each with its own index; each thread's
 * undo restores only its own files; a thread whose snapshots are on another machine says so.
 */

let tmp: ReturnType<typeof makeTempDir>;
beforeEach(() => {
  tmp = makeTempDir();
});
afterEach(() => tmp.cleanup());

/**
 * A real git holding the snapshot branch's lock: `update-ref --stdin` with a prepared
 * transaction keeps `refs/heads/snapshots.lock` until it is told to commit, or dies.
 */
async function gitHoldingTheRefLock(workspace: string, commit: string) {
  const dir = snapshotGitDir(workspace);
  const child = spawn("git", ["update-ref", "--stdin"], {
    env: { PATH: process.env.PATH, GIT_DIR: dir, GIT_CONFIG_NOSYSTEM: "1", HOME: tmp.dir },
    stdio: ["pipe", "ignore", "ignore"],
  });
  child.stdin.write(`start\nupdate refs/heads/snapshots ${commit}\nprepare\n`);
  const lock = path.join(dir, "refs", "heads", "snapshots.lock");
  await waitFor(() => existsSync(lock), 30_000);
  return { child, lock };
}

test("a lock left by a SIGKILLed git is removed, and the next snapshot works", async () => {
  writeFileSync(path.join(tmp.dir, "a.txt"), "1\n");
  const first = await snapshotStore(tmp.dir).take();
  const { child, lock } = await gitHoldingTheRefLock(tmp.dir, first);
  child.kill("SIGKILL");
  await new Promise((r) => child.once("exit", r));
  expect(existsSync(lock)).toBe(true);

  writeFileSync(path.join(tmp.dir, "a.txt"), "2\n");
  const second = await snapshotStore(tmp.dir).take();
  expect(second).not.toBe(first);
  expect(existsSync(lock)).toBe(false);
  expect((await snapshotStore(tmp.dir).changes(first, second)).map((c) => c.path)).toEqual(["a.txt"]);
}, 60_000);

test("a lock a live git holds is waited for, and taken over once its holder dies", async () => {
  writeFileSync(path.join(tmp.dir, "a.txt"), "1\n");
  const first = await snapshotStore(tmp.dir).take();
  const { child, lock } = await gitHoldingTheRefLock(tmp.dir, first);
  writeFileSync(path.join(tmp.dir, "a.txt"), "2\n");
  let settled = false;
  const taking = snapshotStore(tmp.dir)
    .take()
    .finally(() => {
      settled = true;
    });
  // The holder is alive: the snapshot waits rather than removing its lock.
  await waitFor(() => readFileSync(`/proc/${child.pid}/stat`, "utf8").length > 0);
  expect(existsSync(lock)).toBe(true);
  expect(settled).toBe(false);
  child.kill("SIGKILL");
  const second = await taking;
  expect(second).not.toBe(first);
  expect(existsSync(lock)).toBe(false);
}, 60_000);

test("stale locks and a dead process's index in the store do not stop a CLI's snapshots or its undo", async () => {
  const r1 = await runCli(["--workspace", tmp.dir, "--thread", "t1", "create a file a.txt with content A"]);
  expect(r1.code).toBe(0);
  const dir = snapshotGitDir(tmp.dir);
  // What killed processes leave: the shared index's lock, a dead CLI's own index and its lock, a ref lock.
  writeFileSync(path.join(dir, "index.lock"), "");
  writeFileSync(path.join(dir, "index-999999-deadbeef"), "garbage");
  writeFileSync(path.join(dir, "index-999999-deadbeef.lock"), "");
  mkdirSync(path.join(dir, "refs", "heads"), { recursive: true });
  writeFileSync(path.join(dir, "refs", "heads", "snapshots.lock"), "");

  const r2 = await runCli(["--workspace", tmp.dir, "--thread", "t1", "--json", "create a file b.txt with content B"]);
  expect(r2.code).toBe(0);
  const notices = r2.stdout
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { type: string; message?: string })
    .filter((e) => e.type === "notice");
  expect(notices).toEqual([]);
  expect(readdirSync(dir).filter((n) => n.includes("999999") || n.endsWith(".lock"))).toEqual([]);
  expect(existsSync(path.join(dir, "refs", "heads", "snapshots.lock"))).toBe(false);

  const undo = await runCli(["--workspace", tmp.dir, "--thread", "t1", "--undo"]);
  expect(undo.stdout).toContain("removed    b.txt");
  expect(undo.code).toBe(0);
  expect(existsSync(path.join(tmp.dir, "b.txt"))).toBe(false);
  expect(readFileSync(path.join(tmp.dir, "a.txt"), "utf8")).toBe("A");
}, 240_000);

test("two CLIs write files in one workspace at once; each thread's undo restores only its own", async () => {
  const files = ["a", "b", "c", "d"];
  const runs = files.map((name) =>
    collect(
      startCli([
        "--workspace",
        tmp.dir,
        "--thread",
        `t-${name}`,
        "--json",
        `create a file ${name}.txt with content ${name}`,
      ]),
      180_000,
    ),
  );
  const results = await Promise.all(runs);
  for (const r of results) {
    expect(r.code).toBe(0);
    expect(r.stdout).not.toContain('"type":"notice"');
  }
  expect(readdirSync(tmp.dir).sort()).toEqual(["a.txt", "b.txt", "c.txt", "d.txt"]);

  const undoB = await runCli(["--workspace", tmp.dir, "--thread", "t-b", "--undo"]);
  expect([undoB.code, undoB.stdout.trim(), undoB.stderr]).toEqual([
    0,
    "Undid turn 1: create a file b.txt with content b\nFiles (1):\n  removed    b.txt",
    "",
  ]);
  expect(readdirSync(tmp.dir).sort()).toEqual(["a.txt", "c.txt", "d.txt"]);

  // A file of thread d changed by hand since: named, and kept unless --force.
  writeFileSync(path.join(tmp.dir, "d.txt"), "by hand");
  const undoD = await runCli(["--workspace", tmp.dir, "--thread", "t-d", "--undo"]);
  expect(undoD.code).toBe(1);
  expect(undoD.stdout).toContain(
    "These files were changed since turn 1 (by hand or by another thread); undoing it would overwrite those changes:\n  d.txt\nNothing was changed. To overwrite them, run the same command with --force.",
  );
  expect(readFileSync(path.join(tmp.dir, "d.txt"), "utf8")).toBe("by hand");
  const forced = await runCli(["--workspace", tmp.dir, "--thread", "t-d", "--undo", "--force"]);
  expect(forced.code).toBe(0);
  expect(readdirSync(tmp.dir).sort()).toEqual(["a.txt", "c.txt"]);
}, 300_000);

describe("undo when the snapshots are not here", () => {
  let db: TestDatabase | undefined;
  afterEach(async () => {
    await db?.drop();
    db = undefined;
  });

  (POSTGRES_URL ? test : test.skip)(
    "a PostgreSQL thread undone on a machine without its snapshots says so in one sentence and exits 1",
    async () => {
      db = await createTestDatabase();
      const machineA = baseEnv({ MINI_CURSOR_CHECKPOINTER: db.url, MINI_CURSOR_STATE_HOME: path.join(tmp.dir, "a") });
      const machineB = baseEnv({ MINI_CURSOR_CHECKPOINTER: db.url, MINI_CURSOR_STATE_HOME: path.join(tmp.dir, "b") });
      const ws = path.join(tmp.dir, "ws");
      mkdirSync(ws);
      const made = await runCli(["--workspace", ws, "--thread", "shared", "create a file n.txt with content N"], {
        env: machineA,
      });
      expect(made.code).toBe(0);
      const undo = await runCli(["--workspace", ws, "--thread", "shared", "--undo"], { env: machineB });
      expect(undo.code).toBe(1);
      expect(undo.stderr).toBe("");
      expect(undo.stdout.trim()).toBe(
        `The files of turn 1 were recorded in another state folder (another machine, or one since removed), not in ${path.join(tmp.dir, "b", "workspaces", path.basename(path.dirname(snapshotGitDir(ws))), "snapshots")}, so they cannot be brought back here; nothing was changed.`,
      );
      expect(readFileSync(path.join(ws, "n.txt"), "utf8")).toBe("N");
    },
    180_000,
  );
});
