import { spawn } from "node:child_process";
import { chmodSync, chownSync, existsSync, linkSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, expect, jest, test } from "@jest/globals";
import { snapshotStore } from "../../src/snapshots/store.js";
import { NOBODY, PROJECT_ROOT, RUNNING_AS_ROOT, TSX_LOADER } from "../helpers/cli.js";
import { asUser, skipUnlessReachable } from "../helpers/as-user.js";
import { openFixture, type Fixture } from "../faults/harness.js";
import { runOracle, type OracleResult } from "../helpers/snapshot-watch-oracle.js";
import { makeTempDir } from "../helpers/tmp.js";

/**
 * Issue 30, goal 3: a command step's whole snapshots ask the file watcher (snapshots/watch.ts)
 * what changed instead of scanning every file. The oracle: after each command, run as a real
 * process, the watcher's snapshot must hold exactly the tree a scan writes, and the watcher must
 * have answered where it can and given way to a scan where it must (a moved live folder, a
 * .gitignore change, inotify's queue overflowing or close to it). As root and as uid 65534.
 */

jest.setTimeout(300_000);

let tmp: ReturnType<typeof makeTempDir>;
let fx: Fixture | undefined;
beforeEach(() => {
  tmp = makeTempDir();
});
afterEach(async () => {
  await fx?.close();
  fx = undefined;
  tmp.cleanup();
});

const summary = (results: OracleResult[]) =>
  results.map((r) => ({
    name: r.name,
    way: r.wayOk ? "as expected" : `${r.way} (expected ${r.expected})`,
    treesEqual: r.treesEqual,
  }));
const allGood = (results: OracleResult[]) =>
  results.map((r) => ({ name: r.name, way: "as expected", treesEqual: true }));

test("the watcher's snapshots equal a scan's after every kind of change, and it gives way to a scan where it must", async () => {
  const results = await runOracle(path.join(tmp.dir, "ws"), path.join(tmp.dir, "a"), path.join(tmp.dir, "b"));
  const diverged = results.find((r) => !r.treesEqual);
  if (diverged) expect(diverged.watchedTree).toBe(diverged.scannedTree);
  expect(summary(results)).toEqual(allGood(results));
});

test("the same as uid 65534", async () => {
  if (!RUNNING_AS_ROOT) {
    console.warn("snapshot-watch: not root, so the run as nobody through setpriv is skipped");
    return;
  }
  if (skipUnlessReachable(NOBODY, "snapshot-watch as uid 65534")) return;
  chmodSync(tmp.dir, 0o755);
  const home = path.join(tmp.dir, "user");
  mkdirSync(home);
  chownSync(home, NOBODY, NOBODY);
  const script = path.join(PROJECT_ROOT, "__tests__", "helpers", "snapshot-watch-run.ts");
  const out = await new Promise<string>((resolve, reject) => {
    const child = spawn(
      ...asUser(NOBODY, [
        process.execPath,
        "--import",
        TSX_LOADER,
        script,
        path.join(home, "ws"),
        path.join(home, "a"),
        path.join(home, "b"),
      ]),
      { cwd: PROJECT_ROOT, env: { PATH: process.env.PATH, HOME: home }, stdio: ["ignore", "pipe", "pipe"] },
    );
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("exit", (code) => (code === 0 ? resolve(stdout) : reject(new Error(`exit ${code}: ${stderr}`))));
  });
  const { uid, results } = JSON.parse(out) as { uid: number; results: OracleResult[] };
  expect(uid).toBe(NOBODY);
  const diverged = results.find((r) => !r.treesEqual);
  if (diverged) expect(diverged.watchedTree).toBe(diverged.scannedTree);
  expect(summary(results)).toEqual(allGood(results));
});

