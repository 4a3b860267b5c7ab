import { randomBytes } from "node:crypto";
import { existsSync, rmdirSync, rmSync } from "node:fs";
import path from "node:path";
import { faultPoint } from "../memory/fault-point.js";
import { stateDirPath } from "../memory/state-dir.js";
import { readRegularTextSync } from "../regular-file.js";
import { processAlive } from "../process-life.js";
import { absPath, FIRST_SNAPSHOT_TIMEOUT_MS, type Git, gitRunner, isBytes, LOCK_WAIT_MS } from "./git.js";
import { lstatOrNone, nulPaths, openStore, pathOf, publishIndex, rethrowDamage, SNAPSHOTS_DIR } from "./git.js";
import { SnapshotError, snapshotSettings, tryOr, writeLooseBlob, writeLooseRef, ZERO_OID } from "./git.js";
import { type Entry, find, ignoredOf, type ImportCommit, type Looks, refMoved, runImport, scanIndex } from "./read.js";
import { WorkspaceWatcher } from "./watch.js";

/** Workspace snapshots behind one interface (docs/ARCHITECTURE.md, Snapshots): commits on one branch, so none is unreachable. */
const SNAPSHOT_REF = "refs/heads/snapshots";
/** Where each thread's workspace was last left (time travel compares against it), and the log of its moves. */
const THREAD_REF_PREFIX = "refs/threads/";
const THREAD_LOG_PREFIX = "refs/thread-logs/";
/** Moves a thread's log keeps; time travel further back cannot tell what the thread changed. */
export const MAX_THREAD_LOG = 500;
/** A file step's snapshot while the first one runs: its entries a blob under the second, its id a ref once the first is done. */
export const PENDING_PREFIX = "refs/pending/";
export const PENDING_ENTRIES_PREFIX = "refs/pending-entries/";
/** Direct takes whose changes are remembered (a step's after from its before needs no diff). */
const MAX_REMEMBERED_DIRECT = 16;
/** The most random wait per attempt (at most 20) before moving the branch again after losing it. */
const RETRY_JITTER_MS = 10;
const NEEDS_SCAN = "a path needs a scan (a folder, a .gitignore)";
export { MAX_SNAPSHOT_FILE_BYTES } from "./read.js";
export { absPath, FIRST_SNAPSHOT_TIMEOUT_MS, SnapshotError, shownPath } from "./git.js";
export const isPendingSnapshot = (id: string) => id.startsWith(PENDING_PREFIX);
/** The shadow repository's folder for a workspace (not created). */
export const snapshotGitDir = (workspace: string) => path.join(stateDirPath(workspace), SNAPSHOTS_DIR);

/** One path that differs between two snapshots: A only in the second, D only in the first, M content, T type or mode. */
export interface SnapshotChange {
  path: string;
  status: "A" | "D" | "M" | "T";
  /** Modes in the first and second snapshot ("000000" when absent). */
  fromMode: string;
  toMode: string;
  /** Lines added and removed (undefined for binary files). */
  added?: number;
  removed?: number;
}
type Pending = { id: string; entries: Promise<Map<string, Entry>> };
type ThreadLogEntry = { at: string; paths?: string[] };
type Snapshot = { tree: string; commit: string };
type Changed = { path: string; from: Entry; to: Entry };
type Found = Entry | "keep" | "index";

const hexRef = (prefix: string, threadId: string) => prefix + Buffer.from(threadId, "utf8").toString("hex");
const utf8 = (out: string) => Buffer.from(out, "latin1").toString("utf8");
const tracked = (e: Entry | undefined) => (e?.mode ?? "040000") !== "040000";
const sameEntry = (a: Entry, b: Found) => a?.oid === (b as Entry)?.oid && a?.mode === (b as Entry)?.mode;

