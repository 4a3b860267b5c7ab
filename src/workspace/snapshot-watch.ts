import { randomBytes } from "node:crypto";
import {
  lstatSync,
  type BigIntStats,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  watch,
  writeFileSync,
  type Dirent,
  type FSWatcher,
} from "node:fs";
import { readdir } from "node:fs/promises";
import path from "node:path";
import { sweepLinks, type LinkSweep, type LinkSweepResult } from "./link-sweep.js";
import { pidAlive } from "./session-processes.js";
import { createIgnoreChecker } from "./walk.js";

type IgnoreChecker = ReturnType<typeof createIgnoreChecker>;

/**
 * Which workspace paths changed since a mark (issue 30: a command step's whole snapshot costs
 * what changed, not a `git status` of every file). Node's own `fs.watch`, one non-recursive
 * watch per folder: libuv keeps ONE inotify descriptor per event loop, so every watch, and the
 * beacon below, share one queue and their events arrive in the order they happened.
 *
 * An answer is only ever "certain" when nothing can have been missed; otherwise the caller scans
 * (snapshot-scan.ts), and the watcher is trusted again from that scan's start. Not certain:
 * - before the first walk ended, or before a scan that started after it (the mark a scan makes);
 * - a folder could not be watched (ENOSPC: fs.inotify.max_user_watches, EMFILE, EACCES…), or
 *   the workspace has more folders than half the user's watches (watchFolderLimit): the watcher
 *   turns off for good in this process;
 * - WATCH_EVENT_LIMIT or more events came since the mark: inotify's queue may have overflowed,
 *   and libuv drops the overflow notice (wd -1) without telling anyone;
 * - a watched folder was moved while alive (its queued events are dropped when its watch closes),
 *   or the workspace root itself was moved or deleted (then the folders are walked again);
 * - a `.gitignore` changed (what the scan records depends on it), or a `.git` appeared or went
 *   below the root (a nested repository is recorded as a gitlink), or a name is not UTF-8;
 * - the beacon's event did not come within WATCH_BARRIER_TIMEOUT_MS;
 * - over WATCH_MAX_LINKED files have more than one link (see below);
 * - WATCH_FULL_SCAN_MS passed since the last scan: inotify does not see writes through a hard
 *   link made from outside the workspace after the last scan, nor through mmap, so a scan now and
 *   then catches them (MINI_CURSOR_SNAPSHOT_WATCH=off scans every time).
 *
 * Hard links: a folder's watch sees only what is done through that folder's names, so a write
 * through a name outside the workspace (`ln ws/a /elsewhere/x; echo hi > /elsewhere/x`) gives no
 * event. Every scan's mark therefore lstat's every file of the watched folders (the sweep,
 * beside the scan) and keeps the regular files with more than one link; the next answer reads
 * them all, and every answer after lstat's them again: one whose inode, size, mtime or ctime
 * moved is changed (a write always moves ctime). One whose ctime was within WATCH_RACY_MS of its
 * look is read again next time (a write in the same clock tick leaves the times as they were). Files that events name and that now have more than
 * one link join them. A link made from outside after the sweep gives no event at all: the
 * command steps that visibly make one scan (agent/link-commands.ts); others wait for the
 * periodic scan.
 *
 * The barrier: before answering, a file is made in a private folder outside the workspace (under
 * the snapshot store) that is also watched; when its event comes, every event queued before it
 * has been handled (same queue), and the set of changed paths is cut there, synchronously.
 * Handling is synchronous in the event callback: a name that is now a folder is watched first,
 * then read whole, everything in it marked changed (`mkdir -p a/b && echo > a/b/f` is not lost).
 */

/** How long the beacon's event may take before the answer is "not certain". */
export const WATCH_BARRIER_TIMEOUT_MS = 5_000;
/**
 * A beacon not seen after this long is written again: a full queue drops events, the beacon's too,
 * and a later beacon arriving first proves that it overflowed (no need to wait for the deadline).
 */
