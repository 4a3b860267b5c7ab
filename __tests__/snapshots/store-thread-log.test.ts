import { spawnSync } from "node:child_process";
import { expect, test } from "@jest/globals";
import { snapshotGitDir, snapshotStore } from "../../src/snapshots/store.js";
import { putIn, useSnapshotWorkspace } from "../helpers/snapshot-workspace.js";

/**
 * A thread's moves (setThreadSnapshot): its ref and its log move in one transaction, and a log
 * this process remembers is never written over another writer's newer one.
 */

let dir: string;
let ws: string;
useSnapshotWorkspace((made) => ({ dir, ws } = made));

function storeGit(args: string[], input?: string): string {
  const env = { PATH: process.env.PATH, GIT_DIR: snapshotGitDir(ws), HOME: dir, GIT_CONFIG_NOSYSTEM: "1" };
  const r = spawnSync("git", args, { env, input });
  if (r.status !== 0) throw new Error(`git ${args.join(" ")}: ${r.stderr.toString()}`);
  return r.stdout.toString().trim();
}
const hex = (s: string) => Buffer.from(s, "utf8").toString("hex");

test("each move sets the thread's ref and appends to its log; another writer's entry in between is kept", async () => {
  const store = snapshotStore(ws);
  const snaps: string[] = [];
  for (const text of ["one\n", "two\n", "three\n", "four\n"]) {
    putIn(ws, "a.txt", text);
    snaps.push(await store.take());
  }
  const [s1, s2, s3, s4] = snaps as [string, string, string, string];
  await store.setThreadSnapshot("t", s1, ["a.txt"]);
  await store.setThreadSnapshot("t", s2, ["a.txt"]);
  const logRef = `refs/thread-logs/${hex("t")}`;
  const logOf = () => JSON.parse(storeGit(["cat-file", "blob", logRef])) as Array<{ at: string; paths?: string[] }>;
  expect(logOf()).toEqual([
    { at: s1, paths: ["a.txt"] },
    { at: s2, paths: ["a.txt"] },
  ]);
  expect(storeGit(["rev-parse", `refs/threads/${hex("t")}`])).toBe(s2);
  // Another process moves the same log meanwhile (it adds a move of its own).
  const theirs = storeGit(["hash-object", "-w", "--stdin"], JSON.stringify([...logOf(), { at: s3, paths: ["b.txt"] }]));
  storeGit(["update-ref", logRef, theirs]);
  await store.setThreadSnapshot("t", s4, ["a.txt"]);
  expect(logOf()).toEqual([
    { at: s1, paths: ["a.txt"] },
    { at: s2, paths: ["a.txt"] },
    { at: s3, paths: ["b.txt"] },
    { at: s4, paths: ["a.txt"] },
  ]);
  expect(storeGit(["rev-parse", `refs/threads/${hex("t")}`])).toBe(s4);
  expect(await store.threadChangesSince("t", s2)).toEqual(["a.txt", "b.txt"]);
});