export class SnapshotStore {
  /** How this process's whole snapshots were taken: from the watcher's answer, or by a scan (and why the last one). */
  readonly counts: { watched: number; scanned: number; lastScanReason?: string } = { watched: 0, scanned: 0 };
  private readonly git: Git;
  private readonly index: string;
  private queue: Promise<unknown> = Promise.resolve();
  private prepared?: Promise<void>;
  /** The last whole snapshot this process took (with what direct takes added since). */
  private last?: Snapshot;
  /** Entries of `last`'s tree this process knows: a direct take asks git only for the others. */
  private known?: { tree: string; entries: Map<string, Entry> };
  /** The index no longer holds `last`'s tree (a restore, a direct take): the next scan writes a tree. */
  private indexMoved = false;
  private readonly big = new Set<string>();
  private readonly remembered = new Map<string, { from: string; changes: SnapshotChange[] }>();
  private watcher?: WorkspaceWatcher;
  private first?: Promise<void>;
  /** The first snapshot's job has ended: the pending snapshots whole, the threads' moves to them recorded. */
  private firstDone = false;
  private pendingSeq = 0;
  private readonly pendingById = new Map<string, Pending>();
  /** Thread moves to pending snapshots, recorded once their refs are made. */
  private readonly afterPending: { threadId: string; id: string; paths?: readonly string[] }[] = [];
  private readonly threadRefs = new Map<string, string>();
  /** Each thread's log as this process last wrote it (its blob): the next move checks it is still that one. */
  private readonly threadLogs = new Map<string, { blob: string; log: ThreadLogEntry[] }>();

  constructor(
    readonly workspace: string,
    readonly gitDir: string,
  ) {
    this.index = path.join(gitDir, `index-${process.pid}-${randomBytes(4).toString("hex")}`);
    this.git = gitRunner(gitDir, workspace, this.index);
  }

  /** Calls of one process on one store run one at a time, on the store opened. */
  private serial<T>(work: () => Promise<T>): Promise<T> {
    const run = async () => (await this.prepare(), work());
    const next = this.queue.then(run, run);
    this.queue = next.catch(() => undefined);
    return next;
  }

  private prepare(): Promise<void> {
    this.prepared ??= openStore(this.workspace, this.gitDir, this.index).catch((err: unknown) => {
      this.prepared = undefined;
      throw err instanceof SnapshotError ? err : new SnapshotError((err as Error).message);
    });
    return this.prepared;
  }

  /** Records the workspace now, whole or only `paths` (the rest as the last one had); `scan`: why a whole one scans. */
  async take(paths?: readonly string[], options?: { scan?: string }): Promise<string> {
    const beforeFirst = paths !== undefined && !this.last;
    if (beforeFirst) this.startFirst();
    const pending = beforeFirst ? await this.takePending(paths) : undefined;
    if (pending) return pending;
    if (!this.last) await this.firstSnapshot();
    return this.serial(async () => {
      if (paths === undefined) return this.takeWhole(undefined, options?.scan);
      return (await this.direct(paths)) ?? this.takeWhole(undefined, NEEDS_SCAN);
    });
  }

  /** The whole workspace: from the watcher's answer when it is certain, else by a scan; nothing written when nothing changed. */
  private async takeWhole(timeoutMs?: number, scan?: string): Promise<string> {
    const failed = (err: Error) => (rethrowDamage(err), { reason: `the watcher's take failed: ${err.message}` });
    const watched = scan ? { reason: scan } : await this.takeWatched().catch(failed);
    if ("id" in watched) return watched.id;
    const token = await this.watcher?.markScan();
    const changed = await scanIndex(this.git, this.workspace, this.big, timeoutMs);
    faultPoint("snapshot");
    if (changed || !this.last || this.indexMoved) {
      const tree = (await this.git(["write-tree"])).trim();
      this.indexMoved = false;
      if (tree !== this.last?.tree) this.last = await this.commit(tree, []);
    }
    this.watcher?.scanDone(token);
    this.counts.scanned++;
    this.counts.lastScanReason = watched.reason;
    return this.last!.commit;
  }

  /** The paths that changed since the last whole snapshot, on top of it the way of declared paths; or why a scan must take it. */
  private async takeWatched(): Promise<{ id: string } | { reason: string }> {
    if (!this.watcher || !this.last) return { reason: this.last ? "the watcher is off" : "no snapshot yet" };
    const answer = await this.watcher.changes();
    if (!answer.certain) return { reason: answer.reason };
    const paths = new Set<string>();
    const replaced = answer.goneDirs.filter((rel) => answer.looks.get(rel)?.isDirectory());
    // A folder now: what is in it was marked one by one; a folder there before left entries to look at.
    for (const rel of [...answer.goneDirs, ...answer.paths]) if (!answer.looks.get(rel)?.isDirectory()) paths.add(rel);
    if (replaced.length > 0) {
      const args = ["ls-tree", "-r", "-z", "--name-only", "--full-tree", this.last.tree, "--", ...replaced];
      for (const rel of (await this.git(args)).split("\0")) if (rel) paths.add(pathOf(rel));
      if ([...paths].some(isBytes)) return { reason: "a name that is not UTF-8 went" };
    }
    faultPoint("snapshot");
    const id = paths.size === 0 ? this.last.commit : await this.direct([...paths], answer.looks);
    if (id === undefined) return { reason: NEEDS_SCAN };
    this.watcher.accept();
    this.counts.watched++;
    return { id };
  }

