import { spawn } from "node:child_process";
import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "@jest/globals";
import { WorkspaceWatcher } from "../../src/workspace/snapshot-watch.js";
import { makeTempDir, waitFor } from "../helpers/tmp.js";
import { isAlive } from "../helpers/pids.js";

const WATCH_MODULE = path.resolve(import.meta.dirname, "../../src/workspace/snapshot-watch.ts");

let tmp: { dir: string; cleanup: () => void };
let watcher: WorkspaceWatcher | undefined;
beforeEach(() => {
  tmp = makeTempDir();
  // The root and four folders: five watches.
  for (const d of ["a", "a/b", "c", "d"]) mkdirSync(path.join(tmp.dir, "ws", d), { recursive: true });
});
afterEach(() => {
  watcher?.close();
  watcher = undefined;
  tmp.cleanup();
});

const make = (folderLimit: number) =>
  new WorkspaceWatcher(path.join(tmp.dir, "ws"), path.join(tmp.dir, "private"), 1_000, folderLimit);

describe("the snapshot watcher's share of the user's inotify watches", () => {
  it("turns itself off, and snapshots scan, when the workspace has more folders than its share", async () => {
    watcher = make(4);
    watcher.start();
    expect(await watcher.markScan()).toBeUndefined();
    expect(await watcher.changes()).toEqual({
      certain: false,
      reason:
        "the workspace has over 4 folders, half of this user's inotify watches (fs.inotify.max_user_watches), which editors need too",
    });
  });

  it("answers from its watches when the folders fit", async () => {
    watcher = make(5);
    watcher.start();
    const token = await watcher.markScan();
    expect(token).toBe(1);
    watcher.scanDone(token);
    writeFileSync(path.join(tmp.dir, "ws", "a", "b", "new.txt"), "x\n");
    expect(await watcher.changes()).toEqual({ certain: true, paths: ["a/b/new.txt"], goneDirs: [] });
    watcher.accept();
    // A sixth folder is one watch past the share: the watcher stops rather than take it.
    mkdirSync(path.join(tmp.dir, "ws", "e"));
    expect(await watcher.changes()).toEqual({
      certain: false,
      reason:
        "the workspace has over 5 folders, half of this user's inotify watches (fs.inotify.max_user_watches), which editors need too",
    });
  });

  it("removes the beacon folder a SIGKILLed process left, and keeps a live one's", async () => {
    const ws = path.join(tmp.dir, "ws");
    const privateDir = path.join(tmp.dir, "private");
    // Another process's watcher makes its beacon, says so, and is killed with nothing run at exit.
    const source = `import { WorkspaceWatcher } from ${JSON.stringify(WATCH_MODULE)};
const w = new WorkspaceWatcher(${JSON.stringify(ws)}, ${JSON.stringify(privateDir)});
w.start();
await w.markScan();
process.stdout.write("ready\\n");
setInterval(() => {}, 1000);`;
    const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", source], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    try {
      await waitFor(() => out.includes("ready\n") || undefined, 60_000);
      const theirs = readdirSync(privateDir);
      expect(theirs).toEqual([expect.stringMatching(new RegExp(`^${child.pid}-[0-9a-f]{8}$`))]);
      // While it lives, a new watcher leaves its beacon alone.
      watcher = make(100);
      watcher.start();
      await watcher.markScan();
      const both = readdirSync(privateDir);
      expect(both).toHaveLength(2);
      expect(both).toEqual(expect.arrayContaining([theirs[0], expect.stringMatching(new RegExp(`^${process.pid}-`))]));
      watcher.close();
      // Reaped, not only killed: a zombie still answers kill(pid, 0), as a live process does.
      const reaped = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGKILL");
      await reaped;
      expect(isAlive(child.pid!)).toBe(false);
      expect(readdirSync(privateDir)).toEqual(theirs);
      watcher = make(100);
      watcher.start();
      await watcher.markScan();
      expect(readdirSync(privateDir)).toEqual([expect.stringMatching(new RegExp(`^${process.pid}-`))]);
    } finally {
      child.kill("SIGKILL");
    }
  }, 90_000);
});