export const WATCH_BEACON_RETRY_MS = 50;
/** A whole snapshot at least this long after the last scan scans again (what inotify cannot see). */
export const WATCH_FULL_SCAN_MS = 10 * 60_000;
/** More changed paths than this in one step: a scan is cheaper than reading them one by one. */
export const WATCH_MAX_PATHS = 10_000;
/** More multi-link files than this: every whole snapshot scans (lstat'ing them each time costs as much). */
export const WATCH_MAX_LINKED = 2_000;
/**
 * A multi-link file whose ctime is this close to the moment it was looked at may have been
 * written again in the same clock tick without its times moving: looked at again next time.
 */
export const WATCH_RACY_MS = 2_000;
/**
 * How long the sweep's choice of folders runs before letting the event loop turn: a step that runs
 * meanwhile waits up to this at each of its own turns.
 */
const SWEEP_SLICE_MS = 2;
/**
 * The worker stops after this many times WATCH_MAX_LINKED multi-link files, ignored ones included
 * (those are left out here, after it answers): past that it is taken as too many, the safe side
 * (every whole snapshot scans), and the sweep's answer stays small.
 */
const SWEEP_FOUND_FACTOR = 4;

/** inotify's queue length when /proc does not say (fs.inotify.max_queued_events). */
export const DEFAULT_MAX_QUEUED_EVENTS = 16_384;
/** Events since a mark from which an overflow cannot be ruled out: a share of the kernel's queue. */
export const WATCH_EVENT_SHARE = 0.5;

/** The kernel's watch limit when /proc does not say (fs.inotify.max_user_watches; older kernels' default). */
export const DEFAULT_MAX_USER_WATCHES = 8_192;
/**
 * The share of the user's inotify watches one workspace may take: editors and dev servers the
 * person runs need theirs too, and a watch limit reached makes their watching fail, not ours.
 */
export const WATCH_SHARE_OF_USER_WATCHES = 0.5;

/** A share of one of the kernel's inotify limits (/proc/sys/fs/inotify/<name>), at least 1; `fallback` when /proc does not say. */
function shareOfInotifyLimit(name: string, fallback: number, share: number): number {
  let limit = fallback;
  try {
    const n = Number(readFileSync(`/proc/sys/fs/inotify/${name}`, "utf8").trim());
    if (Number.isInteger(n) && n > 0) limit = n;
  } catch {
    // not Linux, or no /proc: the kernel's default
  }
  return Math.max(1, Math.floor(limit * share));
}

/** The most folders one watcher watches; past it the watcher turns off and snapshots scan. */
export function watchFolderLimit(): number {
  return shareOfInotifyLimit("max_user_watches", DEFAULT_MAX_USER_WATCHES, WATCH_SHARE_OF_USER_WATCHES);
}

/** The event count from which an answer is not certain: well below the kernel's queue length. */
export function watchEventLimit(): number {
  return shareOfInotifyLimit("max_queued_events", DEFAULT_MAX_QUEUED_EVENTS, WATCH_EVENT_SHARE);
}

/** What changed since the last mark, or why that cannot be told. */
export type WatchAnswer =
  | {
      certain: true;
      /** Workspace-relative paths that may differ from the last snapshot (some are folders now). */
      paths: string[];
      /** Paths that were watched folders and are not that folder any more (their old entries must go). */
      goneDirs: string[];
      /**
       * What each of `paths` and `goneDirs` was when the answer was made (lstat; undefined: gone;
       * absent: it could not be looked at), looked at before anything of it is read, so the
       * reader need not look again.
       */
      looks: ReadonlyMap<string, BigIntStats | undefined>;
    }
  | { certain: false; reason: string };

interface Watched {
  watcher: FSWatcher;
  dev: number;
  ino: number;
  /** Its own event said it is gone (deleted); one still unflagged when it goes was moved, alive. */
  gone: boolean;
}

/** A multi-link file as last looked at. */
interface Linked {
  key: string;
  /** Its ctime was too close to the look: looked at again next time, whatever the key says. */
  racy: boolean;
}

/** What one interval saw: cut at a mark. */
interface Interval {
  dirty: Set<string>;
  goneDirs: Set<string>;
  events: number;
  doubt: string | undefined;
}