  /** The paths now, their blobs written: an entry (null: gone), "keep" (as the snapshot has it: git ignores it, or never records it), or "index" (a scan must take it). */
  private async read(paths: readonly string[], isTracked: (rel: string) => boolean, looks?: Looks) {
    const unique = [...new Set(paths)];
    const found = await Promise.all(unique.map((rel) => find(this.workspace, rel, looks)));
    const untracked = unique.filter((rel, i) => found[i]!.kind === "record" && !isTracked(rel));
    const ignored = await ignoredOf(this.git, untracked);
    const out = new Map<string, Found>();
    for (const [i, rel] of unique.entries()) {
      const f = found[i]!;
      if (f.kind === "big") this.big.add(rel);
      else if (f.kind !== "keep") this.big.delete(rel);
      if (f.kind !== "record") out.set(rel, f.kind === "keep" || f.kind === "index" ? f.kind : null);
      else out.set(rel, ignored.has(rel) ? "keep" : { mode: f.mode, oid: await writeLooseBlob(this.gitDir, f.data) });
    }
    return out;
  }

  /** `paths` on top of the last snapshot, written by fast-import without the index; undefined when a scan must take them (or this failed). */
  private async direct(paths: readonly string[], looks?: Looks): Promise<string | undefined> {
    const base = this.last;
    if (!base) return undefined;
    if (this.known?.tree !== base.tree) this.known = { tree: base.tree, entries: new Map() };
    const known = this.known.entries;
    try {
      const unknown = paths.filter((p) => !known.has(p));
      for (const [rel, e] of await this.readEntries(base.tree, unknown)) known.set(rel, e);
      const now = await this.read(paths, (rel) => tracked(known.get(rel)), looks);
      if ([...now.values()].includes("index")) return undefined;
      const changed = [...now]
        .map(([rel, to]) => ({ path: rel, from: known.get(rel) ?? null, to }))
        .filter((c): c is Changed => c.to !== "keep" && c.to !== "index" && !sameEntry(c.from, c.to));
      if (changed.length === 0) return base.commit;
      this.last = await this.commit(base.tree, changed, true);
      for (const c of changed) known.set(c.path, c.to);
      this.known = { tree: this.last.tree, entries: known };
      this.remember(base.commit, this.last.commit, changed);
      this.indexMoved = true;
      return this.last.commit;
    } catch (err) {
      rethrowDamage(err);
      this.known = undefined;
      return undefined;
    }
  }

  /** Entries of `tree` for `paths` (one ls-tree; an absent path is null). */
  private async readEntries(tree: string, paths: readonly string[]): Promise<Map<string, Entry>> {
    const out = new Map<string, Entry>(paths.map((p) => [p, null]));
    if (paths.length === 0) return out;
    for (const line of (await this.git(["ls-tree", "-z", "--full-tree", tree, "--", ...paths])).split("\0")) {
      const [mode, , oid] = line.slice(0, line.indexOf("\t")).split(" ");
      const rel = pathOf(line.slice(line.indexOf("\t") + 1));
      if (oid && out.has(rel)) out.set(rel, { mode: mode!, oid });
    }
    return out;
  }

  /** `tree` with `changes` as a commit on the snapshot branch's tip; another process moving it meanwhile: tried again until LOCK_WAIT_MS. */
  private async commit(tree: string, changes: ImportCommit["changes"], point = false): Promise<Snapshot> {
    const deadline = Date.now() + LOCK_WAIT_MS;
    const packed = path.join(this.gitDir, "packed-refs");
    for (let attempt = 1; ; attempt++) {
      const tip = existsSync(path.join(this.gitDir, SNAPSHOT_REF)) || readOr(packed).includes(` ${SNAPSHOT_REF}\n`);
      const from = tip ? `${SNAPSHOT_REF}^0` : undefined;
      try {
        return (await runImport(this.git, [{ ref: SNAPSHOT_REF, from, tree, changes }], { point }))[0]!;
      } catch (err) {
        rethrowDamage(err);
        if (!refMoved((err as Error).message) || Date.now() >= deadline) throw err;
        await new Promise((r) => setTimeout(r, Math.random() * Math.min(attempt, 20) * RETRY_JITTER_MS));
      }
    }
  }

