import { execFileSync, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import {
  chmodSync,
  cpSync,
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
import { afterEach, beforeEach, expect, test } from "@jest/globals";
import { stateFolderName } from "../../src/memory/state-dir.js";
import { baseEnv, collect, PROJECT_ROOT, runCli, TSX_LOADER, type CliResult } from "../helpers/cli.js";
import { asUser, skipUnlessReachable } from "../helpers/as-user.js";

/**
 * Issue 25 item 1 and 3, attacked with real files and real processes, as root and as nobody:
 * mini-cursor's state lives outside the workspace, so a repository that ships `.mini-cursor/`
 * (a symlink out, a thread database, a snapshot repository whose config, hooks and attributes
 * would run a program) is never written through, never read as state, and runs nothing; a
 * `.gitattributes` naming a filter runs nothing either; and a read-only checkout can be read.
 */

const NOBODY = 65534;
const asRoot = process.getuid?.() === 0;
const rootAndNobody =
  asRoot && !skipUnlessReachable(NOBODY, "state-outside as nobody")
    ? (["root", "nobody"] as const)
    : (["root"] as const);

let base: string;
let stateHome: string;
let canaries: string;

beforeEach(() => {
  base = mkdtempSync("/var/tmp/mini-cursor-state-outside-");
  chmodSync(base, 0o755);
  stateHome = path.join(base, "state-home");
  canaries = path.join(base, "canaries");
  mkdirSync(canaries, { mode: 0o777 });
  chmodSync(canaries, 0o777);
});

afterEach(() => rmSync(base, { recursive: true, force: true }));

const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main", ...args], {
    cwd,
    stdio: "pipe",
    env: { PATH: process.env.PATH, HOME: base, GIT_CONFIG_NOSYSTEM: "1" },
  });

/** Commits what `build` makes (ignored files too) to a fresh repository and clones it. */
function clonedRepo(build: (dir: string) => void): string {
  const origin = path.join(base, "origin");
  mkdirSync(origin);
  build(origin);
  git(origin, "init", "-q");
  git(origin, "add", "-A", "-f");
  git(origin, "commit", "-qm", "hostile");
  const clone = path.join(base, "clone");
  git(base, "clone", "-q", origin, clone);
  return clone;
}

/** A program that leaves a named canary file when anything runs it, and passes its input through. */
function canaryProgram(name: string): string {
  const program = path.join(canaries, `${name}.sh`);
  writeFileSync(program, `#!/bin/sh\ntouch ${JSON.stringify(path.join(canaries, `RAN-${name}`))}\ncat\n`, {
    mode: 0o755,
  });
  return program;
}

/** The workspace's state folder under this test's state home. */
const stateOf = (ws: string) => path.join(stateHome, "workspaces", stateFolderName(ws));

const ranCanaries = () => readdirSync(canaries).filter((n) => n.startsWith("RAN-"));

/** What a snapshot store config would run: a filter, a hook folder, fsmonitor. */
function hostileGitConfig(): string {
  return [
    "[core]",
    `\tfsmonitor = ${canaryProgram("fsmonitor")}`,
    `\thooksPath = ${path.dirname(canaryProgram("hook"))}`,
    '[filter "canary"]',
    `\tclean = ${canaryProgram("clean")}`,
    `\tsmudge = ${canaryProgram("smudge")}`,
    "\trequired = true",
    '[diff "canary"]',
    `\ttextconv = ${canaryProgram("textconv")}`,
    "",
  ].join("\n");
}

/** Hooks git would run around a commit or checkout, each a canary. */
function hostileHooks(dir: string): void {
  mkdirSync(dir, { recursive: true });
  for (const hook of ["pre-commit", "post-commit", "post-checkout", "reference-transaction", "post-index-change"])
    writeFileSync(
      path.join(dir, hook),
      `#!/bin/sh\ntouch ${JSON.stringify(path.join(canaries, `RAN-hook-${hook}`))}\n`,
      {
        mode: 0o755,
      },
    );
}

/** Every file under `dir` with its content hash (symlinks by target), to show nothing changed. */
function tree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = path.join(d, name);
      const st = lstatSync(p);
      const rel = path.relative(dir, p);
      if (st.isSymbolicLink()) out[rel] = "link";
      else if (st.isDirectory()) walk(p);
      else out[rel] = createHash("sha256").update(readFileSync(p)).digest("hex");
    }
  };
  walk(dir);
  return out;
}

/** Runs the CLI as root or as nobody (setpriv), with this test's state home. */
async function cliAs(who: "root" | "nobody", args: string[], extraEnv: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  const env = baseEnv({ MINI_CURSOR_STATE_HOME: stateHome, HOME: base, ...extraEnv });
  const node = [process.execPath, "--import", TSX_LOADER, path.join(PROJECT_ROOT, "src", "cli.ts"), ...args];
  // As nobody: the project's CLI wherever the clone lives (helpers/as-user.ts).
  const [file, argv] = who === "root" ? [node[0]!, node.slice(1)] : asUser(NOBODY, node);
  const child = spawn(file, argv, {
    cwd: base,
    env,
    stdio: ["pipe", "pipe", "pipe"],
    detached: true,
  });
  child.stdin!.end();
  return collect(child, 120_000);
}

function chownForNobody(...dirs: string[]): void {
  for (const dir of dirs) execFileSync("chown", ["-R", `${NOBODY}:${NOBODY}`, dir]);
}

