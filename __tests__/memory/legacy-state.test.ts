import { execFileSync } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, expect, test } from "@jest/globals";
import { indexPaths, migrateLegacyState } from "../../src/memory/legacy-state.js";
import { stateFolderName } from "../../src/memory/state-dir.js";
import { baseEnv, runCli } from "../helpers/cli.js";

/**
 * Issue 25 item 1: state an earlier version kept in `<workspace>/.mini-cursor/` moves to the
 * state folder once, with one line, when the folder is evidently one mini-cursor made; a folder
 * that came with the repository, or that someone else made, is never read as state.
 */

let base: string;
let ws: string;
beforeEach(() => {
  base = realpathSync(mkdtempSync(path.join(os.tmpdir(), "mini-cursor-legacy-")));
  ws = path.join(base, "project");
  mkdirSync(ws);
  writeFileSync(path.join(ws, "hello.txt"), "hi\n");
});
afterEach(() => rmSync(base, { recursive: true, force: true }));

const stateIn = (home: string) => path.join(home, "workspaces", stateFolderName(ws));

/** Lays out `<ws>/.mini-cursor/` as earlier versions did, from a real run's state. */
async function legacyFolderFromARealRun(): Promise<void> {
  const oldHome = path.join(base, "old-home");
  const r = await runCli(["--workspace", ws, "--thread", "t-old", "create a file notes.txt with content Hi"], {
    env: baseEnv({ MINI_CURSOR_STATE_HOME: oldHome }),
  });
  expect(r.code).toBe(0);
  const legacy = path.join(ws, ".mini-cursor");
  mkdirSync(legacy);
  writeFileSync(path.join(legacy, ".gitignore"), "*\n");
  for (const item of ["state.sqlite", "threads.json", "snapshots"])
    cpSync(path.join(stateIn(oldHome), item), path.join(legacy, item), { recursive: true });
  rmSync(oldHome, { recursive: true, force: true });
}

test("an earlier version's .mini-cursor/ moves once, with one line; its thread resumes and its turn undoes", async () => {
  await legacyFolderFromARealRun();
  const home = path.join(base, "home");
  const env = baseEnv({ MINI_CURSOR_STATE_HOME: home });
  const listed = await runCli(["--workspace", ws, "--threads", "--json"], { env });
  expect(listed.code).toBe(0);
  const lines = listed.stderr.split("\n").filter(Boolean);
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(
    new RegExp(
      `^mini-cursor: Moved this workspace's threads and snapshots \\(\\d+ files\\) from ${ws}/\\.mini-cursor/ to ${stateIn(home)}; the old copies are no longer read and may be deleted\\.$`,
    ),
  );
  expect((JSON.parse(listed.stdout.trim()) as { id: string }).id).toBe("t-old");
  // Only data came over: the snapshot repository's config and hooks are ours, made fresh.
  expect(readdirSync(path.join(stateIn(home), "snapshots")).sort()).toEqual(
    expect.not.arrayContaining(["hooks", "description"]),
  );

  const undo = await runCli(["--workspace", ws, "--thread", "t-old", "--undo"], { env });
  expect(undo.stderr).toBe("");
  expect(undo.stdout).toContain("removed    notes.txt");
  expect(undo.code).toBe(0);
  expect(existsSync(path.join(ws, "notes.txt"))).toBe(false);
  // The old folder is left as it was, and read no more.
  expect(readFileSync(path.join(ws, ".mini-cursor", ".gitignore"), "utf8")).toBe("*\n");
  const again = await runCli(["--workspace", ws, "--threads"], { env });
  expect(again.stderr).toBe("");
}, 240_000);

