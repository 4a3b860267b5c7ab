import { spawnSync } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, expect, test } from "@jest/globals";
import { ignoredOf } from "../../src/snapshots/read.js";
import type { Git } from "../../src/snapshots/git.js";
import { makeTempDir } from "../helpers/tmp.js";

/**
 * git's ignore answers for declared paths (check-ignore without the index): what a rule file on
 * the path's way, the store's exclude file and the path's kind decide, asked of git each time.
 */

let tmp: ReturnType<typeof makeTempDir>;
let ws: string;
let gitDir: string;
let asked: string[][];
const put = (rel: string, text: string) => {
  mkdirSync(path.dirname(path.join(ws, rel)), { recursive: true });
  writeFileSync(path.join(ws, rel), text);
};
const git: Git = async (args, input) => {
  asked.push((input as string).split("\0").filter(Boolean));
  const run = spawnSync("git", args, {
    cwd: ws,
    input: input as string,
    env: { PATH: process.env.PATH, GIT_DIR: gitDir, GIT_WORK_TREE: ws, HOME: tmp.dir, GIT_CONFIG_NOSYSTEM: "1" },
  });
  if (run.status !== 0 && run.status !== 1) throw new Error(run.stderr.toString());
  return run.stdout.toString();
};

beforeEach(() => {
  tmp = makeTempDir();
  ws = path.join(tmp.dir, "ws");
  gitDir = path.join(tmp.dir, "store");
  mkdirSync(ws);
  spawnSync("git", ["init", "--quiet", "--bare", gitDir]);
  asked = [];
});
afterEach(() => tmp.cleanup());

const sorted = (set: Set<string>) => [...set].sort();

test("each question is git's answer for the rule files as they are: a change on the path's way, the exclude file, the path's kind", async () => {
  put(".gitignore", "*.log\n");
  put("a.log", "");
  put("src/b.txt", "");
  const paths = ["a.log", "src/b.txt"];
  expect(sorted(await ignoredOf(git, paths))).toEqual(["a.log"]);
  expect(asked).toEqual([["./a.log", "./src/b.txt"]]);
  // A .gitignore made in a folder on the way.
  put("src/.gitignore", "b.txt\n");
  expect(sorted(await ignoredOf(git, paths))).toEqual(["a.log", "src/b.txt"]);
  // The root's rules changed, to as many bytes, at once.
  put(".gitignore", "*.txt\n");
  expect(sorted(await ignoredOf(git, paths))).toEqual(["src/b.txt"]);
  // The store's own exclude file.
  put("../store/info/exclude", "/a.log\n");
  expect(sorted(await ignoredOf(git, paths))).toEqual(["a.log", "src/b.txt"]);
  // The path's kind: a pattern for folders only.
  put(".gitignore", "c/\n");
  put("c", "a file\n");
  expect(sorted(await ignoredOf(git, ["c"]))).toEqual([]);
  rmSync(path.join(ws, "c"));
  mkdirSync(path.join(ws, "c"));
  expect(sorted(await ignoredOf(git, ["c"]))).toEqual(["c"]);
  expect(asked.length).toBe(6);
});

test("a rule file too long to compare is never trusted: git is asked every time", async () => {
  put(".gitignore", `*.log\n${"# padding\n".repeat(7_000)}`);
  put("a.log", "");
  for (let i = 0; i < 3; i++) expect(sorted(await ignoredOf(git, ["a.log"]))).toEqual(["a.log"]);
  expect(asked).toEqual([["./a.log"], ["./a.log"], ["./a.log"]]);
});
