import { randomBytes } from "node:crypto";
import fs, { type BigIntStats, type Dirent, type FSWatcher } from "node:fs";
import path from "node:path";
import { Worker } from "node:worker_threads";
import { isGone, lstatOrNone, removeDeadOnes, tryOr } from "./git.js";
import { GITIGNORE_FILE } from "../workspace/ignore.js";
import { createIgnoreChecker } from "../workspace/walk.js";

// Which workspace paths changed since a mark (docs/memory-and-undo.md: when an answer is certain, hard
// links). `fs.watch` per folder: libuv keeps ONE inotify queue per loop, so the beacon's event (a file
// made in a private folder outside the workspace) comes after every event queued before it.
/** How long the beacon's event may take; after WATCH_BEACON_RETRY_MS another is written (one arriving first: the queue overflowed). */
export const WATCH_BARRIER_TIMEOUT_MS = 5_000;
export const WATCH_BEACON_RETRY_MS = 50;
/** A scan this long after the last one (what inotify cannot see); past WATCH_MAX_PATHS changed paths, or WATCH_MAX_LINKED multi-link files, a scan costs less. */
export const WATCH_FULL_SCAN_MS = 10 * 60_000;
export const WATCH_MAX_PATHS = 10_000;
export const WATCH_MAX_LINKED = 2_000;
/** A multi-link file whose ctime is this close to its look may be written again in the same clock tick. */
export const WATCH_RACY_MS = 2_000;
/** The sweep's choice of folders yields to the event loop this often; its worker stops past this many times the limit. */
const SWEEP_SLICE_MS = 2;
const SWEEP_FOUND_FACTOR = 4;

/** Half an inotify limit (/proc/sys/fs/inotify/<name>; older kernels' default when not Linux). */
function halfOf(name: string, fallback: number): number {
  const limit = Number(tryOr(() => fs.readFileSync(`/proc/sys/fs/inotify/${name}`, "utf8"), "")) || fallback;
  return Math.max(1, Math.floor(limit / 2));
}
/** The most folders one watcher watches: half the user's watches, as editors and dev servers need theirs. */
export const watchFolderLimit = () => halfOf("max_user_watches", 8_192);
/** Events since a mark from which an overflow cannot be ruled out: half the kernel's queue. */
export const watchEventLimit = () => halfOf("max_queued_events", 16_384);

/** `paths` may differ (some are folders now), `goneDirs` are not the folders watched there; `looks` (undefined: gone; absent: not looked at). */
export type WatchAnswer =
  | { certain: true; paths: string[]; goneDirs: string[]; looks: ReadonlyMap<string, BigIntStats | undefined> }
  | { certain: false; reason: string };

/** `gone`: its own event said it is gone (one not flagged when it goes was moved, alive). */
type Watched = { watcher: FSWatcher; dev: number; ino: number; gone: boolean };
/** A multi-link file as last looked at; `racy`: looked at again next time whatever its key says. */
type Linked = { key: string; racy: boolean };
/** What one interval saw, cut at a mark. */
type Interval = { dirty: Set<string>; goneDirs: Set<string>; events: number; doubt?: string };

const DOT_GIT = /^\.git$/i;
const PERIODIC =
  "a periodic scan (inotify misses writes through hard links made since the last scan, and through mmap)";
/** What went wrong, for a reason: the error code when there is one. */
const said = (err: unknown) => (err as NodeJS.ErrnoException).code ?? (err as Error).message;
const fresh = (): Interval => ({ dirty: new Set(), goneDirs: new Set(), events: 0 });
const parentOf = (rel: string) => (rel.includes("/") ? rel.slice(0, rel.lastIndexOf("/")) : "");
const ignoredIn = (ignores: ReturnType<typeof createIgnoreChecker>, rel: string, dir: boolean) =>
  ignores.ignored(parentOf(rel), path.posix.basename(rel), dir);