test("a folder mini-cursor did not make, or that git tracks, is not read; links in ours are not followed", () => {
  const legacy = path.join(ws, ".mini-cursor");
  mkdirSync(path.join(legacy, "loop-threads"), { recursive: true });
  writeFileSync(path.join(legacy, "threads.json"), '[{"id":"planted"}]');
  const stateDir = path.join(base, "state");
  mkdirSync(stateDir);

  // No .gitignore of `*`: not ours.
  expect(migrateLegacyState(ws, stateDir)).toBe(
    `${legacy}/ is not read as mini-cursor's state (mini-cursor did not make it (it has no .gitignore of \`*\`)); this workspace's state is kept in ${stateDir}.`,
  );
  expect(readdirSync(stateDir)).toEqual(["migrated"]);
  expect(migrateLegacyState(ws, stateDir)).toBeUndefined(); // said once

  // Ours by its .gitignore, but git tracks it (it came with a clone).
  const second = path.join(base, "state2");
  mkdirSync(second);
  writeFileSync(path.join(legacy, ".gitignore"), "*\n");
  execFileSync("git", ["init", "-q"], { cwd: ws });
  execFileSync("git", ["add", "-f", ".mini-cursor/threads.json"], { cwd: ws });
  expect(migrateLegacyState(ws, second)).toBe(
    `${legacy}/ is not read as mini-cursor's state (git tracks files in it, so it came with the repository); this workspace's state is kept in ${second}.`,
  );
  expect(readdirSync(second)).toEqual(["migrated"]);

  // Untracked and ours: copied, but a symlink in it (to a file outside) is not followed.
  execFileSync("git", ["rm", "-q", "--cached", ".mini-cursor/threads.json"], { cwd: ws });
  const secret = path.join(base, "secret.json");
  writeFileSync(secret, '{"secret":true}');
  symlinkSync(secret, path.join(legacy, "loop-threads", "t.json"));
  symlinkSync(secret, path.join(legacy, "state.sqlite"));
  const third = path.join(base, "state3");
  mkdirSync(third);
  expect(migrateLegacyState(ws, third)).toMatch(/^Moved this workspace's threads and snapshots \(1 files\)/);
  expect(readFileSync(path.join(third, "threads.json"), "utf8")).toBe('[{"id":"planted"}]');
  expect(readdirSync(path.join(third, "loop-threads"))).toEqual([]);
  expect(existsSync(path.join(third, "state.sqlite"))).toBe(false);
});

test("a symlinked .mini-cursor, or one another user owns, is not read", () => {
  const elsewhere = path.join(base, "elsewhere");
  mkdirSync(elsewhere);
  writeFileSync(path.join(elsewhere, ".gitignore"), "*\n");
  writeFileSync(path.join(elsewhere, "threads.json"), "[]");
  symlinkSync(elsewhere, path.join(ws, ".mini-cursor"));
  const stateDir = path.join(base, "state");
  mkdirSync(stateDir);
  expect(migrateLegacyState(ws, stateDir)).toBeUndefined();
  expect(readdirSync(stateDir)).toEqual([]);
  if (process.getuid?.() !== 0) return;
  rmSync(path.join(ws, ".mini-cursor"));
  cpSync(elsewhere, path.join(ws, ".mini-cursor"), { recursive: true });
  execFileSync("chown", ["-R", "65534:65534", path.join(ws, ".mini-cursor")]);
  expect(migrateLegacyState(ws, stateDir)).toBe(
    `${ws}/.mini-cursor/ is not read as mini-cursor's state (it belongs to another user); this workspace's state is kept in ${stateDir}.`,
  );
});

test.each([2, 3, 4])("a git index written as version %i is read for the paths it tracks", (version) => {
  execFileSync("git", ["init", "-q"], { cwd: ws });
  mkdirSync(path.join(ws, ".mini-cursor"));
  writeFileSync(path.join(ws, ".mini-cursor-notes"), "x");
  writeFileSync(path.join(ws, ".mini-cursor", "threads.json"), "[]");
  mkdirSync(path.join(ws, "src"));
  writeFileSync(path.join(ws, "src", "a.ts"), "x");
  execFileSync("git", ["add", "-f", "."], { cwd: ws });
  // An intent-to-add entry carries extended flags (version 3's addition).
  writeFileSync(path.join(ws, "later.txt"), "x");
  execFileSync("git", ["add", "-N", "later.txt"], { cwd: ws });
  execFileSync("git", ["update-index", "--index-version", String(version)], { cwd: ws });
  const index = readFileSync(path.join(ws, ".git", "index"));
  expect(index.readUInt32BE(4)).toBe(version === 2 ? 3 : version);
  expect(indexPaths(index)).toEqual([
    ".mini-cursor-notes",
    ".mini-cursor/threads.json",
    "hello.txt",
    "later.txt",
    "src/a.ts",
  ]);
});
