import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "@jest/globals";
import { WorkspaceWatcher } from "../../src/workspace/snapshot-watch.js";
import { makeTempDir } from "../helpers/tmp.js";

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
});