export class WorkspaceWatcher {
  private readonly dirs = new Map<string, Watched>();
  /** Each watched folder's watched subfolders, so a folder that goes takes them with it. */
  private readonly kids = new Map<string, Set<string>>();
  private now: Interval = fresh();
  /** Watches were lost (a failure, the root moved): walked again before the next scan. */
  private broken: string | undefined;
  /** Off for good in this process. */
  private disabled: string | undefined;
  /** A scan that started after the walk, or a take from an answer, stands as the base. */
  private based = false;
  private generation = 0;
  private scannedAt = 0;
  private walking: Promise<void> | undefined;
  private beacon: { dir: string; watcher: FSWatcher; seq: number } | undefined;
  private waiting: { first: string; names: Set<string>; done: (cut: Interval) => void } | undefined;
  private linked = new Map<string, Linked>();
  /** The ignore rules of the last sweep: an ignored file is never recorded, so its links hide nothing. */
  private ignores?: ReturnType<typeof createIgnoreChecker>;
  private tooLinked: string | undefined;
  private sweeping: Promise<void> | undefined;
  private sweeper: LinkSweep | undefined;

  constructor(
    readonly root: string,
    /** A folder outside the workspace, private to the store, for the beacon. */
    private readonly privateDir: string,
    private readonly eventLimit = watchEventLimit(),
    private readonly folderLimit = watchFolderLimit(),
    private readonly linkedLimit = WATCH_MAX_LINKED,
    private readonly racyMs = WATCH_RACY_MS,
  ) {
    const rel = path.relative(root, privateDir);
    if (!rel.startsWith("..") && !path.isAbsolute(rel))
      this.disabled = "the snapshot store lies inside the workspace (the beacon would be a change)";
  }

  /** Starts watching (the walk runs in the background); later calls do nothing. */
  start(): void {
    if (!this.disabled) this.walking ??= this.walk();
  }

  /** A scan starts now: what changed before is its to find. Returns the token for scanDone (undefined: off). */
  async markScan(): Promise<number | undefined> {
    if (this.disabled) return undefined;
    if (!this.walking || this.broken) this.walking = this.walk();
    await this.walking;
    if (this.disabled || this.broken) return undefined;
    this.now = fresh();
    this.based = false;
    const generation = ++this.generation;
    // Beside the scan (its git is another process); what it finds is read at the next answer.
    this.sweeping = this.sweep(generation).catch((err: unknown) => {
      if (generation !== this.generation || this.disabled !== undefined) return; // a later sweep stands
      this.linked.clear();
      this.tooLinked = `the hard-link sweep failed (${(err as Error).message})`;
    });
    return generation;
  }

  /** The scan markScan's `token` started is recorded: answers are relative to it from now on. */
  scanDone(token: number | undefined): void {
    if (token === undefined || token !== this.generation || this.disabled || this.broken) return;
    this.based = true;
    this.scannedAt = Date.now();
  }

  /** What changed since the last mark; a mark is made now. A certain answer's taker calls accept() once it is recorded. */
  async changes(): Promise<WatchAnswer> {
    const based = this.based;
    this.based = false;
    const uncertain = (reason: string): WatchAnswer => ({ certain: false, reason });
    if (this.disabled ?? this.broken) return uncertain((this.disabled ?? this.broken)!);
    if (!based) return uncertain("no scan since the watch began or since the last failure");
    await this.sweeping;
    if (this.tooLinked) return uncertain(this.tooLinked);
    if (Date.now() - this.scannedAt >= WATCH_FULL_SCAN_MS) return uncertain(PERIODIC);
    const cut = await this.barrier();
    // Turned off while the beacon was on its way (its folder went with it): that is the reason.
    if (this.disabled ?? this.broken) return uncertain((this.disabled ?? this.broken)!);
    if (!cut) return uncertain(`the watcher's beacon took over ${WATCH_BARRIER_TIMEOUT_MS} ms`);
    if (cut.doubt) return uncertain(cut.doubt);
    if (cut.events >= this.eventLimit)
      return uncertain(`${cut.events} events since the last snapshot: inotify's queue may have overflowed`);
    const looks = new Map<string, BigIntStats | undefined>();
    for (const rel of [...cut.goneDirs, ...cut.dirty]) {
      const st = look(this.abs(rel));
      if (st !== UNKNOWN) looks.set(rel, st);
    }
    this.relook(cut.dirty, looks);
    if (this.tooLinked) return uncertain(this.tooLinked);
    if (cut.dirty.size > WATCH_MAX_PATHS) return uncertain(`over ${WATCH_MAX_PATHS} paths changed`);
    return { certain: true, paths: [...cut.dirty], goneDirs: [...cut.goneDirs], looks };
  }

