import { restartSettings } from "./start.js";
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { snapshotStore, type SnapshotStore } from "../../src/snapshots/store.js";
import { watchEventLimit } from "../../src/snapshots/watch.js";
import { commandHardLinkReason } from "../../src/agent/link-commands.js";

/**
 * The watcher's oracle (issue 30): one workspace, two snapshot stores in two state homes, one
 * with the file watcher (snapshots/watch.ts) and one that scans every time
 * (MINI_CURSOR_SNAPSHOT_WATCH=off). After each command, run as a real process, both take a whole
 * snapshot; their trees must be the same, and the watcher's take must have come from the way
 * the step names (its answer, or a scan, and why).
 */

export interface OracleStep {
  name: string;
  command: string;
  /** How the watcher's store must take this step's snapshot; a RegExp: by a scan, for that reason. */
  expect: "watched" | RegExp;
}

export interface OracleResult {
  name: string;
  /** "watched", or "scanned: <reason>". */
  way: string;
  expected: string;
  wayOk: boolean;
  treesEqual: boolean;
  watchedTree: string;
  scannedTree: string;
}

const MTIME_KEEP = 'm=$(stat -c %Y a.txt); printf "z\\n" > a.txt; touch -m -d "@$m" a.txt';

/** Steps in order; each starts from where the one before left the workspace. */
export function oracleSteps(): OracleStep[] {
  const burst = watchEventLimit() + 100;
  return [
    { name: "create files", command: "echo a > a.txt && mkdir -p src && echo b > src/b.txt", expect: "watched" },
    { name: "nothing changed", command: "true", expect: "watched" },
    { name: "modify, same size, same mtime second", command: MTIME_KEEP, expect: "watched" },
    { name: "delete", command: "rm a.txt", expect: "watched" },
    { name: "rename a file", command: "mv src/b.txt src/c.txt", expect: "watched" },
    {
      name: "mkdir -p a deep tree and files at once",
      command: "mkdir -p d1/d2/d3/d4 && echo x > d1/d2/d3/d4/f && echo y > d1/d2/g && echo z > d1/h",
      expect: "watched",
    },
    { name: "rm -rf a folder", command: "rm -rf d1", expect: "watched" },
    { name: "a folder replaced by a new one", command: "mkdir -p r && echo 1 > r/old", expect: "watched" },
    { name: "…removed and made again", command: "rm -rf r && mkdir r && echo 2 > r/new", expect: "watched" },
    { name: "a folder to move", command: "mkdir -p m1/sub && echo 1 > m1/sub/f", expect: "watched" },
    { name: "mv a folder, then write in it", command: "mv m1 m2 && echo 2 > m2/sub/new", expect: /moved/ },
    { name: "write in the moved folder", command: "echo 3 > m2/sub/new2 && rm m2/sub/f", expect: "watched" },
    { name: "symlinks", command: "ln -s src/c.txt link && ln -s m2 dirlink", expect: "watched" },
    { name: "chmod +x", command: "chmod +x src/c.txt", expect: "watched" },
    {
      name: "a file becomes a folder",
      command: "rm src/c.txt && mkdir src/c.txt && echo in > src/c.txt/in",
      expect: "watched",
    },
    { name: "a folder becomes a file", command: "rm -rf m2 && echo file > m2", expect: "watched" },
    {
      name: "ignored files",
      command:
        "mkdir -p ignored/deep ignored/burst && echo x > ignored/deep/x && echo y > y.log && echo kept > kept.txt",
      expect: "watched",
    },
    { name: "a .gitignore changes", command: "echo 'src/' >> .gitignore", expect: /ignore rules/ },
    // Two events a file (made, then its times set) in a folder already watched: inotify's queue overflows.
    {
      name: "a burst of events",
      command: `cd ignored/burst && seq 1 ${burst} | xargs touch`,
      expect: /overflow/,
    },
    { name: "after the burst", command: "echo after > after.txt", expect: "watched" },
    { name: "rm -rf a folder of many files", command: "rm -rf ignored/burst", expect: /overflow/ },
    { name: "after that", command: "echo again >> after.txt", expect: "watched" },
    // ../outside: beside the workspace, on its file system. A hard link made by the step scans it.
    {
      name: "a hard link made outside",
      command: "echo one > linked.txt && ln linked.txt ../outside/linked",
      expect: /makes hard links \(`ln` \(without -s\)\)/,
    },
    { name: "written through the outside link", command: "echo two > ../outside/linked", expect: "watched" },
    { name: "…and again, longer", command: "echo three, longer >> ../outside/linked", expect: "watched" },
    {
      name: "an outside link made and written through in one step",
      command: "ln start.txt ../outside/start && echo changed > ../outside/start",
      expect: /makes hard links/,
    },
    { name: "written through that link later", command: "echo later > ../outside/start", expect: "watched" },
    {
      name: "the outside link removed, the file written",
      command: "rm ../outside/linked && echo four > linked.txt",
      expect: "watched",
    },
    // What @parcel/watcher loses (it merges a batch's events per path, and watches only the first
    // folder mkdir -p makes): a recorded file replaced by a rename and deleted within one batch,
    // and a write below a folder mkdir -p made in an earlier step.
    { name: "a file to be replaced", command: "echo one > r.txt", expect: "watched" },
    { name: "replaced by a rename, then deleted", command: "sed -i s/one/two/ r.txt && rm r.txt", expect: "watched" },
    { name: "folders made by mkdir -p", command: "mkdir -p p1/p2/p3", expect: "watched" },
    { name: "a write in the deepest of them, later", command: "echo deep > p1/p2/p3/f", expect: "watched" },
  ];
}

