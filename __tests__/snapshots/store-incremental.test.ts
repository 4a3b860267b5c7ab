import { type ChildProcess, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import path from "node:path";
import { expect, test } from "@jest/globals";
import { finishSnapshots } from "../../src/agent/snapshot-step.js";
import { MAX_SNAPSHOT_FILE_BYTES, snapshotGitDir, snapshotStore } from "../../src/snapshots/store.js";
import { QUIET_WAITS_MS } from "../helpers/cli.js";
import { holdRef, holdSnapshotBranch } from "../helpers/snapshot-lock.js";
import { putIn, statusOf, storeHolds, useSnapshotWorkspace } from "../helpers/snapshot-workspace.js";
import { waitFor } from "../helpers/tmp.js";

/**
 * Issue 30, goal 3: snapshots cost what the step changed. A whole snapshot finds what changed
 * through git's stat cache and untracked cache and hashes only that; files over the size limit
 * and ignored files are never hashed; the first snapshot runs in the background, and a step of
 * file tools taken meanwhile is recorded exactly all the same.
 */

let dir: string;
let ws: string;
useSnapshotWorkspace((made) => ({ dir, ws } = made));

const put = (rel: string, text: string | Buffer) => putIn(ws, rel, text);
const read = (rel: string) => readFileSync(path.join(ws, rel), "utf8");

test("whole snapshots over several steps record edits, creations, deletions and renames, and each restores exactly", async () => {
  put("a.txt", "a1\n");
  put("src/b.ts", "b1\n");
  put("src/c.ts", "c1\n");
  put("old/name.txt", "moved\n");
  const store = snapshotStore(ws);
  const s0 = await store.take();
  expect(await store.take()).toBe(s0); // nothing changed: the same snapshot, no new commit

  put("a.txt", "a2\n");
  put("src/new.ts", "new\n");
  rmSync(path.join(ws, "src/c.ts"));
  mkdirSync(path.join(ws, "renamed"));
  renameSync(path.join(ws, "old/name.txt"), path.join(ws, "renamed/name.txt"));
  const s1 = await store.take();
  expect(statusOf(await store.changes(s0, s1))).toEqual([
    ["M", "a.txt"],
    ["D", "old/name.txt"],
    ["A", "renamed/name.txt"],
    ["D", "src/c.ts"],
    ["A", "src/new.ts"],
  ]);

  put("src/b.ts", "b2\n");
  rmSync(path.join(ws, "src/new.ts"));
  put("src/deep/er/file.ts", "deep\n");
  const s2 = await store.take();
  expect(statusOf(await store.changes(s1, s2))).toEqual([
    ["M", "src/b.ts"],
    ["A", "src/deep/er/file.ts"],
    ["D", "src/new.ts"],
  ]);

  // Back to s0, path by path, as undo does: everything as it was, and nothing else touched.
  const back = (await store.changes(s2, s0)).map((c) => c.path);
  await store.restore(s0, back);
  expect(read("a.txt")).toBe("a1\n");
  expect(read("src/b.ts")).toBe("b1\n");
  expect(read("src/c.ts")).toBe("c1\n");
  expect(read("old/name.txt")).toBe("moved\n");
  expect(existsSync(path.join(ws, "renamed"))).toBe(false);
  expect(existsSync(path.join(ws, "src/new.ts"))).toBe(false);
  expect(existsSync(path.join(ws, "src/deep"))).toBe(false);
  // The next whole snapshot after a restore is the restored tree (the index moved with the files).
  const s3 = await store.take();
  expect(await store.changes(s0, s3)).toEqual([]);
});

test("files over the size limit and ignored files are never hashed into the store", async () => {
  const big = Buffer.alloc(MAX_SNAPSHOT_FILE_BYTES + 1, "b");
  const ignored = "module.exports = 'ignored-unique-7f3a';\n";
  put(".gitignore", "node_modules/\n*.log\n");
  put("node_modules/dep/index.js", ignored);
  put("big.bin", big);
  put("small.txt", "small\n");
  put("grows.txt", "small for now\n");
  const store = snapshotStore(ws);
  const s0 = await store.take();
  expect(storeHolds(ws, "small\n")).toBe(true);
  expect(storeHolds(ws, ignored)).toBe(false);
  expect(storeHolds(ws, big)).toBe(false);
  expect(store.oversized()).toEqual(["big.bin"]);

  // A file that grows past the limit leaves the snapshot; its new bytes are not hashed.
  const grown = Buffer.alloc(MAX_SNAPSHOT_FILE_BYTES + 2, "g");
  put("grows.txt", grown);
  const s1 = await store.take();
  expect(statusOf(await store.changes(s0, s1))).toEqual([["D", "grows.txt"]]);
  expect(storeHolds(ws, grown)).toBe(false);
  expect(store.oversized(["grows.txt", "small.txt"])).toEqual(["grows.txt"]);

  // Named by a file tool, neither is hashed either.
  const edited = Buffer.alloc(MAX_SNAPSHOT_FILE_BYTES + 3, "e");
  put("big.bin", edited);
  put("node_modules/dep/index.js", `${ignored}// edited\n`);
  await store.take(["big.bin", "node_modules/dep/index.js"]);
  expect(storeHolds(ws, edited)).toBe(false);
  expect(storeHolds(ws, `${ignored}// edited\n`)).toBe(false);

  // A tracked file a new .gitignore rule covers is dropped, and its later bytes are not hashed.
  put("app.log", "log 1\n");
  const s2 = await store.take();
  expect(storeHolds(ws, "log 1\n")).toBe(false);
  put("notes.tmp", "tmp 1\n");
  const s3 = await store.take();
  expect(statusOf(await store.changes(s2, s3))).toEqual([["A", "notes.tmp"]]);
  put(".gitignore", "node_modules/\n*.log\n*.tmp\n");
  put("notes.tmp", "tmp 2\n");
  const s4 = await store.take();
  expect(statusOf(await store.changes(s3, s4))).toEqual([
    ["M", ".gitignore"],
    ["D", "notes.tmp"],
  ]);
  expect(storeHolds(ws, "tmp 2\n")).toBe(false);
}, 60_000);

test("while the first snapshot runs, a take of declared paths does not wait for it, and names a whole snapshot once it ends", async () => {
  put("a.txt", "a before\n");
  put("b.txt", "b before\n");
  const holder = await holdSnapshotBranch(snapshotGitDir(ws), dir);
  const store = snapshotStore(ws);
  let before = "";
  let after = "";
  try {
    store.startFirst();
    before = await store.take(["a.txt", "created.txt"]);
    expect(before).toMatch(/^refs\/pending\//);
    put("a.txt", "a after\n");
    put("created.txt", "created\n");
    put("b.txt", "b changed by someone else\n");
    after = await store.take(["a.txt", "created.txt"]);
    // The step's own changes are known at once, from its blobs; the first snapshot is still held.
    expect(statusOf(await store.changes(before, after))).toEqual([
      ["M", "a.txt"],
      ["A", "created.txt"],
    ]);
    expect(await store.firstReady(0)).toBe(false);
  } finally {
    holder.kill("SIGKILL");
  }
  expect(await store.firstReady(60_000)).toBe(true);
  // Both ids now name whole snapshots: the step's paths as it found them, the rest as the first snapshot did.
  expect(await store.has(before)).toBe(true);
  expect(statusOf(await store.changes(before, after))).toEqual([
    ["M", "a.txt"],
    ["A", "created.txt"],
  ]);
  await store.restore(before, ["a.txt", "created.txt"]);
  expect(read("a.txt")).toBe("a before\n");
  expect(existsSync(path.join(ws, "created.txt"))).toBe(false);
  expect(read("b.txt")).toBe("b changed by someone else\n");
  const now = await store.take();
  // (b.txt may be in either, as the first snapshot found it when it read it.)
  expect(statusOf(await store.changes(after, now, ["a.txt", "created.txt"]))).toEqual([
    ["M", "a.txt"],
    ["D", "created.txt"],
  ]);
}, 90_000);

/**
 * A first snapshot whose end waits on a ref a live git holds (the settling of a pending
 * snapshot's ref, or the thread's log): the log of thread t1, as it is the moment
 * finishSnapshots lets the process go (the CLI exits then, and its exit stops any git still
 * running); then the ref's holder is killed and the store is checked.
 */
async function threadLogWhenLetGo(
  held: (ids: { before: string; logRef: string }) => string,
  reached: (git: (...args: string[]) => string, after: string) => boolean,
): Promise<void> {
  put("a.txt", "a before\n");
  const gitDir = snapshotGitDir(ws);
  const git = (...args: string[]) =>
    spawnSync("git", args, {
      env: { PATH: process.env.PATH, GIT_DIR: gitDir, GIT_CONFIG_NOSYSTEM: "1", HOME: dir },
      input: "",
    })
      .stdout.toString()
      .trim();
  const thread = "t1";
  const logRef = `refs/thread-logs/${Buffer.from(thread).toString("hex")}`;
  const holder = await holdSnapshotBranch(gitDir, dir);
  const store = snapshotStore(ws);
  let refHolder: ChildProcess | undefined;
  let before = "";
  let after = "";
  try {
    store.startFirst();
    before = await store.take(["a.txt"]);
    put("a.txt", "a after\n");
    after = await store.take(["a.txt"]);
    expect(after).toMatch(/^refs\/pending\//);
    await store.setThreadSnapshot(thread, after, ["a.txt"]);
    refHolder = await holdRef(gitDir, held({ before, logRef }), git("hash-object", "-w", "--stdin"), dir);
    // Let go cleanly: a lock a killed git left is taken over only once no live git works on the store.
    holder.stdin!.end("abort\n");
    await waitFor(() => reached(git, after), 60_000);
    // Read as soon as finishSnapshots returns, before any git of the store can end.
    const finished = finishSnapshots(ws, () => undefined, QUIET_WAITS_MS).then(() => git("cat-file", "blob", logRef));
    refHolder.kill("SIGKILL");
    expect(await finished).toBe(JSON.stringify([{ at: after, paths: ["a.txt"] }]));
  } finally {
    holder.kill("SIGKILL");
    refHolder?.kill("SIGKILL");
  }
  expect(store.hasPending()).toBe(false);
  expect(await store.threadSnapshot(thread)).toBe(after);
  expect(await store.threadChangesSince(thread, after)).toEqual([]);
  expect(statusOf(await store.changes(before, after))).toEqual([["M", "a.txt"]]);
}

// A process let go early left its thread's ref moved and its log not (or neither), and the
// thread's next run took its own last checkpoint for time travel it could not follow ("does not
// go back to this checkpoint"): snapshot-faults' stale-locks test, once, on a loaded machine.
test("a process that ends waits until the snapshots taken during the first one are whole, not only the first", async () => {
  // The first snapshot is taken (its index handed on as the shared one); the refs of the
  // snapshots taken meanwhile are not made yet.
  await threadLogWhenLetGo(
    ({ before }) => before,
    () => existsSync(path.join(snapshotGitDir(ws), "index")),
  );
}, 90_000);

test("a process that ends waits until the thread's move to a snapshot taken during the first one is recorded", async () => {
  // The pending snapshots' refs are made; the thread's move waits for its log, and its ref moves
  // with it (one transaction), not before.
  await threadLogWhenLetGo(
    ({ logRef }) => logRef,
    (git, after) => {
      if (git("rev-parse", "--verify", "--quiet", after) === "") return false;
      expect(git("for-each-ref", `refs/threads/${Buffer.from("t1").toString("hex")}`)).toBe("");
      return true;
    },
  );
}, 90_000);
