import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { refuseLinks } from "../../src/snapshots/git.js";
import { makeTempDir } from "../helpers/tmp.js";

/**
 * The snapshot store's own folders hold no symlink git could write through: one is refused,
 * down to the loose objects' folders (the objects in them are not looked at one by one: that
 * cost, an lstat per object on every start, is the bench's).
 */

let tmp: ReturnType<typeof makeTempDir>;
beforeEach(() => {
  tmp = makeTempDir();
  for (const dir of ["store/objects/ab", "store/objects/pack", "store/refs/heads", "elsewhere"])
    mkdirSync(path.join(tmp.dir, dir), { recursive: true });
  writeFileSync(path.join(tmp.dir, "store/HEAD"), "ref: refs/heads/snapshots\n");
  writeFileSync(path.join(tmp.dir, "elsewhere/object"), "x");
});
afterEach(() => tmp.cleanup());

const store = () => path.join(tmp.dir, "store");

test("a store without symlinks passes", () => {
  expect(() => refuseLinks(store(), 3)).not.toThrow();
});

test("a loose objects' folder that is a symlink is refused", () => {
  symlinkSync(path.join(tmp.dir, "elsewhere"), path.join(store(), "objects/cd"));
  expect(() => refuseLinks(store(), 3)).toThrow(
    `the snapshot store ${path.join(store(), "objects")} holds a symlink (${path.join(store(), "objects/cd")} -> ${path.join(tmp.dir, "elsewhere")}); it is not followed. Remove it to use snapshots again`,
  );
});

test("a symlinked ref is refused", () => {
  symlinkSync(path.join(tmp.dir, "elsewhere/object"), path.join(store(), "refs/heads/snapshots"));
  expect(() => refuseLinks(store(), 3)).toThrow(/holds a symlink/);
});