  /** A direct take's changes as `git diff-tree -r --raw` lists them, when it would list these paths only. */
  private remember(from: string, to: string, changed: Changed[]): void {
    const listed = (e: Entry) => /^(100644|100755|120000)$/.test(e?.mode ?? ""); // files and links, not trees
    if (changed.some((c) => !listed(c.from) || (c.to && !listed(c.to)))) return;
    const changes = changed.map((c) => changeOf(c.path, c.from, c.to, true));
    changes.sort((a, b) => Buffer.compare(Buffer.from(a.path), Buffer.from(b.path))); // diff-tree's order: the paths' bytes
    if (this.remembered.size >= MAX_REMEMBERED_DIRECT) this.remembered.delete(this.remembered.keys().next().value!);
    this.remembered.set(to, { from, changes });
  }

  /** The declared paths' entries, saved under a pending id (the first snapshot uses the index); undefined once the first is done. */
  private async takePending(paths: readonly string[]): Promise<string | undefined> {
    await this.prepare();
    if (this.firstDone) return undefined;
    const id = `${PENDING_PREFIX}${process.pid}-${++this.pendingSeq}-${randomBytes(4).toString("hex")}`;
    // Registered before hashing, so the first snapshot, when it ends, waits for these blobs.
    // Not asked about ignores now (a git process each): settle leaves out what git ignores.
    const entries = this.read(paths, () => true).then(async (now) => {
      const recorded = new Map([...now].filter((e): e is [string, Entry] => e[1] !== "keep" && e[1] !== "index"));
      const blob = await writeLooseBlob(this.gitDir, Buffer.from(JSON.stringify([...recorded])));
      writeLooseRef(this.gitDir, PENDING_ENTRIES_PREFIX + id.slice(PENDING_PREFIX.length), blob);
      return recorded;
    });
    this.pendingById.set(id, { id, entries });
    await entries.catch((err: unknown) => {
      this.pendingById.delete(id);
      throw err;
    });
    return id;
  }

  /** Starts this process's first whole snapshot in the background, once (again after it failed). */
  startFirst(): void {
    this.firstSnapshot().catch(() => undefined);
  }

  private firstSnapshot(): Promise<void> {
    this.first ??= this.serial(() => this.firstJob()).catch((err: unknown) => {
      this.first = undefined;
      throw err instanceof SnapshotError ? err : new SnapshotError((err as Error).message);
    });
    return this.first;
  }

  /** The first whole snapshot; then the pending snapshots made whole (a killed process's first), then the threads' moves to them. */
  private async firstJob(): Promise<void> {
    if (snapshotSettings().watch)
      this.watcher ??= new WorkspaceWatcher(this.workspace, path.join(this.gitDir, "watch"));
    this.watcher?.start();
    await this.takeWhole(FIRST_SNAPSHOT_TIMEOUT_MS);
    publishIndex(this.gitDir, this.index);
    // Those a killed process left first; the moves stay in afterPending until recorded (see hasPending).
    let batch = [...(await orphanedPending(this.git)), ...this.pendingById.values()];
    for (; batch.length > 0 || this.afterPending.length > 0; batch = [...this.pendingById.values()]) {
      if (batch.length > 0) await this.settle(batch);
      for (const snap of batch) this.pendingById.delete(snap.id);
      const move = batch.length > 0 ? undefined : this.afterPending[0]!;
      // A move that fails leaves the thread as it was: its steps' undo still has their snapshots.
      if (move) await this.recordThreadMove(move.threadId, move.id, move.paths).catch(rethrowDamage);
      if (move) this.afterPending.shift();
    }
    this.firstDone = true;
  }

