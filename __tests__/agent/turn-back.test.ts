import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, expect, test } from "@jest/globals";
import { planTurnBack } from "../../src/agent/turn-back.js";
import { snapshotStore } from "../../src/snapshots/store.js";
import { makeTempDir } from "../helpers/tmp.js";

/**
 * Undo never deletes what it did not make: where a file it puts back goes, a folder that holds
 * anyone else's files (ignored ones too) is a conflict, kept and named, and so is someone's file
 * where a folder it needs goes. git's checkout of a file over a folder deletes the whole folder.
 */

let tmp: ReturnType<typeof makeTempDir>;
beforeEach(() => {
  tmp = makeTempDir();
});
afterEach(() => tmp.cleanup());
const put = (rel: string, text: string) => {
  mkdirSync(path.dirname(path.join(tmp.dir, rel)), { recursive: true });
  writeFileSync(path.join(tmp.dir, rel), text);
};

/** A turn that replaced the file `notes` with a folder `notes/` holding plan.md. */
async function folderInPlaceOfFile() {
  put(".gitignore", "*.local\n");
  put("notes", "my notes\n");
  const store = snapshotStore(tmp.dir);
  const before = await store.take();
  rmSync(path.join(tmp.dir, "notes"));
  put("notes/plan.md", "plan\n");
  const after = await store.take();
  return { store, before, after };
}

test("a folder the turn made in a file's place holds only its files: undo puts the file back", async () => {
  const { store, before, after } = await folderInPlaceOfFile();
  const plan = await planTurnBack(store, after, before, undefined);
  expect([plan.restore.map((c) => [c.status, c.path]), plan.conflicts]).toEqual([
    [
      ["A", "notes"],
      ["D", "notes/plan.md"],
    ],
    [],
  ]);
  await store.restore(before, ["notes", "notes/plan.md"]);
  expect(readFileSync(path.join(tmp.dir, "notes"), "utf8")).toBe("my notes\n");
});

test.each([
  ["a file added since", "notes/mine.md"],
  ["an ignored file", "notes/deep/key.local"],
])("%s in that folder makes its place a conflict, and the folder stays", async (_what, rel) => {
  const { store, before, after } = await folderInPlaceOfFile();
  put(rel, "the person's\n");
  const plan = await planTurnBack(store, after, before, undefined);
  expect(plan.conflicts).toEqual(["notes"]);
  // Undo restores what is not in conflict, as app/undo.ts does without --force.
  await store.restore(
    before,
    plan.restore.map((c) => c.path).filter((p) => !plan.conflicts.includes(p)),
  );
  expect(readFileSync(path.join(tmp.dir, rel), "utf8")).toBe("the person's\n");
  expect(readdirSync(path.join(tmp.dir, "notes")).sort()).toEqual(rel === "notes/mine.md" ? ["mine.md"] : ["deep"]);
});

test("someone's file where a folder the undo needs goes is a conflict", async () => {
  put("dir/a.txt", "a\n");
  const store = snapshotStore(tmp.dir);
  const before = await store.take();
  rmSync(path.join(tmp.dir, "dir"), { recursive: true });
  const after = await store.take();
  put("dir", "the person's file\n");
  const plan = await planTurnBack(store, after, before, ["dir/a.txt"]);
  expect([plan.restore.map((c) => [c.status, c.path]), plan.conflicts]).toEqual([[["A", "dir/a.txt"]], ["dir/a.txt"]]);
});

test("a restore forced past a link where a folder was writes nothing through it, and says which paths it left", async () => {
  put("dir/a.txt", "a\n");
  const store = snapshotStore(tmp.dir);
  const before = await store.take();
  rmSync(path.join(tmp.dir, "dir"), { recursive: true });
  mkdirSync(path.join(tmp.dir, "elsewhere"));
  symlinkSync(path.join(tmp.dir, "elsewhere"), path.join(tmp.dir, "dir"));
  expect(await store.restore(before, ["dir/a.txt"])).toEqual(["dir/a.txt"]);
  expect(existsSync(path.join(tmp.dir, "elsewhere", "a.txt"))).toBe(false);
});