const DOT_GIT = /^\.git$/i;
const IGNORE_FILE = ".gitignore";
const code = (err: unknown) => (err as NodeJS.ErrnoException).code;

export class WorkspaceWatcher {
  private readonly dirs = new Map<string, Watched>();
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
  /** Regular files of the workspace with more than one link, by path (see the hard links above). */
  private linked = new Map<string, Linked>();
  /**
   * The ignore rules as the last sweep read them: ignored files are never recorded, so a link of
   * theirs hides nothing (a pnpm node_modules is mostly hard links). A rule change makes a scan,
   * and with it a sweep that reads them again.
   */
  private ignores?: IgnoreChecker;
  /** Set when there were over WATCH_MAX_LINKED of them: no answer is certain until a sweep finds fewer. */
  private tooLinked: string | undefined;
  /** The sweep of the last scan's mark, while it runs. */
  private sweeping: Promise<void> | undefined;
  /** Its worker thread, while that runs. */
  private sweeper: LinkSweep | undefined;

  constructor(
    readonly root: string,
    /** A folder outside the workspace, private to the snapshot store, for the beacon. */
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

  /**
   * A scan starts now: what changed before is the scan's to find. Waits for the walk (again,
   * when watches were lost). Returns the token to hand to scanDone, or undefined when off.
   */
  async markScan(): Promise<number | undefined> {
    if (this.disabled) return undefined;
    if (!this.walking || this.broken) this.walking = this.walk();
    await this.walking;
    if (this.disabled || this.broken) return undefined;
    this.now = fresh();
    this.based = false;
    const generation = ++this.generation;
    // Beside the scan (its git runs in another process): what it finds is read at the next answer.
    this.sweeping = this.sweep(generation).catch((err: unknown) => {
      // Never a rejection nobody awaits: the next answer is uncertain instead, and says why.
      if (generation !== this.generation || this.disabled !== undefined) return; // stopped: a later sweep stands
      this.linked.clear();
      this.tooLinked = `the hard-link sweep failed (${(err as Error).message})`;
    });
    return generation;
  }

  /** The scan that markScan's `token` started is recorded: answers are relative to it from now on. */
  scanDone(token: number | undefined): void {
    if (token === undefined || token !== this.generation || this.disabled || this.broken) return;
    this.based = true;
    this.scannedAt = Date.now();
  }

  /**
   * What changed since the last mark (a scan's start or the last answer); a mark is made now.
   * After a certain answer the caller records those paths and calls accept(); when it cannot,
   * the next answer is not certain, and it scans.
   */
  async changes(): Promise<WatchAnswer> {
    const based = this.based;
    this.based = false;
    const off = this.disabled ?? this.broken;
    if (off) return { certain: false, reason: off };
    if (!based) return { certain: false, reason: "no scan since the watch began or since the last failure" };
    await this.sweeping;
    if (this.tooLinked) return { certain: false, reason: this.tooLinked };
    if (Date.now() - this.scannedAt >= WATCH_FULL_SCAN_MS)
      return {
        certain: false,
        reason: "a periodic scan (inotify misses writes through hard links made since the last scan, and through mmap)",
      };
    const cut = await this.barrier();
    // Turned off while the beacon was on its way (its folder went with it): that is the reason.
    const off2 = this.disabled ?? this.broken;
    if (off2) return { certain: false, reason: off2 };
    if (!cut) return { certain: false, reason: `the watcher's beacon took over ${WATCH_BARRIER_TIMEOUT_MS} ms` };
    if (cut.doubt) return { certain: false, reason: cut.doubt };
    if (cut.events >= this.eventLimit)
      return {
        certain: false,
        reason: `${cut.events} events since the last snapshot: inotify's queue may have overflowed`,
      };
    if (cut.dirty.size > WATCH_MAX_PATHS) return { certain: false, reason: `over ${WATCH_MAX_PATHS} paths changed` };
    const looks = new Map<string, BigIntStats | undefined>();
    for (const rel of [...cut.goneDirs, ...cut.dirty]) {
      const st = look(this.abs(rel));
      if (st !== UNKNOWN) looks.set(rel, st);
    }
    this.relook(cut.dirty, looks);
    if (this.tooLinked) return { certain: false, reason: this.tooLinked };
    if (cut.dirty.size > WATCH_MAX_PATHS) return { certain: false, reason: `over ${WATCH_MAX_PATHS} paths changed` };
    return { certain: true, paths: [...cut.dirty], goneDirs: [...cut.goneDirs], looks };
  }

  /**
   * The multi-link files, looked at again: those that moved join `dirty` (with their look);
   * those events named are taken as they are now (joining when they have more than one link).
   */
  private relook(dirty: Set<string>, looks: Map<string, BigIntStats | undefined>): void {
    for (const [rel, was] of this.linked) {
      if (dirty.has(rel)) continue;
      const st = look(this.abs(rel));
      if (st === UNKNOWN) {
        dirty.add(rel); // the reader finds out what it can; looked at again next time
        continue;
      }
      if (!st?.isFile() || was.racy || keyOf(st) !== was.key) {
        dirty.add(rel);
        looks.set(rel, st);
      } else if (st.nlink > 1n) this.linked.set(rel, this.linkedOf(st));
      else this.linked.delete(rel);
    }
    for (const rel of dirty) {
      if (!looks.has(rel)) continue; // could not be looked at: stays as it was
      const st = looks.get(rel);
      if (st?.isFile() && st.nlink > 1n && !this.ignores?.pathIgnored(rel, false))
        this.linked.set(rel, this.linkedOf(st));
      else this.linked.delete(rel);
    }
    if (this.linked.size > this.linkedLimit) this.overLinked();
  }

  private linkedOf(st: BigIntStats): Linked {
    return { key: keyOf(st), racy: Number(st.ctimeNs / 1_000_000n) > Date.now() - this.racyMs };
  }

  private overLinked(): void {
    this.tooLinked = `over ${this.linkedLimit} files have more than one link (a write through another link gives no event)`;
    this.linked.clear();
  }

  /**
   * Every file of the watched folders looked at (a scan starts): the regular files with more
   * than one link are kept. It runs beside the scan, so a file may be looked at after the scan
   * read it, and a write between would hide in the look: every file it finds is read at the next
   * answer (racy), and only that answer's look is the base. The lstat's run in a worker thread
   * (link-sweep.ts); here only the ignored folders are left out first, in slices of
   * SWEEP_SLICE_MS, and the ignored files among what it found afterwards.
   */
  private async sweep(generation: number): Promise<void> {
    this.sweeper?.stop();
    this.sweeper = undefined;
    const ignores = createIgnoreChecker(this.root);
    this.ignores = ignores;
    const stale = () => generation !== this.generation || this.disabled !== undefined;
    const dirs = await this.sweptDirs(ignores, stale);
    if (!dirs) return; // a later scan's sweep stands
    let sweeper: LinkSweep | undefined;
    let found: LinkSweepResult;
    // A worker that cannot start or fails rejects: markScan's catch makes the next answer uncertain.
    try {
      sweeper = sweepLinks(this.root, dirs, this.linkedLimit * SWEEP_FOUND_FACTOR, DOT_GIT);
      this.sweeper = sweeper;
      found = await sweeper.result;
    } finally {
      if (sweeper && this.sweeper === sweeper) this.sweeper = undefined;
    }
    if (stale()) return;
    const linked = new Map<string, Linked>();
    for (const rel of found.found) {
      const slash = rel.lastIndexOf("/");
      if (ignores.ignored(slash < 0 ? "" : rel.slice(0, slash), rel.slice(slash + 1), false)) continue;
      linked.set(rel, { key: "", racy: true });
    }
    this.linked = linked;
    this.tooLinked = undefined;
    // Over the worker's own bound, ignored ones or not: too many to be sure of (scans, the safe side).
    if (found.over || linked.size > this.linkedLimit) this.overLinked();
  }

  /**
   * The watched folders that are not ignored, parents before children (a folder below an ignored
   * one is ignored too, without asking the rules); undefined when `stale()` turned true.
   */
  private async sweptDirs(ignores: IgnoreChecker, stale: () => boolean): Promise<string[] | undefined> {
    const kept = new Set<string>();
    const skipped = new Set<string>();
    let sliceStart = performance.now();
    for (const rel of [...this.dirs.keys()]) {
      if (performance.now() - sliceStart >= SWEEP_SLICE_MS) {
        await new Promise((resolve) => setImmediate(resolve));
        sliceStart = performance.now();
        if (stale()) return undefined;
      }
      if (!rel) {
        kept.add(rel);
        continue;
      }
      const slash = rel.lastIndexOf("/");
      const parent = slash < 0 ? "" : rel.slice(0, slash);
      const ignored = skipped.has(parent)
        ? true
        : kept.has(parent)
          ? ignores.ignored(parent, rel.slice(slash + 1), true)
          : ignores.pathIgnored(rel, true); // its parent came later (watched again since)
      (ignored ? skipped : kept).add(rel);
    }
    return stale() ? undefined : [...kept];
  }

  /** The snapshot made from the last certain answer is recorded: it is the base of the next. */
  accept(): void {
    if (!this.disabled && !this.broken) this.based = true;
  }

  /** Ends every watch and removes the beacon's folder. */
  close(): void {
    this.disabled ??= "closed";
    this.sweeper?.stop();
    this.closeAll();
  }

  private abs(rel: string): string {
    return rel ? path.join(this.root, rel) : this.root;
  }

  private async walk(): Promise<void> {
    this.closeAll();
    this.broken = undefined;
    try {
      this.openBeacon();
    } catch (err) {
      this.disable(`the watcher's beacon could not be made: ${(err as Error).message}`);
      return;
    }
    const queue = [""];
    while (queue.length > 0 && !this.disabled && !this.broken) {
      const rel = queue.pop()!;
      if (!this.add(rel)) {
        if (rel === "") this.broken ??= "the workspace folder could not be watched";
        continue;
      }
      let entries: Dirent[];
      try {
        entries = await readdir(this.abs(rel), { withFileTypes: true });
      } catch (err) {
        if (code(err) === "ENOENT" || code(err) === "ENOTDIR") continue; // gone: its parent's event says so
        this.disable(`${rel || "the workspace"} could not be read: ${code(err) ?? (err as Error).message}`);
        return;
      }
      for (const e of entries) {
        if (e.isDirectory() && !DOT_GIT.test(e.name)) queue.push(rel ? `${rel}/${e.name}` : e.name);
      }
    }
  }

  /** Watches folder `rel` (not its subfolders); false when it is not a folder now, or already watched. */
  private add(rel: string): boolean {
    if (this.dirs.has(rel) || this.disabled) return false;
    const abs = this.abs(rel);
    for (let attempt = 0; attempt < 3; attempt++) {
      let before;
      try {
        before = lstatSync(abs);
      } catch {
        return false;
      }
      if (!before.isDirectory()) return false;
      if (this.dirs.size >= this.folderLimit) {
        this.disable(
          `the workspace has over ${this.folderLimit} folders, half of this user's inotify watches (fs.inotify.max_user_watches), which editors need too`,
        );
        return false;
      }
      let watcher: FSWatcher;
      try {
        // Watched as `<folder>/.`: libuv names the folder's own events (deleted, moved) by the
        // watched path's last part, and no entry is called ".".
        watcher = watch(`${abs}/.`, { persistent: false, encoding: "buffer" }, (_type, name) =>
          this.onEvent(rel, watcher, name),
        );
      } catch (err) {
        if (code(err) === "ENOENT" || code(err) === "ENOTDIR") return false;
        this.disable(`${rel || "the workspace"} could not be watched: ${code(err) ?? (err as Error).message}`);
        return false;
      }
      watcher.on("error", (err: Error) => {
        this.broken ??= `a watch failed: ${code(err) ?? err.message}`;
      });
      let after;
      try {
        after = lstatSync(abs);
      } catch {
        after = undefined;
      }
      // Replaced between the look and the watch: the watch may be on the old folder.
      if (!after || after.ino !== before.ino || after.dev !== before.dev) {
        watcher.close();
        continue;
      }
      this.dirs.set(rel, { watcher, dev: before.dev, ino: before.ino, gone: false });
      if (rel) {
        const parent = rel.includes("/") ? rel.slice(0, rel.lastIndexOf("/")) : "";
        let set = this.kids.get(parent);
        if (!set) this.kids.set(parent, (set = new Set()));
        set.add(rel);
      }
      return true;
    }
    this.now.doubt ??= `${rel} kept being replaced while it was being watched`;
    return false;
  }

  private onEvent(rel: string, from: FSWatcher, raw: Buffer | string | null): void {
    this.now.events++;
    const entry = this.dirs.get(rel);
    // A watch already ended: the folder it watched went, and its place was looked at then.
    if (entry?.watcher !== from) return;
    if (raw === null) {
      this.now.doubt ??= "an event came without a name";
      return;
    }
    const name = raw.toString();
    if (typeof raw !== "string" && !Buffer.from(name).equals(raw)) {
      this.now.doubt ??= "a name that is not UTF-8 changed";
      return;
    }
    if (name === ".") {
      // The folder itself was deleted or moved (or its watch ended): a folder made in its place,
      // even one given the same inode number, is watched and read anew.
      entry.gone = true;
      if (rel === "") this.broken ??= "the workspace folder was moved or deleted";
      else this.touch(rel);
      return;
    }
    if (DOT_GIT.test(name)) {
      if (rel !== "") this.now.doubt ??= `${rel}/${name} changed (a nested repository)`;
      return;
    }
    this.touch(rel ? `${rel}/${name}` : name);
  }

  private same(rel: string, entry: Watched): boolean {
    try {
      const st = lstatSync(this.abs(rel));
      return st.isDirectory() && st.ino === entry.ino && st.dev === entry.dev;
    } catch {
      return false;
    }
  }

  /** `rel` may have changed: marked, and its watches brought in line with what it is now. */
  private touch(rel: string): void {
    this.mark(rel);
    const old = this.dirs.get(rel);
    if (old && (old.gone || !this.same(rel, old))) this.drop(rel);
    if (!this.dirs.has(rel)) this.addTree(rel);
  }

  private mark(rel: string): void {
    this.now.dirty.add(rel);
    if (path.posix.basename(rel) === IGNORE_FILE) this.now.doubt ??= `${rel} changed (ignore rules)`;
  }

  /** A folder that appeared: watched first, then read whole, so nothing made in it meanwhile is lost. */
  private addTree(top: string): void {
    const stack = [top];
    while (stack.length > 0) {
      const rel = stack.pop()!;
      if (!this.add(rel)) continue;
      let entries: Dirent[];
      try {
        entries = readdirSync(this.abs(rel), { withFileTypes: true });
      } catch (err) {
        if (code(err) === "ENOENT" || code(err) === "ENOTDIR") continue;
        this.broken ??= `${rel} could not be read: ${code(err) ?? (err as Error).message}`;
        return;
      }
      for (const e of entries) {
        if (DOT_GIT.test(e.name)) {
          this.now.doubt ??= `${rel}/${e.name} appeared (a nested repository)`;
          continue;
        }
        const child = `${rel}/${e.name}`;
        this.mark(child);
        if (e.isDirectory()) stack.push(child);
      }
    }
  }

  /** Folder `rel` is not the one watched there any more: its watches and its subfolders' end. */
  private drop(rel: string): void {
    this.now.goneDirs.add(rel);
    const stack = [rel];
    while (stack.length > 0) {
      const r = stack.pop()!;
      const entry = this.dirs.get(r);
      if (entry) {
        // Moved, not deleted: its watch's queued events are dropped when it closes.
        if (!entry.gone) this.now.doubt ??= `the folder ${r} was moved`;
        entry.watcher.close();
        this.dirs.delete(r);
      }
      const kids = this.kids.get(r);
      this.kids.delete(r);
      if (kids) stack.push(...kids);
    }
    const parent = rel.includes("/") ? rel.slice(0, rel.lastIndexOf("/")) : "";
    this.kids.get(parent)?.delete(rel);
  }

  private openBeacon(): void {
    if (this.beacon) return;
    mkdirSync(this.privateDir, { recursive: true, mode: 0o700 });
    removeDeadBeacons(this.privateDir);
    const dir = path.join(this.privateDir, `${process.pid}-${randomBytes(4).toString("hex")}`);
    mkdirSync(dir, { mode: 0o700 });
    const watcher = watch(dir, { persistent: false }, (_type, name) => this.onBeacon(name));
    watcher.on("error", (err: Error) => {
      this.broken ??= `the watcher's beacon failed: ${err.message}`;
    });
    this.beacon = { dir, watcher, seq: 0 };
    removeAtExit(dir);
  }

  /** Resolves with the interval cut when the beacon's event comes (every earlier event handled); undefined past the deadline. */
  private barrier(): Promise<Interval | undefined> {
    const beacon = this.beacon;
    if (!beacon) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      let retry: NodeJS.Timeout | undefined;
      const end = (cut: Interval | undefined) => {
        clearTimeout(deadline);
        clearInterval(retry);
        this.waiting = undefined;
        for (const n of names) rmSync(path.join(beacon.dir, n), { force: true });
        resolve(cut);
      };
      const deadline = setTimeout(() => end(undefined), WATCH_BARRIER_TIMEOUT_MS);
      const names = new Set<string>();
      const write = () => {
        const name = `b${++beacon.seq}`;
        names.add(name);
        try {
          writeFileSync(path.join(beacon.dir, name), "");
        } catch {
          end(undefined);
        }
      };
      this.waiting = { first: `b${beacon.seq + 1}`, names, done: end };
      write();
      if (this.waiting) retry = setInterval(write, WATCH_BEACON_RETRY_MS);
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

  private disable(reason: string): void {
    this.disabled ??= reason;
    this.closeAll();
  }

  private closeAll(): void {
    for (const entry of this.dirs.values()) entry.watcher.close();
    this.dirs.clear();
    this.kids.clear();
    this.based = false;
    if (this.disabled && this.beacon) {
      this.beacon.watcher.close();
      rmSync(this.beacon.dir, { recursive: true, force: true });
      beaconDirs.delete(this.beacon.dir);
      this.beacon = undefined;
    }
  }
}

const UNKNOWN = "unknown";

/** What a path is now (not following a symlink): undefined when it is gone, UNKNOWN when it cannot be looked at (EACCES…). */
function look(abs: string): BigIntStats | undefined | typeof UNKNOWN {
  try {
    return lstatSync(abs, { bigint: true });
  } catch (err) {
    return code(err) === "ENOENT" || code(err) === "ENOTDIR" ? undefined : UNKNOWN;
  }
}

/** What a write moves: ctime always (the kernel sets it), the rest as it happens. */
function keyOf(st: BigIntStats): string {
  return `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
}

function fresh(): Interval {
  return { dirty: new Set(), goneDirs: new Set(), events: 0, doubt: undefined };
}

/** Beacon folders of this process, removed when it exits (one listener, however many stores). */
const beaconDirs = new Set<string>();
let exitHook = false;
function removeAtExit(dir: string): void {
  if (!exitHook) {
    exitHook = true;
    process.once("exit", () => {
      for (const d of beaconDirs) rmSync(d, { recursive: true, force: true });
    });
  }
  beaconDirs.add(dir);
}

/** Beacon folders (`<pid>-<random>`) of processes that are gone: a killed process leaves its own. */
function removeDeadBeacons(dir: string): void {
  for (const name of readdirSync(dir)) {
    const pid = Number(/^(\d+)-/.exec(name)?.[1]);
    if (pid && pid !== process.pid && !pidAlive(pid)) rmSync(path.join(dir, name), { recursive: true, force: true });
  }
}
