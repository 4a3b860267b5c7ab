import { execFileSync } from "node:child_process";
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { ensureStateDir, StateDirError } from "../../src/memory/state-dir.js";
import { baseEnv, PROJECT_ROOT, runCli, TSX_LOADER } from "../helpers/cli.js";

/**
 * Attack: a cloned repository ships `.mini-cursor` (or `.mini-cursor/.gitignore`) as a symlink
 * to a place outside, so mini-cursor's own writes (state.sqlite, threads.json, .gitignore,
 * saved output) would land there. The folder is refused with a clear message; a symlinked
 * .gitignore is replaced by a plain file; nothing is written outside.
 */

let base: string;
let victim: string;

beforeEach(() => {
  base = mkdtempSync("/var/tmp/mini-cursor-state-links-");
  victim = path.join(base, "victim");
  mkdirSync(victim);
  writeFileSync(path.join(victim, "precious"), "precious\n");
});

afterEach(() => rmSync(base, { recursive: true, force: true }));

/** Commits `files` (and symlinks) to a fresh repository and clones it; returns the clone. */
function clonedRepo(build: (dir: string) => void): string {
  const origin = path.join(base, "origin");
  mkdirSync(origin);
  build(origin);
  const git = (cwd: string, ...args: string[]) =>
    execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main", ...args], {
      cwd,
      stdio: "pipe",
    });
  git(origin, "init", "-q");
  git(origin, "add", "-A", "-f");
  git(origin, "commit", "-qm", "hostile");
  const clone = path.join(base, "clone");
  git(base, "clone", "-q", origin, clone);
  return clone;
}

const victimFiles = () => readdirSync(victim).sort();

it("a repository's .mini-cursor symlink is refused, and nothing is written where it points", async () => {
  const clone = clonedRepo((dir) => {
    writeFileSync(path.join(dir, "hello.txt"), "hi\n");
    symlinkSync(victim, path.join(dir, ".mini-cursor"));
  });
  expect(lstatSync(path.join(clone, ".mini-cursor")).isSymbolicLink()).toBe(true);
  expect(() => ensureStateDir(clone)).toThrow(StateDirError);
  expect(() => ensureStateDir(clone)).toThrow(
    `.mini-cursor in ${clone} is a symlink or not a plain folder (it points to ${victim}); mini-cursor keeps its own files there and will not write through it. Remove it (rm .mini-cursor) and start again.`,
  );
  const r = await runCli(["--workspace", clone, "--sandbox", "off", "list the files here"], { env: baseEnv() });
  expect(r.code).not.toBe(0);
  expect(r.stderr + r.stdout).toContain("is a symlink or not a plain folder");
  expect(victimFiles()).toEqual(["precious"]);
}, 60_000);

it("a symlinked .mini-cursor/.gitignore (or state file) is replaced or refused, never written through", async () => {
  const target = path.join(victim, "gitignore-target");
  const clone = clonedRepo((dir) => {
    writeFileSync(path.join(dir, "hello.txt"), "hi\n");
    mkdirSync(path.join(dir, ".mini-cursor"));
    symlinkSync(target, path.join(dir, ".mini-cursor", ".gitignore"));
  });
  const r = await runCli(["--workspace", clone, "--sandbox", "off", "read hello.txt"], { env: baseEnv() });
  expect(r.code).toBe(0);
  expect(victimFiles()).toEqual(["precious"]);
  const ignore = path.join(clone, ".mini-cursor", ".gitignore");
  expect(lstatSync(ignore).isFile()).toBe(true);
  expect(readFileSync(ignore, "utf8")).toBe("*\n");
  // A planted state.sqlite link (dangling, so SQLite would create the file where it points).
  rmSync(path.join(clone, ".mini-cursor", "state.sqlite"), { force: true });
  symlinkSync(path.join(victim, "state.sqlite"), path.join(clone, ".mini-cursor", "state.sqlite"));
  expect(() => ensureStateDir(clone)).toThrow(/\.mini-cursor\/state\.sqlite in .* is a symlink/);
  const again = await runCli(["--workspace", clone, "--sandbox", "off", "read hello.txt"], { env: baseEnv() });
  expect(again.code).not.toBe(0);
  expect(existsSync(path.join(victim, "state.sqlite"))).toBe(false);
  expect(victimFiles()).toEqual(["precious"]);
}, 60_000);

it("as an ordinary user (nobody), the symlinked state folder is refused the same way", () => {
  if (process.getuid?.() !== 0) {
    console.warn("security-state-links: not root, so the run as nobody through setpriv is skipped");
    return;
  }
  const clone = clonedRepo((dir) => {
    writeFileSync(path.join(dir, "hello.txt"), "hi\n");
    symlinkSync(victim, path.join(dir, ".mini-cursor"));
  });
  execFileSync("chown", ["-R", "65534:65534", base]);
  execFileSync("chmod", ["755", base]);
  const script = `import(${JSON.stringify(path.join(PROJECT_ROOT, "src", "memory", "state-dir.ts"))}).then((m) => { try { m.ensureStateDir(${JSON.stringify(clone)}); console.log("WROTE"); } catch (e) { console.log(e.name + ": " + e.message); } })`;
  const out = execFileSync(
    "setpriv",
    ["--reuid=65534", "--regid=65534", "--clear-groups", process.execPath, "--import", TSX_LOADER, "-e", script],
    { encoding: "utf8" },
  );
  expect(out).toBe(
    `StateDirError: .mini-cursor in ${clone} is a symlink or not a plain folder (it points to ${victim}); mini-cursor keeps its own files there and will not write through it. Remove it (rm .mini-cursor) and start again.\n`,
  );
  expect(victimFiles()).toEqual(["precious"]);
});