function tree(store: SnapshotStore, id: string): string {
  const r = spawnSync("git", ["ls-tree", "-r", "--full-tree", id], {
    env: { PATH: process.env.PATH, GIT_DIR: store.gitDir, GIT_CONFIG_NOSYSTEM: "1", HOME: "/nonexistent" },
  });
  if (r.status !== 0) throw new Error(`git ls-tree ${id}: ${r.stderr.toString()}`);
  return r.stdout.toString();
}

/** Makes both stores for `ws` (state homes `watchedHome` and `scannedHome`) and runs the steps. */
export async function runOracle(ws: string, watchedHome: string, scannedHome: string): Promise<OracleResult[]> {
  mkdirSync(ws, { recursive: true });
  // Where the steps make hard links from: same file system as the workspace, or `ln` fails.
  mkdirSync(path.join(path.dirname(ws), "outside"), { recursive: true });
  writeFileSync(path.join(ws, ".gitignore"), "ignored/\n*.log\n");
  writeFileSync(path.join(ws, "start.txt"), "start\n");
  // The shell parser (WebAssembly) loaded before any snapshot, not in the middle of the steps.
  await commandHardLinkReason(ws, "true");
  const saved = { ...process.env };
  let watched: SnapshotStore;
  let scanned: SnapshotStore;
  try {
    process.env.MINI_CURSOR_STATE_HOME = watchedHome;
    delete process.env.MINI_CURSOR_SNAPSHOT_WATCH;
    restartSettings();
    watched = snapshotStore(ws);
    await watched.take();
    process.env.MINI_CURSOR_STATE_HOME = scannedHome;
    process.env.MINI_CURSOR_SNAPSHOT_WATCH = "off";
    restartSettings();
    scanned = snapshotStore(ws);
    await scanned.take();
  } finally {
    for (const key of ["MINI_CURSOR_STATE_HOME", "MINI_CURSOR_SNAPSHOT_WATCH"]) {
      if (saved[key] === undefined) delete process.env[key];
      else process.env[key] = saved[key];
    }
    restartSettings();
  }
  const results: OracleResult[] = [];
  for (const step of oracleSteps()) {
    const r = spawnSync("sh", ["-c", step.command], { cwd: ws });
    if (r.status !== 0) throw new Error(`${step.name}: ${step.command}: ${r.stderr.toString()}`);
    const before = { ...watched.counts };
    // As a command step does (agent/snapshot-step.ts): one that makes hard links scans.
    const scan = await commandHardLinkReason(ws, step.command);
    const a = await watched.take(undefined, scan ? { scan } : undefined);
    const after = watched.counts;
    const b = await scanned.take();
    const way = after.watched > before.watched ? "watched" : `scanned: ${after.lastScanReason ?? "?"}`;
    const watchedTree = tree(watched, a);
    const scannedTree = tree(scanned, b);
    const wayOk = step.expect === "watched" ? way === "watched" : way.startsWith("scanned") && step.expect.test(way);
    results.push({
      name: step.name,
      way,
      expected: String(step.expect),
      wayOk,
      treesEqual: watchedTree === scannedTree,
      watchedTree,
      scannedTree,
    });
  }
  return results;
}