  /** The snapshot made from the last certain answer is recorded: it is the base of the next. */
  accept(): void {
    if (!this.disabled && !this.broken) this.based = true;
  }

  /** Ends every watch and removes the beacon's folder. */
  close(): void {
    this.sweeper?.stop();
    this.disable("closed");
  }

  /** Multi-link files looked at again (those that moved join `dirty`); those events named join when they have links now. */
  private relook(dirty: Set<string>, looks: Map<string, BigIntStats | undefined>): void {
    for (const [rel, was] of this.linked) {
      if (dirty.has(rel)) continue;
      const st = look(this.abs(rel));
      if (st === UNKNOWN)
        dirty.add(rel); // the reader finds out what it can
      else if (!st?.isFile() || was.racy || keyOf(st) !== was.key) {
        dirty.add(rel);
        looks.set(rel, st);
      } else if (st.nlink > 1n) this.linked.set(rel, this.linkedOf(st));
      else this.linked.delete(rel);
    }
    // Every path looked at is in `dirty` (a gone folder was marked as it went).
    for (const [rel, st] of looks)
      if (st?.isFile() && st.nlink > 1n && !this.ignores?.pathIgnored(rel, false))
        this.linked.set(rel, this.linkedOf(st));
      else this.linked.delete(rel);
    if (this.linked.size > this.linkedLimit) this.overLinked();
  }

  private linkedOf(st: BigIntStats): Linked {
    return { key: keyOf(st), racy: Number(st.ctimeNs / 1_000_000n) > Date.now() - this.racyMs };
  }

  private overLinked(): void {
    this.tooLinked = `over ${this.linkedLimit} files have more than one link (a write through another link gives no event)`;
    this.linked.clear();
  }

  /** The sweep, beside the scan: a file it finds is read at the next answer (a write between the two would hide in its look). */
  private async sweep(generation: number): Promise<void> {
    this.sweeper?.stop();
    const ignores = createIgnoreChecker(this.root);
    this.ignores = ignores;
    const stale = () => generation !== this.generation || this.disabled !== undefined;
    const ignoredDir = new Map<string, boolean>();
    let slice = performance.now();
    for (const rel of [...this.dirs.keys()]) {
      if (performance.now() - slice >= SWEEP_SLICE_MS) {
        await new Promise((resolve) => setImmediate(resolve));
        slice = performance.now();
        if (stale()) return;
      }
      // A folder below an ignored one is ignored; one whose parent came later (watched again since) is asked whole.
      const parent = ignoredDir.get(parentOf(rel));
      const ignored = () =>
        parent === undefined ? ignores.pathIgnored(rel, true) : parent || ignoredIn(ignores, rel, true);
      ignoredDir.set(rel, rel !== "" && ignored());
    }
    if (stale()) return;
    const kept = [...ignoredDir].filter(([, ignored]) => !ignored).map(([rel]) => rel);
    this.sweeper = sweepLinks(this.root, kept, this.linkedLimit * SWEEP_FOUND_FACTOR, DOT_GIT);
    const found = await this.sweeper.result;
    if (stale()) return;
    this.linked = new Map();
    for (const rel of found.found) if (!ignoredIn(ignores, rel, false)) this.linked.set(rel, { key: "", racy: true });
    this.tooLinked = undefined;
    if (found.over || this.linked.size > this.linkedLimit) this.overLinked();
  }