test.each(rootAndNobody)(
  "as %s: a repository's .mini-cursor symlink is never written through, and the run works",
  async (who) => {
    const victim = path.join(base, "victim");
    mkdirSync(victim);
    writeFileSync(path.join(victim, "precious"), "precious\n");
    const clone = clonedRepo((dir) => {
      writeFileSync(path.join(dir, "hello.txt"), "hi\n");
      symlinkSync(victim, path.join(dir, ".mini-cursor"));
    });
    mkdirSync(stateHome);
    if (who === "nobody") chownForNobody(clone, stateHome, victim);
    const r = await cliAs(who, ["--workspace", clone, "--sandbox", "off", "create a file notes.txt with content Hi"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(readFileSync(path.join(clone, "notes.txt"), "utf8")).toBe("Hi");
    expect(readdirSync(victim)).toEqual(["precious"]);
    expect(lstatSync(path.join(clone, ".mini-cursor")).isSymbolicLink()).toBe(true);
    expect(existsSync(path.join(stateOf(clone), "state.sqlite"))).toBe(true);
  },
  180_000,
);

test.each(rootAndNobody)(
  "as %s: shipped state is not read, and neither its git config nor .gitattributes runs anything through snapshot and undo",
  async (who) => {
    // A real thread database and index, made by mini-cursor in another folder, shipped in the repository.
    const donor = path.join(base, "donor");
    mkdirSync(donor);
    const donorState = path.join(base, "donor-state");
    const made = await runCli(["--workspace", donor, "--thread", "shipped-1", "list the files here"], {
      env: baseEnv({ MINI_CURSOR_STATE_HOME: donorState }),
    });
    expect(made.code).toBe(0);
    const donorDir = path.join(donorState, "workspaces", readdirSync(path.join(donorState, "workspaces"))[0]!);
    const clone = clonedRepo((dir) => {
      writeFileSync(path.join(dir, "hello.txt"), "hi\n");
      writeFileSync(path.join(dir, ".gitattributes"), "* filter=canary diff=canary ident\n");
      const shipped = path.join(dir, ".mini-cursor");
      mkdirSync(path.join(shipped, "snapshots", "info"), { recursive: true });
      writeFileSync(path.join(shipped, ".gitignore"), "*\n");
      cpSync(path.join(donorDir, "state.sqlite"), path.join(shipped, "state.sqlite"));
      cpSync(path.join(donorDir, "threads.json"), path.join(shipped, "threads.json"));
      writeFileSync(path.join(shipped, "snapshots", "HEAD"), "ref: refs/heads/snapshots\n");
      writeFileSync(path.join(shipped, "snapshots", "config"), hostileGitConfig());
      writeFileSync(path.join(shipped, "snapshots", "info", "attributes"), "* filter=canary\n");
      hostileHooks(path.join(shipped, "snapshots", "hooks"));
    });
    const shippedBefore = tree(path.join(clone, ".mini-cursor"));
    mkdirSync(stateHome);
    if (who === "nobody") chownForNobody(clone, stateHome);

    const first = await cliAs(who, [
      "--workspace",
      clone,
      "--sandbox",
      "off",
      "create a file notes.txt with content Hi",
    ]);
    expect(first.code).toBe(0);
    expect(first.stderr).toBe(
      `mini-cursor: ${clone}/.mini-cursor/ is not read as mini-cursor's state (git tracks files in it, so it came with the repository); this workspace's state is kept in ${stateOf(clone)}.\n`,
    );
    expect(readFileSync(path.join(clone, "notes.txt"), "utf8")).toBe("Hi");

    // Our own store, tampered with between runs the way the shipped one was: its config and
    // attributes are ours again before git runs, and hooks are never looked up.
    const store = path.join(stateOf(clone), "snapshots");
    writeFileSync(path.join(store, "config"), hostileGitConfig());
    writeFileSync(path.join(store, "info", "attributes"), "* filter=canary\n");
    hostileHooks(path.join(store, "hooks"));
    if (who === "nobody") chownForNobody(stateHome);

    const threads = await cliAs(who, ["--workspace", clone, "--threads", "--json"]);
    expect(threads.code).toBe(0);
    const ids = threads.stdout
      .trim()
      .split("\n")
      .map((l) => (JSON.parse(l) as { id: string; firstRequest: string }).firstRequest);
    expect(ids).toEqual(["create a file notes.txt with content Hi"]);

    const undo = await cliAs(who, ["--workspace", clone, "--continue", "--undo"]);
    expect(undo.stdout).toContain("removed    notes.txt");
    expect(undo.code).toBe(0);
    expect(existsSync(path.join(clone, "notes.txt"))).toBe(false);
    expect(readFileSync(path.join(clone, "hello.txt"), "utf8")).toBe("hi\n");
    expect(ranCanaries()).toEqual([]);
    expect(tree(path.join(clone, ".mini-cursor"))).toEqual(shippedBefore);
  },
  300_000,
);

(asRoot ? test : test.skip)(
  "as nobody, a read-only checkout can be read and discussed",
  async () => {
    const ws = path.join(base, "readonly");
    mkdirSync(ws);
    writeFileSync(path.join(ws, "notes.txt"), "read me\n");
    chmodSync(ws, 0o555);
    mkdirSync(stateHome);
    chownForNobody(stateHome);
    const r = await cliAs("nobody", ["--workspace", ws, "--sandbox", "off", "read notes.txt"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("read me");
    expect(readdirSync(ws)).toEqual(["notes.txt"]);
    const again = await cliAs("nobody", ["--workspace", ws, "--threads", "--json"]);
    expect(JSON.parse(again.stdout.trim()).firstRequest).toBe("read notes.txt");
  },
  180_000,
);
