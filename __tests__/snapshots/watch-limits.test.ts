import { spawn } from "node:child_process";
import { mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "@jest/globals";
import { linkSync, statSync } from "node:fs";
import { WorkspaceWatcher, type WatchAnswer } from "../../src/snapshots/watch.js";
import { makeTempDir, waitFor } from "../helpers/tmp.js";
import { isAlive } from "../helpers/pids.js";

const WATCH_MODULE = path.resolve(import.meta.dirname, "../../src/snapshots/watch.ts");

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

/** An answer with its looks named by path (what was looked at, and whether it was there). */
const plain = (answer: WatchAnswer) => {
  if (!answer.certain) return answer;
  const { looks, ...rest } = answer;
  return { ...rest, paths: rest.paths.sort(), looked: [...looks.keys()].sort() };
};

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
    expect(plain(await watcher.changes())).toEqual({
      certain: true,
      paths: ["a/b/new.txt"],
      goneDirs: [],
      looked: ["a/b/new.txt"],
    });
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

describe("files with more than one link (a write through a link outside the workspace gives no event)", () => {
  /** Beside the workspace, so on its file system: a hard link cannot cross one. */
  const outside = (name: string) => path.join(tmp.dir, "outside", name);
  const ws = (rel: string) => path.join(tmp.dir, "ws", rel);
  const linked = (linkedLimit: number, racyMs: number) =>
    new WorkspaceWatcher(ws(""), path.join(tmp.dir, "private"), 1_000, 100, linkedLimit, racyMs);
  const scanned = async (w: WorkspaceWatcher) => {
    w.start();
    const token = await w.markScan();
    w.scanDone(token);
  };
  beforeEach(() => mkdirSync(path.join(tmp.dir, "outside")));

  it("finds a write through a link made before the scan, and a file an event named that has links now", async () => {
    writeFileSync(ws("a/linked.txt"), "one\n");
    linkSync(ws("a/linked.txt"), outside("linked"));
    expect(statSync(outside("linked")).dev).toBe(statSync(ws("a")).dev);
    // Not racy (0 ms): only a changed inode, size or time counts, so the sizes differ here.
    watcher = linked(10, 0);
    await scanned(watcher);
    const once = { certain: true, paths: ["a/linked.txt"], goneDirs: [], looked: ["a/linked.txt"] };
    // The sweep ran beside the scan: what it found is read once, then only when it moved.
    expect(plain(await watcher.changes())).toEqual(once);
    watcher.accept();
    expect(plain(await watcher.changes())).toEqual({ certain: true, paths: [], goneDirs: [], looked: [] });
    watcher.accept();
    writeFileSync(outside("linked"), "two, longer\n");
    expect(plain(await watcher.changes())).toEqual(once);
    watcher.accept();
    expect(plain(await watcher.changes())).toEqual({ certain: true, paths: [], goneDirs: [], looked: [] });
    watcher.accept();
    // Made in the workspace (an event), then linked from outside (none): it joins, from its event.
    writeFileSync(ws("c/new.txt"), "new\n");
    linkSync(ws("c/new.txt"), outside("new"));
    expect(plain(await watcher.changes())).toEqual({
      certain: true,
      paths: ["c/new.txt"],
      goneDirs: [],
      looked: ["c/new.txt"],
    });
    watcher.accept();
    writeFileSync(outside("new"), "written from outside\n");
    expect(plain(await watcher.changes())).toMatchObject({ certain: true, paths: ["c/new.txt"] });
  });

  it("looks again at a file whose ctime was too close to its look (a write in the same clock tick moves no time)", async () => {
    writeFileSync(ws("d/racy.txt"), "one\n");
    linkSync(ws("d/racy.txt"), outside("racy"));
    // Every ctime is close to its look within an hour: the file is named at each answer.
    watcher = linked(10, 3_600_000);
    await scanned(watcher);
    for (let i = 0; i < 2; i++) {
      expect(plain(await watcher.changes())).toEqual({
        certain: true,
        paths: ["d/racy.txt"],
        goneDirs: [],
        looked: ["d/racy.txt"],
      });
      watcher.accept();
    }
  });

  it("leaves out the ignored files' links (never recorded, so a write through one hides nothing), as a pnpm node_modules has them", async () => {
    writeFileSync(ws(".gitignore"), "c/\n*.cache\n");
    // Over the limit of 2 if they counted: three in an ignored folder, one ignored by name.
    for (const name of ["c/p1", "c/p2", "c/p3", "a/x.cache", "a/kept.txt"]) {
      writeFileSync(ws(name), `${name}\n`);
      linkSync(ws(name), outside(name.replace("/", "-")));
    }
    watcher = linked(2, 0);
    await scanned(watcher);
    // Only the recorded file is read once (the sweep ran beside the scan) and then looked at.
    const once = { certain: true, paths: ["a/kept.txt"], goneDirs: [], looked: ["a/kept.txt"] };
    expect(plain(await watcher.changes())).toEqual(once);
    watcher.accept();
    writeFileSync(outside("c-p1"), "through the ignored link\n");
    writeFileSync(outside("a-x.cache"), "through the ignored link\n");
    expect(plain(await watcher.changes())).toEqual({ certain: true, paths: [], goneDirs: [], looked: [] });
    watcher.accept();
    // One made in an ignored folder where an event sees it does not join either.
    writeFileSync(ws("c/p4"), "p4\n");
    linkSync(ws("c/p4"), outside("c-p4"));
    const seen = plain(await watcher.changes());
    expect(seen).toEqual({ certain: true, paths: ["c/p4"], goneDirs: [], looked: ["c/p4"] });
    watcher.accept();
    writeFileSync(outside("c-p4"), "through the ignored link\n");
    expect(plain(await watcher.changes())).toEqual({ certain: true, paths: [], goneDirs: [], looked: [] });
  });

  it("counts as too many when the sweep's own bound (4 × the limit) is passed, ignored files included", async () => {
    writeFileSync(ws(".gitignore"), "*.cache\n");
    // Nine ignored by name: past the worker's bound of 8 for a limit of 2, so the safe side.
    for (let i = 0; i < 9; i++) {
      writeFileSync(ws(`a/${i}.cache`), `${i}\n`);
      linkSync(ws(`a/${i}.cache`), outside(`${i}.cache`));
    }
    watcher = linked(2, 0);
    await scanned(watcher);
    expect(await watcher.changes()).toEqual({
      certain: false,
      reason: "over 2 files have more than one link (a write through another link gives no event)",
    });
  });

  it("gives way to a scan, saying why, when more files have links than it looks at", async () => {
    for (const name of ["x", "y", "z"]) {
      writeFileSync(ws(`a/${name}`), `${name}\n`);
      linkSync(ws(`a/${name}`), outside(name));
    }
    watcher = linked(2, 0);
    await scanned(watcher);
    const over = {
      certain: false,
      reason: "over 2 files have more than one link (a write through another link gives no event)",
    };
    expect(await watcher.changes()).toEqual(over);
    // Fewer after the next scan's sweep: answers again, reading what the sweep found once.
    rmSync(outside("z"));
    const token = await watcher.markScan();
    watcher.scanDone(token);
    expect(plain(await watcher.changes())).toEqual({
      certain: true,
      paths: ["a/x", "a/y"],
      goneDirs: [],
      looked: ["a/x", "a/y"],
    });
    watcher.accept();
    expect(plain(await watcher.changes())).toEqual({ certain: true, paths: [], goneDirs: [], looked: [] });
    watcher.accept();
    // One more made where an event sees it: over again.
    writeFileSync(ws("c/w"), "w\n");
    linkSync(ws("c/w"), outside("w"));
    expect(await watcher.changes()).toEqual(over);
  });
});