  /** Each pending snapshot as the first one with every pending path as the earliest found it, then as each in turn did. */
  private async settle(batch: Pending[]): Promise<void> {
    const base = this.last!;
    const state = new Map<string, Entry>();
    for (const snap of batch) for (const [rel, e] of await snap.entries) if (!state.has(rel)) state.set(rel, e);
    // What git ignores and the first snapshot does not hold stays out, as a scan leaves it out.
    const known = await this.readEntries(base.tree, [...state.keys()]);
    const untracked = [...known.keys()].filter((p) => !tracked(known.get(p)));
    const ignored = await ignoredOf(this.git, untracked);
    const commits: ImportCommit[] = [];
    for (const snap of batch) {
      for (const [rel, e] of await snap.entries) state.set(rel, e);
      const changes = [...state].filter(([p]) => !ignored.has(p)).map(([p, to]) => ({ path: p, to }));
      commits.push({ ref: snap.id, from: base.commit, tree: base.tree, changes });
    }
    await runImport(this.git, commits, { force: true });
    const drop = batch.map((s) => `delete ${PENDING_ENTRIES_PREFIX}${s.id.slice(PENDING_PREFIX.length)}\n`).join("");
    await this.git(["update-ref", "--stdin"], drop).catch(rethrowDamage);
  }

  /** Waits at most `ms` for the first snapshot and what waits on it: true when done, false while it runs; its error when it failed. */
  async firstReady(ms: number): Promise<boolean> {
    if (this.firstDone) return true;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
    return Promise.race([this.firstSnapshot().then(() => true), late]).finally(() => clearTimeout(timer));
  }

  /** Whether snapshots taken during the first one, or a thread's move to one, are still to be made whole. */
  hasPending(): boolean {
    return this.pendingById.size > 0 || this.afterPending.length > 0;
  }

  /** Whether a pending snapshot (or what it was made from) is in this store, not another state folder's. */
  async pendingHere(id: string): Promise<boolean> {
    await this.prepare();
    const entries = PENDING_ENTRIES_PREFIX + id.slice(PENDING_PREFIX.length);
    return (await this.git(["for-each-ref", "--format=%(refname)", id, entries])).trim() !== "";
  }

  /** Of `paths` (all when not given), those left out of snapshots in this process for being over MAX_SNAPSHOT_FILE_BYTES. */
  oversized(paths?: readonly string[]): string[] {
    return paths ? paths.filter((p) => this.big.has(p)) : [...this.big];
  }

  /** What differs from snapshot `from` to `to` (under `paths`); `lines: false` leaves out the lines added and removed. */
  async changes(from: string, to: string, paths?: readonly string[], lines = true): Promise<SnapshotChange[]> {
    const within = (list: SnapshotChange[]) => list.filter((c) => !paths || paths.includes(c.path));
    const remembered = lines ? undefined : this.remembered.get(to);
    if (remembered?.from === from) return within(remembered.changes).map((c) => ({ ...c }));
    // A step's own before and after while the first snapshot runs: what its paths' blobs say.
    const [a, b] = [this.pendingById.get(from), this.pendingById.get(to)];
    if (a && b) return within(pendingChanges(await a.entries, await b.entries));
    if (from === to || paths?.length === 0) return [];
    return this.serial(async () => {
      // A path that is not UTF-8 cannot be an argument: then the whole diff is read, and cut here.
      const args = ["diff-tree", "-r", "-z", "--no-renames", "--raw", ...(lines ? ["--numstat"] : []), from, to];
      if (paths && !paths.some(isBytes)) args.push("--", ...paths);
      return within(parseDiff(await this.git(args, undefined, { noIndex: true })));
    });
  }

  /** Puts `paths` back as `source` has them (written, or removed); returns those it could not (a link, file or folder in the way). */
  async restore(source: string, paths: readonly string[]): Promise<string[]> {
    if (paths.length === 0) return [];
    return this.serial(async () => {
      const spec = paths.some(isBytes) ? [] : ["--", ...paths];
      const listed = await this.git(["ls-tree", "-r", "-z", "--name-only", source, ...spec]);
      const present = new Set(listed.split("\0").filter(Boolean).map(pathOf));
      const skipped = paths.filter((p) => !plainFoldersTo(this.workspace, p));
      for (const rel of paths) if (!present.has(rel) && !skipped.includes(rel)) removeFile(this.workspace, rel);
      const write = paths.filter((p) => present.has(p) && !skipped.includes(p));
      const checkout = ["checkout", "--quiet", source, "--pathspec-from-file=-", "--pathspec-file-nul"];
      if (write.length > 0) await this.git(checkout, nulPaths(write));
      this.indexMoved = true;
      return skipped;
    });
  }

