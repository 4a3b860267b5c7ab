import { spawn, spawnSync } from "node:child_process";
import {
  chmodSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { expect, test } from "@jest/globals";
import { IMPORT_LEFTOVER_AGE_MS, removeImportLeftovers } from "../../src/snapshots/git.js";
import { MAX_SNAPSHOT_FILE_BYTES, snapshotGitDir, snapshotStore } from "../../src/snapshots/store.js";
import { PROJECT_ROOT, TSX_LOADER } from "../helpers/cli.js";
import { putIn, statusOf, storeHolds, useSnapshotWorkspace } from "../helpers/snapshot-workspace.js";

/**
 * Issue 30, goal 3: a file-tool step's snapshots record its declared paths without the store's
 * private index (one git fast-import on top of the last snapshot), keeping every rule of the
 * index's way: files over the limit and ignored files never hashed, links as links, the
 * executable bit, deleted files, and two processes snapshotting at once.
 */

let dir: string;
let ws: string;
useSnapshotWorkspace((made) => ({ dir, ws } = made));

const put = (rel: string, text: string | Buffer) => putIn(ws, rel, text);

function storeGit(args: string[], input?: string | Buffer): string {
  const env = { PATH: process.env.PATH, GIT_DIR: snapshotGitDir(ws), HOME: dir, GIT_CONFIG_NOSYSTEM: "1" };
  const r = spawnSync("git", args, { env, input });
  if (r.status !== 0) throw new Error(`git ${args.join(" ")}: ${r.stderr.toString()}`);
  return r.stdout.toString();
}

/** `<mode> <path>` of each entry of a snapshot under `paths`. */
const entries = (id: string, ...paths: string[]) =>
  storeGit(["ls-tree", "-r", "-z", id, "--", ...paths])
    .split("\0")
    .filter(Boolean)
    .map((line) => `${line.split(" ")[0]} ${line.split("\t")[1]}`);

/** This process's own index of the store (`index-<pid>-<random>`). */
function ownIndex(): string {
  const name = readdirSync(snapshotGitDir(ws)).find((n) => new RegExp(`^index-${process.pid}-[0-9a-f]{8}$`).test(n));
  if (!name) throw new Error("no index of this process in the store");
  return path.join(snapshotGitDir(ws), name);
}

test("declared paths are snapshotted without reading or writing the private index", async () => {
  put("src/a.ts", "a1\n");
  put("src/b.ts", "b1\n");
  const store = snapshotStore(ws);
  const s0 = await store.take();
  // Garbage in place of the index: any git call that read it would fail.
  const index = ownIndex();
  const saved = readFileSync(index);
  const { atime, mtime } = statSync(index);
  writeFileSync(index, "not an index");
  let s1 = "";
  try {
    put("src/a.ts", "a2\n");
    put("src/new/c.ts", "c\n");
    s1 = await store.take(["src/a.ts", "src/new/c.ts"]);
    // Nothing changed since: the same snapshot, no commit.
    expect(await store.take(["src/a.ts"])).toBe(s1);
    expect(readFileSync(index, "utf8")).toBe("not an index");
    // The snapshot is on the branch, so it is never unreachable.
    expect(storeGit(["rev-parse", "refs/heads/snapshots"]).trim()).toBe(s1);
    // What the step changed is read without the index too.
    expect(await store.changes(s0, s1)).toEqual([
      { path: "src/a.ts", status: "M", fromMode: "100644", toMode: "100644", added: 1, removed: 1 },
      { path: "src/new/c.ts", status: "A", fromMode: "000000", toMode: "100644", added: 1, removed: 0 },
    ]);
  } finally {
    // With its own mtime, so git's check of files changed in the second it was written still holds.
    writeFileSync(index, saved);
    utimesSync(index, atime, mtime);
  }
  // A whole snapshot after it sees the rest, and a file put back as the index had it.
  put("src/a.ts", "a1\n");
  put("src/b.ts", "b2\n");
  const s2 = await store.take();
  expect(statusOf(await store.changes(s1, s2))).toEqual([
    ["M", "src/a.ts"],
    ["M", "src/b.ts"],
  ]);
  expect(statusOf(await store.changes(s0, s2))).toEqual([
    ["M", "src/b.ts"],
    ["A", "src/new/c.ts"],
  ]);
}, 60_000);

test("the rules of a declared path: ignored, too big, link, executable, deleted, beyond a link", async () => {
  const ignored = "ignored-unique-4d1c\n";
  const big = Buffer.alloc(MAX_SNAPSHOT_FILE_BYTES + 1, "b");
  put(".gitignore", "*.log\nnode_modules/\n");
  put("tracked.txt", "t1\n");
  put("grows.bin", "small\n");
  put("gone.txt", "bye\n");
  put("real/x.txt", "x\n");
  const store = snapshotStore(ws);
  const s0 = await store.take();
  put("app.log", ignored);
  put("node_modules/dep/i.js", `${ignored}dep\n`);
  put("grows.bin", big);
  put("big-new.bin", big);
  symlinkSync("tracked.txt", path.join(ws, "link"));
  put("run.sh", "#!/bin/sh\n");
  chmodSync(path.join(ws, "run.sh"), 0o755);
  rmSync(path.join(ws, "gone.txt"));
  // real/ becomes a link to a folder: real/x.txt is now beyond a link, which git sees as deleted.
  renameSync(path.join(ws, "real"), path.join(ws, "elsewhere"));
  symlinkSync("elsewhere", path.join(ws, "real"));
  const declared = [
    "app.log",
    "node_modules/dep/i.js",
    "grows.bin",
    "big-new.bin",
    "link",
    "run.sh",
    "gone.txt",
    "real/x.txt",
    "no/such.txt",
  ];
  const s1 = await store.take(declared);
  expect(statusOf(await store.changes(s0, s1))).toEqual([
    ["D", "gone.txt"],
    ["D", "grows.bin"],
    ["A", "link"],
    ["D", "real/x.txt"],
    ["A", "run.sh"],
  ]);
  expect(entries(s1, "link", "run.sh")).toEqual(["120000 link", "100755 run.sh"]);
  expect(storeGit(["cat-file", "blob", `${s1}:link`])).toBe("tracked.txt");
  expect(storeHolds(ws, ignored)).toBe(false);
  expect(storeHolds(ws, `${ignored}dep\n`)).toBe(false);
  expect(storeHolds(ws, big)).toBe(false);
  expect(store.oversized(declared)).toEqual(["grows.bin", "big-new.bin"]);
  // Back under the limit, it is recorded again and no longer reported.
  put("grows.bin", "small again\n");
  const s2 = await store.take(["grows.bin"]);
  expect(statusOf(await store.changes(s1, s2))).toEqual([["A", "grows.bin"]]);
  expect(store.oversized(["grows.bin"])).toEqual([]);
  // Undo of the step puts each back as it was.
  await store.restore(s0, ["gone.txt", "run.sh", "link"]);
  expect(readFileSync(path.join(ws, "gone.txt"), "utf8")).toBe("bye\n");
  expect(() => statSync(path.join(ws, "run.sh"))).toThrow();
  // A whole snapshot now agrees with what the direct ones recorded, but for what was restored
  // and what no step declared (the folder moved away, and the link in its place).
  const s3 = await store.take();
  expect(statusOf(await store.changes(s2, s3))).toEqual([
    ["A", "elsewhere/x.txt"],
    ["A", "gone.txt"],
    ["D", "link"],
    ["A", "real"],
    ["D", "run.sh"],
  ]);
}, 60_000);

test("a folder, a nested repository or a .gitignore goes through the index, which still holds what direct takes recorded", async () => {
  put("a.txt", "a1\n");
  put("sub/keep.txt", "k\n");
  const store = snapshotStore(ws);
  const s0 = await store.take();
  put("a.txt", "a2\n");
  const s1 = await store.take(["a.txt"]);
  put("dir/inner.txt", "inner\n");
  put(".gitignore", "*.tmp\n");
  // A declared folder: its files are recorded, and a.txt stays as the direct take found it.
  const s2 = await store.take(["dir", ".gitignore"]);
  expect(statusOf(await store.changes(s0, s2))).toEqual([
    ["A", ".gitignore"],
    ["M", "a.txt"],
    ["A", "dir/inner.txt"],
  ]);
  expect(statusOf(await store.changes(s1, s2))).toEqual([
    ["A", ".gitignore"],
    ["A", "dir/inner.txt"],
  ]);
  // A path in a nested repository: never recorded (undo could not bring its files back anyway).
  mkdirSync(path.join(ws, "nested"));
  spawnSync("git", ["init", "--quiet"], { cwd: path.join(ws, "nested") });
  put("nested/n.txt", "n\n");
  spawnSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", "add", "n.txt"], { cwd: path.join(ws, "nested") });
  spawnSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "n"], {
    cwd: path.join(ws, "nested"),
  });
  // A path inside it changes nothing, and neither does a whole snapshot (no link to its commit either).
  expect(await store.take(["nested/n.txt"])).toBe(s2);
  expect(entries(await store.take(), "nested")).toEqual([]);
}, 60_000);