  private readonly abs = (rel: string) => (rel ? path.join(this.root, rel) : this.root);

  /** Watches every folder of the workspace, each read in the thread pool (a step meanwhile is not held up). */
  private async walk(): Promise<void> {
    this.closeAll();
    this.broken = undefined;
    const failed = (err: unknown) => this.disable(`the watcher's beacon could not be made: ${(err as Error).message}`);
    if (tryOr(() => this.openBeacon(), failed) === false) return;
    await this.visit("", false, (rel) => fs.promises.readdir(this.abs(rel), { withFileTypes: true }));
  }

  /** Watches `top` and each folder below before reading it (nothing made meanwhile is lost); `appeared`: entries are changes. */
  private async visit(top: string, appeared: boolean, read: (rel: string) => Dirent[] | Promise<Dirent[]>) {
    for (const stack = [top]; stack.length > 0 && !this.disabled && !this.broken; ) {
      const rel = stack.pop()!;
      if (!this.add(rel)) {
        if (rel === "" && !this.disabled) this.broken ??= "the workspace folder could not be watched";
        continue;
      }
      const entries = await (async () => read(rel))().catch((err: unknown) => this.unread(rel, err, appeared));
      for (const e of entries ?? []) {
        const child = rel ? `${rel}/${e.name}` : e.name;
        if (DOT_GIT.test(e.name)) {
          if (appeared) this.now.doubt ??= `${child} appeared (a nested repository)`;
          continue;
        }
        if (appeared) this.mark(child);
        if (e.isDirectory()) stack.push(child);
      }
    }
  }

  /** A folder that could not be read: gone (its parent's event says so), or the watch is lost (`appeared`) or off. */
  private unread(rel: string, err: unknown, appeared: boolean): undefined {
    const why = `${rel || "the workspace"} could not be read: ${said(err)}`;
    if (isGone(err)) return;
    if (appeared) this.broken ??= why;
    else this.disable(why);
  }

  /** Watches folder `rel` (not its subfolders); false when it is not a folder now, or already watched. */
  private add(rel: string): boolean {
    if (this.dirs.has(rel) || this.disabled) return false;
    const abs = this.abs(rel);
    for (let attempt = 0; attempt < 3; attempt++) {
      const before = lstatOrNone(abs);
      if (!before?.isDirectory()) return false;
      const limit = `the workspace has over ${this.folderLimit} folders, half of this user's inotify watches`;
      if (this.dirs.size >= this.folderLimit)
        return this.disable(`${limit} (fs.inotify.max_user_watches), which editors need too`);
      let watcher: FSWatcher;
      try {
        // As `<folder>/.`: libuv names the folder's own events (deleted, moved) by the watched path's last part.
        watcher = fs.watch(`${abs}/.`, { persistent: false, encoding: "buffer" }, (_type, name) =>
          this.onEvent(rel, watcher, name),
        );
      } catch (err) {
        return !isGone(err) && this.disable(`${rel || "the workspace"} could not be watched: ${said(err)}`);
      }
      watcher.on("error", (err: Error) => void (this.broken ??= `a watch failed: ${said(err)}`));
      const after = lstatOrNone(abs);
      if (after?.ino === before.ino && after.dev === before.dev) {
        this.dirs.set(rel, { watcher, dev: before.dev, ino: before.ino, gone: false });
        if (rel) this.kids.set(parentOf(rel), (this.kids.get(parentOf(rel)) ?? new Set()).add(rel));
        return true;
      }
      watcher.close(); // replaced between the look and the watch: the watch may be on the old folder
    }
    this.now.doubt ??= `${rel} kept being replaced while it was being watched`;
    return false;
  }