  /** Whether this store holds snapshot `id` (a thread shared through PostgreSQL may come from elsewhere). */
  async has(id: string): Promise<boolean> {
    if (isPendingSnapshot(id)) await this.firstSnapshot(); // its ref is made when that ends
    return this.serial(async () => (await this.git(["cat-file", "-t", `${id}^{commit}`]).catch(orNone)) !== "");
  }

  /** The snapshot a thread's workspace was last left at (known here without git once read or set). */
  async threadSnapshot(threadId: string): Promise<string | undefined> {
    if (this.threadRefs.has(threadId)) return this.threadRefs.get(threadId);
    await this.prepare();
    const ref = hexRef(THREAD_REF_PREFIX, threadId);
    const out = (await this.git(["rev-parse", "--verify", "--quiet", ref]).catch(orNone)).trim();
    if (out) this.threadRefs.set(threadId, out);
    return out || undefined;
  }

  /** Records that the thread left its files at `id`, having changed `paths` on the way (unknown when not given). */
  async setThreadSnapshot(threadId: string, id: string, paths?: readonly string[]): Promise<void> {
    if (this.pendingById.has(id)) {
      this.threadRefs.set(threadId, id); // recorded when the first snapshot has made its ref
      this.afterPending.push({ threadId, id, ...(paths ? { paths: [...paths] } : {}) });
      return;
    }
    return this.serial(async () => {
      await this.recordThreadMove(threadId, id, paths);
      this.threadRefs.set(threadId, id);
    });
  }

  /** The paths the thread changed since its files were last at `id` (its log, read backwards); undefined when the log does not tell. */
  threadChangesSince(threadId: string, id: string): Promise<string[] | undefined> {
    return this.serial(async () => {
      const log = parseLog(await this.git(["cat-file", "blob", hexRef(THREAD_LOG_PREFIX, threadId)]).catch(orNone));
      const changed = new Set<string>();
      for (const entry of log.reverse()) {
        if (entry.at === id) return [...changed].sort();
        if (!entry.paths) return undefined;
        for (const p of entry.paths) changed.add(p);
      }
    });
  }

  /** The thread's ref and log move in one transaction that checks the log is the one last written here (else read again). */
  private async recordThreadMove(threadId: string, id: string, paths?: readonly string[]): Promise<void> {
    const logRef = hexRef(THREAD_LOG_PREFIX, threadId);
    for (let attempt = 1; ; attempt++) {
      let known = this.threadLogs.get(threadId);
      if (!known) {
        const blob = (await this.git(["rev-parse", "--verify", "--quiet", logRef]).catch(orNone)).trim();
        known = { blob, log: blob ? parseLog(await this.git(["cat-file", "blob", blob]).catch(orNone)) : [] };
      }
      const log = [...known.log, paths ? { at: id, paths: [...paths] } : { at: id }].slice(-MAX_THREAD_LOG);
      const blob = await writeLooseBlob(this.gitDir, Buffer.from(JSON.stringify(log)));
      const move = `update ${hexRef(THREAD_REF_PREFIX, threadId)}\0${id}\0\0update ${logRef}\0${blob}\0${known.blob || ZERO_OID}\0`;
      try {
        await this.git(["update-ref", "--stdin", "-z"], move);
        this.threadLogs.set(threadId, { blob, log });
        return;
      } catch (err) {
        rethrowDamage(err);
        this.threadLogs.delete(threadId); // another writer moved it: read again, once
        if (attempt >= 2) throw err;
      }
    }
  }
}

/** A failed read that means "none", unless the store is damaged. */
const orNone = (err: unknown) => (rethrowDamage(err), "");
const readOr = (file: string) => (existsSync(file) ? readRegularTextSync(file) : "");

const parseLog = (out: string): ThreadLogEntry[] =>
  tryOr(() => (JSON.parse(utf8(out)) as ThreadLogEntry[]).filter((e) => typeof e?.at === "string"), []);

/** A change from entry `a` to `b` (null: absent); `links`: only a file that became a link, or back, is "T" (diff-tree's way). */
function changeOf(p: string, a: Entry, b: Entry, links = false): SnapshotChange {
  const link = (e: Entry) => e?.mode === "120000";
  const status = !a ? "A" : !b ? "D" : (links ? link(a) !== link(b) : a.mode !== b.mode) ? "T" : "M";
  return { path: p, status, fromMode: a?.mode ?? "000000", toMode: b?.mode ?? "000000" };
}