test("two processes snapshotting declared paths at once each keep their own line, all on the branch", async () => {
  put("one.txt", "0\n");
  put("two.txt", "0\n");
  await snapshotStore(ws).take();
  const ROUNDS = 12;
  const script = `
    import { writeFileSync } from "node:fs";
    import { snapshotStore } from ${JSON.stringify(path.join(PROJECT_ROOT, "src/snapshots/store.ts"))};
    import { configureParts } from ${JSON.stringify(path.join(PROJECT_ROOT, "src/app/configure.ts"))};
    configureParts();
    const [ws, file] = process.argv.slice(1);
    const store = snapshotStore(ws);
    const ids = [await store.take()];
    for (let i = 1; i <= ${ROUNDS}; i++) {
      writeFileSync(ws + "/" + file, i + "\\n");
      ids.push(await store.take([file]));
    }
    process.stdout.write(JSON.stringify(ids));
  `;
  const run = (file: string) =>
    new Promise<string[]>((resolve, reject) => {
      const child = spawn(process.execPath, ["--import", TSX_LOADER, "--input-type=module", "-e", script, ws, file], {
        stdio: ["ignore", "pipe", "pipe"],
        // The test's own environment (its state home), which jest keeps apart from the process's.
        env: { ...process.env },
      });
      let out = "";
      let err = "";
      child.stdout.on("data", (d: Buffer) => (out += d.toString()));
      child.stderr.on("data", (d: Buffer) => (err += d.toString()));
      child.on("exit", (code) => (code === 0 ? resolve(JSON.parse(out) as string[]) : reject(new Error(err))));
    });
  const [one, two] = await Promise.all([run("one.txt"), run("two.txt")]);
  const tip = storeGit(["rev-parse", "refs/heads/snapshots"]).trim();
  const store = snapshotStore(ws);
  for (const [ids, file] of [
    [one, "one.txt"],
    [two, "two.txt"],
  ] as const) {
    for (let i = 1; i < ids.length; i++) {
      // Each step of a process changed its own file and nothing else, whatever the other did meanwhile.
      expect(statusOf(await store.changes(ids[i - 1]!, ids[i]!))).toEqual([["M", file]]);
      expect(storeGit(["cat-file", "blob", `${ids[i]}:${file}`])).toBe(`${i}\n`);
      expect(
        spawnSync("git", ["merge-base", "--is-ancestor", ids[i]!, tip], {
          env: { PATH: process.env.PATH, GIT_DIR: snapshotGitDir(ws) },
        }).status,
      ).toBe(0);
    }
  }
}, 120_000);

