import { chmodSync, mkdirSync, rmSync, symlinkSync, truncateSync } from "node:fs";
import path from "node:path";
import { expect, test } from "@jest/globals";
import { MAX_SNAPSHOT_FILE_BYTES, snapshotStore } from "../../src/snapshots/store.js";
import { putIn, useSnapshotWorkspace } from "../helpers/snapshot-workspace.js";

/**
 * A step's changes between its two direct takes are answered from what the take itself wrote,
 * without a `git diff-tree`: the answer must be git's own, path for path, status and modes, in
 * git's order. A second store on the same workspace (no remembered takes) asks git.
 */

let ws: string;
useSnapshotWorkspace((made) => ({ ws } = made));

const put = (rel: string, text: string) => putIn(ws, rel, text);

test("what a direct take remembers of its changes is what git's diff-tree says, for every kind of change", async () => {
  for (const rel of ["a/x.txt", "a-b.txt", "b.txt", "run.sh", "link", "gone.txt", "big.bin", "new-dir/f"])
    put(rel, `${rel}\n`);
  symlinkSync("b.txt", path.join(ws, "to-b"));
  const store = snapshotStore(ws);
  await store.take();
  const declared = ["b.txt", "a/x.txt", "a-b.txt", "run.sh", "link", "to-b", "gone.txt", "big.bin"];
  const before = await store.take(declared);
  put("b.txt", "b changed\n");
  put("a/x.txt", "x changed\n");
  put("a-b.txt", "a-b changed\n");
  chmodSync(path.join(ws, "run.sh"), 0o755); // mode only
  rmSync(path.join(ws, "link"));
  symlinkSync("a-b.txt", path.join(ws, "link")); // a file became a link
  rmSync(path.join(ws, "to-b"));
  put("to-b", "a link became a file\n");
  rmSync(path.join(ws, "gone.txt"));
  truncateSync(path.join(ws, "big.bin"), MAX_SNAPSHOT_FILE_BYTES + 1); // over the limit: leaves the snapshot
  const after = await store.take(declared);
  const remembered = await store.changes(before, after, undefined, false);
  const fromGit = await snapshotStore(ws).changes(before, after, undefined, false);
  expect(remembered).toEqual(fromGit);
  expect(remembered.map((c) => `${c.status} ${c.fromMode} ${c.toMode} ${c.path}`)).toEqual([
    "M 100644 100644 a-b.txt",
    "M 100644 100644 a/x.txt",
    "M 100644 100644 b.txt",
    "D 100644 000000 big.bin",
    "D 100644 000000 gone.txt",
    "T 100644 120000 link",
    "M 100644 100755 run.sh",
    "T 120000 100644 to-b",
  ]);
  // Limited to some paths, as git limits them.
  expect(await store.changes(before, after, ["b.txt", "link"], false)).toEqual(
    await snapshotStore(ws).changes(before, after, ["b.txt", "link"], false),
  );
});

test("a take that adds paths is answered by git: a new path may have replaced a file on its way", async () => {
  put("a", "a file first\n");
  const store = snapshotStore(ws);
  await store.take();
  const before = await store.take(["a/b.txt"]);
  rmSync(path.join(ws, "a"));
  mkdirSync(path.join(ws, "a"));
  put("a/b.txt", "now a folder's file\n");
  const after = await store.take(["a/b.txt"]);
  const changes = (await store.changes(before, after, undefined, false)).map((c) => `${c.status} ${c.path}`);
  expect(changes).toEqual(["D a", "A a/b.txt"]);
});