/** `diff-tree -z --raw [--numstat]`: ":<mode> <mode> <oid> <oid> <status>\0<path>\0" each, then "<added>\t<removed>\t<path>\0". */
function parseDiff(out: string): SnapshotChange[] {
  const parts = out.split("\0");
  const byPath = new Map<string, SnapshotChange>();
  for (let i = 0; i < parts.length; i++) {
    const [added, removed, ...rest] = parts[i]!.split("\t");
    const [fromMode, toMode, , , status] = parts[i]!.slice(1).split(" ");
    const change = byPath.get(pathOf(rest.join("\t")));
    if (parts[i]!.startsWith(":")) {
      const p = pathOf(parts[++i]!);
      byPath.set(p, { path: p, status: status![0] as "M", fromMode: fromMode!, toMode: toMode! });
    } else if (change && added !== "-" && removed !== undefined)
      Object.assign(change, { added: +added!, removed: +removed });
  }
  return [...byPath.values()];
}

/** What differs between two pending snapshots of this process (a step's before and after), path by path. */
function pendingChanges(from: ReadonlyMap<string, Entry>, to: ReadonlyMap<string, Entry>): SnapshotChange[] {
  const paths = [...new Set([...from.keys(), ...to.keys()])].sort();
  // Not recorded on one side (over the limit), or the same, is no change.
  const differ = (a?: Entry, b?: Entry) => a !== undefined && b !== undefined && !sameEntry(a, b);
  return paths.filter((p) => differ(from.get(p), to.get(p))).map((p) => changeOf(p, from.get(p)!, to.get(p)!));
}

/** Pending snapshots whose ref was never made, of processes that are gone, in the order they were taken. */
export async function orphanedPending(git: Git): Promise<Pending[]> {
  const refs = async (prefix: string) =>
    (await git(["for-each-ref", "--format=%(refname) %(objectname)", prefix])).split("\n");
  const made = new Set((await refs(PENDING_PREFIX)).map((line) => line.split(" ")[0]));
  const left = (await refs(PENDING_ENTRIES_PREFIX)).filter(Boolean).map((line) => {
    const [ref, blob] = line.split(" ");
    const [pid = 0, seq = 0] = (/\/(\d+)-(\d+)-[0-9a-f]+$/.exec(ref!) ?? []).slice(1).map(Number);
    return { id: PENDING_PREFIX + ref!.slice(PENDING_ENTRIES_PREFIX.length), blob: blob!, pid, seq };
  });
  // A live process's own are made whole by that process.
  const dead = left.filter((o) => !made.has(o.id) && !(o.pid && processAlive(o.pid)));
  dead.sort((a, b) => a.pid - b.pid || a.seq - b.seq);
  return dead.map((o) => {
    const entries = git(["cat-file", "blob", o.blob]).then((out) => new Map<string, Entry>(JSON.parse(utf8(out))));
    entries.catch(() => undefined); // awaited in turn: an earlier one's failure is the one reported
    return { id: o.id, entries };
  });
}

/** Whether every folder on `rel`'s way is a plain folder (or missing): nothing is touched through a symlinked folder. */
function plainFoldersTo(root: string, rel: string): boolean {
  if (rel.split("/").includes("..")) return false;
  const parts = rel.split("/");
  for (let i = 1; i < parts.length; i++) {
    const st = lstatOrNone(absPath(root, parts.slice(0, i).join("/")));
    if (!st?.isDirectory()) return !st; // missing: git makes plain folders
  }
  return true;
}

/** Removes a file the snapshot does not hold, and the folders it was the last thing in (they were not there before). */
function removeFile(root: string, rel: string): void {
  rmSync(absPath(root, rel), { force: true });
  const parts = rel.split("/");
  const rmdir = (i: number) => tryOr(() => rmdirSync(absPath(root, parts.slice(0, i).join("/"))) === undefined, false);
  for (let i = parts.length - 1; i > 0 && rmdir(i); i--);
}

/** Stores per workspace, so calls of one process on one workspace never run at the same time. */
const stores = new Map<string, SnapshotStore>();

export function snapshotStore(workspace: string): SnapshotStore {
  const root = path.resolve(workspace);
  const key = `${snapshotGitDir(root)}\0${root}`;
  return stores.get(key) ?? stores.set(key, new SnapshotStore(root, snapshotGitDir(root))).get(key)!;
}