test("what a fast-import that died left in the store goes once its process is gone (or it is old), and only then", async () => {
  put("a.txt", "a\n");
  await snapshotStore(ws).take();
  const gitDir = snapshotGitDir(ws);
  const env = { PATH: process.env.PATH, GIT_DIR: gitDir, HOME: dir, GIT_CONFIG_NOSYSTEM: "1" };
  // A real crash report: a stream that ends before its "done", as when the process feeding it is killed.
  const died = spawnSync("git", ["fast-import", "--quiet"], { env, input: "feature done\ncommit refs/heads/x\n" });
  expect(died.status).toBe(128);
  const dead = readdirSync(gitDir).filter((n) => n.startsWith("fast_import_crash_"));
  expect(dead).toEqual([`fast_import_crash_${died.pid}`]);
  // Reports of live processes (this one, and its parent's written long ago), and temporary packs, one of them old.
  const live = `fast_import_crash_${process.pid}`;
  const liveOld = `fast_import_crash_${process.ppid}`;
  const pack = path.join("objects", "pack", "tmp_pack_AbC123");
  const packOld = path.join("objects", "pack", "tmp_idx_XyZ789");
  for (const name of [live, liveOld, pack, packOld]) writeFileSync(path.join(gitDir, name), "");
  const long = new Date(Date.now() - IMPORT_LEFTOVER_AGE_MS - 60_000);
  for (const name of [liveOld, packOld]) utimesSync(path.join(gitDir, name), long, long);
  const left = () =>
    [
      ...readdirSync(gitDir).filter((n) => n.startsWith("fast_import_")),
      ...readdirSync(path.join(gitDir, "objects", "pack"))
        .filter((n) => n.startsWith("tmp_"))
        .map((n) => path.join("objects", "pack", n)),
    ].sort();
  // A git works on the store: its temporary pack may be one being written.
  removeImportLeftovers(gitDir, () => [4242]);
  expect(left()).toEqual([live, pack].sort());
  // /proc cannot tell: only age decides.
  removeImportLeftovers(gitDir, () => undefined);
  expect(left()).toEqual([live, pack].sort());
  removeImportLeftovers(gitDir, () => []);
  expect(left()).toEqual([live]);
  // The store opened by a new process cleans up the same way.
  rmSync(path.join(gitDir, live));
  spawnSync("git", ["fast-import", "--quiet"], { env, input: "feature done\ncommit refs/heads/x\n" });
  expect(readdirSync(gitDir).filter((n) => n.startsWith("fast_import_crash_"))).toHaveLength(1);
  const script = `
    import { snapshotStore } from ${JSON.stringify(path.join(PROJECT_ROOT, "src/snapshots/store.ts"))};
    import { configureParts } from ${JSON.stringify(path.join(PROJECT_ROOT, "src/app/configure.ts"))};
    configureParts();
    await snapshotStore(process.argv[1]).take(["a.txt"]);
  `;
  const opened = spawnSync(process.execPath, ["--import", TSX_LOADER, "--input-type=module", "-e", script, ws], {
    env: { ...process.env },
  });
  expect(opened.stderr.toString()).toBe("");
  expect(left()).toEqual([]);
}, 60_000);
