import { linkSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, expect, test } from "@jest/globals";
import { sweepLinks } from "../../src/snapshots/watch.js";
import { makeTempDir } from "../helpers/tmp.js";

/** The watcher's hard-link sweep, in its worker thread, on real files and links. */

const DOT_GIT = /^\.git$/i;
let tmp: ReturnType<typeof makeTempDir>;
const ws = (rel: string) => path.join(tmp.dir, "ws", rel);
const outside = (name: string) => path.join(tmp.dir, "outside", name);

beforeEach(() => {
  tmp = makeTempDir();
  for (const dir of ["ws/a", "ws/b", "outside"]) mkdirSync(path.join(tmp.dir, dir), { recursive: true });
  const linked = (rel: string) => {
    writeFileSync(ws(rel), `${rel}\n`);
    linkSync(ws(rel), outside(rel.replaceAll("/", "-")));
  };
  linked("top.txt");
  linked("a/x");
  linked("a/.GIT"); // a nested repository's file: never recorded
  linked("b/not-asked");
  writeFileSync(ws("a/single"), "one link\n");
  symlinkSync("x", ws("a/to-x")); // a symlink to a linked file is not one
  linkSync(ws("a/x"), ws("a/x-again")); // both names in the workspace
});
afterEach(() => tmp.cleanup());

test("finds the regular files with more than one link in the folders given, and only there", async () => {
  const { found, over } = await sweepLinks(ws(""), ["", "a", "gone"], 10, DOT_GIT).result;
  expect({ found: [...found].sort(), over }).toEqual({ found: ["a/x", "a/x-again", "top.txt"], over: false });
});

test("stops past its limit and says so", async () => {
  const { found, over } = await sweepLinks(ws(""), ["a"], 1, DOT_GIT).result;
  expect({ found: found.length, over }).toEqual({ found: 2, over: true });
});

test("a sweep stopped before it answers rejects", async () => {
  const sweep = sweepLinks(ws(""), ["", "a", "b"], 10, DOT_GIT);
  sweep.stop();
  await expect(sweep.result).rejects.toThrow("stopped");
});