  private onEvent(rel: string, from: FSWatcher, raw: Buffer | null): void {
    this.now.events++;
    const entry = this.dirs.get(rel);
    if (entry?.watcher !== from) return; // a watch already ended: its folder's place was looked at then
    const name = raw?.toString() ?? "";
    if (!raw) this.now.doubt ??= "an event came without a name";
    else if (!Buffer.from(name).equals(raw)) this.now.doubt ??= "a name that is not UTF-8 changed";
    else if (name === ".") {
      // The folder itself was deleted or moved: a folder made in its place is watched and read anew.
      entry.gone = true;
      if (rel === "") this.broken ??= "the workspace folder was moved or deleted";
      else this.touch(rel);
    } else if (!DOT_GIT.test(name)) this.touch(rel ? `${rel}/${name}` : name);
    else if (rel !== "") this.now.doubt ??= `${rel}/${name} changed (a nested repository)`;
  }

  /** `rel` may have changed: marked, and its watches brought in line with what it is now. */
  private touch(rel: string): void {
    this.mark(rel);
    const old = this.dirs.get(rel);
    const st = old && lstatOrNone(this.abs(rel));
    if (old && (old.gone || !st?.isDirectory() || st.ino !== old.ino || st.dev !== old.dev)) this.drop(rel);
    if (this.dirs.has(rel)) return;
    // Read at once: the visit ends before the next event is handled.
    void this.visit(rel, true, (dir) => fs.readdirSync(this.abs(dir), { withFileTypes: true }));
  }

  private mark(rel: string): void {
    this.now.dirty.add(rel);
    if (path.posix.basename(rel) === GITIGNORE_FILE) this.now.doubt ??= `${rel} changed (ignore rules)`;
  }

  /** Folder `rel` is not the one watched there any more: its watches and its subfolders' end. */
  private drop(rel: string): void {
    this.now.goneDirs.add(rel);
    this.kids.get(parentOf(rel))?.delete(rel);
    for (const stack = [rel]; stack.length > 0; ) {
      const r = stack.pop()!;
      const entry = this.dirs.get(r);
      if (entry && !entry.gone) this.now.doubt ??= `the folder ${r} was moved`; // its watch's queued events go as it closes
      entry?.watcher.close();
      this.dirs.delete(r);
      stack.push(...(this.kids.get(r) ?? []));
      this.kids.delete(r);
    }
  }

  private openBeacon(): void {
    if (this.beacon) return;
    fs.mkdirSync(this.privateDir, { recursive: true, mode: 0o700 });
    removeDeadOnes(this.privateDir, /^(\d+)-/); // beacon folders (`<pid>-<random>`): a killed process leaves its own
    const dir = path.join(this.privateDir, `${process.pid}-${randomBytes(4).toString("hex")}`);
    fs.mkdirSync(dir, { mode: 0o700 });
    const watcher = fs.watch(dir, { persistent: false }, (_type, name) => this.onBeacon(name));
    watcher.on("error", (err: Error) => void (this.broken ??= `the watcher's beacon failed: ${err.message}`));
    this.beacon = { dir, watcher, seq: 0 };
    beaconDirs.add(dir);
  }

  /** The interval cut when the beacon's event comes (every earlier event handled); undefined past the deadline. */
  private barrier(): Promise<Interval | undefined> {
    const beacon = this.beacon;
    if (!beacon) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const names = new Set<string>();
      const end = (cut?: Interval) => {
        clearTimeout(deadline);
        clearInterval(retry);
        this.waiting = undefined;
        for (const n of names) fs.rmSync(path.join(beacon.dir, n), { force: true });
        resolve(cut);
      };
      const write = () => {
        names.add(`b${++beacon.seq}`);
        if (tryOr(() => fs.writeFileSync(path.join(beacon.dir, `b${beacon.seq}`), ""), false) === false) end();
      };
      this.waiting = { first: `b${beacon.seq + 1}`, names, done: end };
      // Both before the first write: one that fails ends the wait at once.
      const deadline = setTimeout(end, WATCH_BARRIER_TIMEOUT_MS);
      const retry = setInterval(write, WATCH_BEACON_RETRY_MS);
      write();
    });
  }

  private onBeacon(name: string | null): void {
    const waiting = this.waiting;
    if (!waiting || name === null || !waiting.names.has(name)) return;
    const cut = this.now;
    this.now = fresh();
    // A later beacon first: the first one's event was dropped, so the queue overflowed.
    if (name !== waiting.first) cut.doubt ??= "inotify's queue overflowed (the watcher's beacon was lost)";
    waiting.done(cut);
  }

  private disable(reason: string): false {
    this.disabled ??= reason;
    this.closeAll();
    return false;
  }

  private closeAll(): void {
    for (const entry of this.dirs.values()) entry.watcher.close();
    this.dirs.clear();
    this.kids.clear();
    this.based = false;
    if (this.disabled && this.beacon) {
      this.beacon.watcher.close();
      fs.rmSync(this.beacon.dir, { recursive: true, force: true });
      beaconDirs.delete(this.beacon.dir);
      this.beacon = undefined;
    }
  }
}

