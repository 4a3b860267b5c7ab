import { spawnSync } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, expect, test } from "@jest/globals";
import { IgnoreVerdicts } from "../../src/workspace/ignore-verdicts.js";
import { ignoredOf } from "../../src/workspace/snapshot-direct.js";
import type { Git } from "../../src/workspace/snapshot-scan.js";
import { makeTempDir } from "../helpers/tmp.js";

/**
 * git's ignore answers kept between a step's two snapshots: asked again exactly when a rule file
 * on the path's way, the store's exclude file, or the path's kind changed, and always while a
 * rule file is too recent to trust.
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

test("a second question is answered from the first while no rule file moved; each change asks git again", async () => {
  put(".gitignore", "*.log\n");
  put("a.log", "");
  put("src/b.txt", "");
  const verdicts = new IgnoreVerdicts(ws, path.join(gitDir, "info", "exclude"));
  const paths = ["a.log", "src/b.txt"];
  expect(sorted(await ignoredOf(git, paths, verdicts))).toEqual(["a.log"]);
  expect(sorted(await ignoredOf(git, paths, verdicts))).toEqual(["a.log"]);
  expect(asked).toEqual([["./a.log", "./src/b.txt"]]);
  // A .gitignore made in a folder on the way: only that path is asked again.
  put("src/.gitignore", "b.txt\n");
  expect(sorted(await ignoredOf(git, paths, verdicts))).toEqual(["a.log", "src/b.txt"]);
  expect(asked.at(-1)).toEqual(["./src/b.txt"]);
  // The root's rules changed, to as many bytes, at once: both again.
  put(".gitignore", "*.txt\n");
  expect(sorted(await ignoredOf(git, paths, verdicts))).toEqual(["src/b.txt"]);
  expect(asked.at(-1)).toEqual(["./a.log", "./src/b.txt"]);
  // The store's own exclude file.
  put("../store/info/exclude", "/a.log\n");
  expect(sorted(await ignoredOf(git, paths, verdicts))).toEqual(["a.log", "src/b.txt"]);
  expect(asked.at(-1)).toEqual(["./a.log", "./src/b.txt"]);
  // The path's kind: a pattern for folders only.
  put(".gitignore", "c/\n");
  put("c", "a file\n");
  expect(sorted(await ignoredOf(git, ["c"], verdicts))).toEqual([]);
  rmSync(path.join(ws, "c"));
  mkdirSync(path.join(ws, "c"));
  expect(sorted(await ignoredOf(git, ["c"], verdicts))).toEqual(["c"]);
  expect(asked.length).toBe(6);
});

test("a rule file too long to compare is never trusted: git is asked every time", async () => {
  put(".gitignore", `*.log\n${"# padding\n".repeat(7_000)}`);
  put("a.log", "");
  const verdicts = new IgnoreVerdicts(ws, path.join(gitDir, "info", "exclude"));
  for (let i = 0; i < 3; i++) expect(sorted(await ignoredOf(git, ["a.log"], verdicts))).toEqual(["a.log"]);
  expect(asked).toEqual([["./a.log"], ["./a.log"], ["./a.log"]]);
});