test("another process changing files and taking snapshots meanwhile: this process's next take sees its files", async () => {
  const ws = path.join(tmp.dir, "ws");
  mkdirSync(ws);
  writeFileSync(path.join(ws, "base.txt"), "base\n");
  const store = snapshotStore(ws);
  await store.take();
  const rounds = 20;
  // The other process: its own store (and watcher) on the same workspace and the same shadow repository.
  const script = `
    const { writeFileSync, rmSync } = await import("node:fs");
    (await import(${JSON.stringify(path.join(PROJECT_ROOT, "src/app/configure.ts"))})).configureParts();
    const { snapshotStore } = await import(${JSON.stringify(path.join(PROJECT_ROOT, "src/snapshots/store.ts"))});
    const [ws, rounds] = [process.argv[1], Number(process.argv[2])];
    const store = snapshotStore(ws);
    await store.take();
    for (let i = 0; i < rounds; i++) {
      writeFileSync(ws + "/other-" + i + ".txt", "other " + i + "\\n");
      if (i > 0) rmSync(ws + "/other-" + (i - 1) + ".txt");
      await store.take();
    }
    process.exit(0);
  `;
  const other = new Promise<void>((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ["--import", TSX_LOADER, "--input-type=module", "-e", script, ws, String(rounds)],
      { stdio: ["ignore", "ignore", "pipe"], env: { ...process.env } },
    );
    let err = "";
    child.stderr.on("data", (d: Buffer) => (err += d.toString()));
    child.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(err))));
  });
  let done = false;
  void other.finally(() => (done = true)).catch(() => undefined);
  let mine = 0;
  while (!done) {
    writeFileSync(path.join(ws, "mine.txt"), `mine ${++mine}\n`);
    await store.take();
  }
  await other;
  const before = store.counts.watched;
  const id = await store.take();
  expect(store.counts.watched).toBe(before + 1);
  const listed = await listTree(store.gitDir, id);
  expect(listed).toEqual(
    [
      ["base.txt", "base\n"],
      ["mine.txt", `mine ${mine}\n`],
      [`other-${rounds - 1}.txt`, `other ${rounds - 1}\n`],
    ].sort(),
  );
});

async function listTree(gitDir: string, id: string): Promise<[string, string][]> {
  const { spawnSync } = await import("node:child_process");
  const env = { PATH: process.env.PATH, GIT_DIR: gitDir, HOME: "/nonexistent", GIT_CONFIG_NOSYSTEM: "1" };
  const names = spawnSync("git", ["ls-tree", "-r", "-z", "--name-only", id], { env })
    .stdout.toString()
    .split("\0")
    .filter(Boolean);
  return names
    .map((n): [string, string] => [n, spawnSync("git", ["show", `${id}:${n}`], { env }).stdout.toString()])
    .sort();
}

test("through the CLI: a command step that deletes and creates files is undone exactly", async () => {
  fx = await openFixture("sqlite", [
    {
      toolCalls: [
        {
          name: "execute_command",
          args: {
            command:
              "rm keep.txt && rm -rf dir && mkdir -p made/deep && echo new > made/deep/new.txt && echo changed > other.txt",
          },
        },
      ],
    },
    { content: "done" },
  ]);
  const ws = fx.workspace;
  writeFileSync(path.join(ws, "keep.txt"), "keep\n");
  mkdirSync(path.join(ws, "dir", "sub"), { recursive: true });
  writeFileSync(path.join(ws, "dir", "sub", "inner.txt"), "inner\n");
  writeFileSync(path.join(ws, "other.txt"), "other\n");
  const run = await fx.run(["--json", "--thread", "t", "GO"]);
  expect(run.code).toBe(0);
  expect(existsSync(path.join(ws, "keep.txt"))).toBe(false);
  expect(readFileSync(path.join(ws, "made", "deep", "new.txt"), "utf8")).toBe("new\n");

  const undo = await fx.run(["--thread", "t", "--undo"]);
  expect(undo.code).toBe(0);
  expect(undo.stdout).toContain("Undid turn 1: GO");
  expect(readFileSync(path.join(ws, "keep.txt"), "utf8")).toBe("keep\n");
  expect(readFileSync(path.join(ws, "dir", "sub", "inner.txt"), "utf8")).toBe("inner\n");
  expect(readFileSync(path.join(ws, "other.txt"), "utf8")).toBe("other\n");
  expect(existsSync(path.join(ws, "made"))).toBe(false);
});

test("through the CLI: a write through a hard link made outside the workspace before the run is undone", async () => {
  // Beside the fixture's workspace: the same file system (a hard link cannot cross one). The write
  // is in a script: written out on the command line, a write outside the workspace asks first.
  const outside = path.join(tmp.dir, "outside");
  fx = await openFixture("sqlite", [
    { toolCalls: [{ name: "execute_command", args: { command: "sh write.sh" } }] },
    { content: "done" },
  ]);
  const ws = fx.workspace;
  mkdirSync(outside);
  writeFileSync(path.join(ws, "shared.txt"), "original\n");
  writeFileSync(path.join(ws, "write.sh"), `echo changed > ${outside}/shared\n`);
  linkSync(path.join(ws, "shared.txt"), path.join(outside, "shared"));
  expect(statSync(outside).dev).toBe(statSync(ws).dev);
  const run = await fx.run(["--json", "--thread", "t", "GO"]);
  expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: "" });
  expect(readFileSync(path.join(ws, "shared.txt"), "utf8")).toBe("changed\n");
  const undo = await fx.run(["--thread", "t", "--undo"]);
  expect(undo.code).toBe(0);
  expect(undo.stdout).toContain("Undid turn 1: GO");
  expect(readFileSync(path.join(ws, "shared.txt"), "utf8")).toBe("original\n");
});