/** Beacon folders of this process, removed when it exits. */
const beaconDirs = new Set<string>();
process.once("exit", () => beaconDirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));
const UNKNOWN = "unknown";
/** What a path is now (not following a symlink): undefined when gone, UNKNOWN when it cannot be looked at. */
const look = (abs: string): BigIntStats | undefined | typeof UNKNOWN =>
  tryOr(
    () => fs.lstatSync(abs, { bigint: true }),
    (err) => (isGone(err) ? undefined : UNKNOWN),
  );

/** What a write moves: ctime always (the kernel sets it), the rest as it happens. */
const keyOf = (st: BigIntStats) => `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;

/** The sweep's worker, as text to run the same from the bundle; on the main thread its lstats cost an edit step 170–240 ms. */
const SWEEP_SCRIPT = `
const { parentPort, workerData: w } = require("node:worker_threads");
const fs = require("node:fs");
const skip = new RegExp(w.skipSource, w.skipFlags);
const tryOr = (f, none) => { try { return f(); } catch { return none; } };
const found = [];
for (const dir of w.dirs) {
  if (found.length > w.limit) break;
  for (const e of tryOr(() => fs.readdirSync(w.root + (dir ? "/" + dir : ""), { withFileTypes: true }), [])) {
    const rel = dir ? dir + "/" + e.name : e.name;
    const st = e.isFile() && !skip.test(e.name) && tryOr(() => fs.lstatSync(w.root + "/" + rel, { throwIfNoEntry: false }));
    if (st && st.isFile() && st.nlink > 1 && found.length <= w.limit) found.push(rel);
  }
}
parentPort.postMessage({ found, over: found.length > w.limit });
`;

/** `found`: paths of regular files with more than one link; `over`: more than the limit (found holds limit + 1). */
type LinkSweepResult = { found: string[]; over: boolean };
/** `result` rejects when the worker failed or was stopped. */
type LinkSweep = { result: Promise<LinkSweepResult>; stop(): void };

/** Sweeps `dirs` ("" for the root) of `root` in a worker thread that does not keep the process alive; names `skip` matches are left out. */
export function sweepLinks(root: string, dirs: string[], limit: number, skip: RegExp): LinkSweep {
  const workerData = { root, dirs, limit, skipSource: skip.source, skipFlags: skip.flags };
  // Its output would land in the middle of the terminal's; it has nothing to say.
  const worker = new Worker(SWEEP_SCRIPT, { eval: true, workerData, stdout: true, stderr: true });
  worker.unref();
  let stopped = false;
  const result = new Promise<LinkSweepResult>((resolve, reject) => {
    worker.once("message", (message: LinkSweepResult) => (resolve(message), void worker.terminate()));
    worker.once("error", reject);
    worker.once("exit", (exit) =>
      reject(new Error(stopped ? "stopped" : `the sweep's worker ended with code ${exit} before answering`)),
    );
  });
  return { result, stop: () => ((stopped = true), void worker.terminate()) };
}
