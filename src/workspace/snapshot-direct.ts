import { createHash } from "node:crypto";
import { constants as fsConstants, readdirSync, statSync, unlinkSync, type BigIntStats, type Stats } from "node:fs";
import { lstat, open, readlink } from "node:fs/promises";
import path from "node:path";
import { faultPoint } from "../memory/fault-point.js";
import type { IgnoreVerdicts } from "./ignore-verdicts.js";
import { pidAlive } from "./session-processes.js";
import { MAX_SNAPSHOT_FILE_BYTES, type Git } from "./snapshot-scan.js";

/**
 * Snapshots of the paths a file-tool step declares, without the private index (issue 30: an
 * edit step costs what it changes). In a big repository the index is megabytes that every git
 * call on it reads, checks and often writes again; here the snapshot is "the last snapshot's
 * tree with these paths as they are now", built by one `git fast-import` (blobs, the trees on
 * the paths' way up, the commit and the compare-and-swap of the snapshot branch) after the
 * paths were read and hashed here. The rules are those of the index's way (snapshot-scan.ts):
 * - a file over MAX_SNAPSHOT_FILE_BYTES is never read into the store: it leaves the snapshot;
 * - a path the last snapshot does not hold (untracked) is recorded only when git does not ignore
 *   it (`git check-ignore --no-index`), as `git status` would; a tracked one is recorded, as git
 *   records tracked files whatever the ignore rules say;
 * - a symlink is recorded as a link (its target), a file with its executable bit as git reads it
 *   (the owner's), a path that is gone or lies beyond a symlink or a file leaves the snapshot;
 * - a file that cannot be read, or is neither a file nor a link (a FIFO), keeps its entry.
 * What this way cannot do the same as git, it hands back to the index's way: a path that is a
 * folder now, one inside a nested repository (git records that as a gitlink), and a `.gitignore`
 * (the next whole snapshot must see it change, to drop what it starts ignoring).
 */

/** A path's entry in a tree: its mode and object, or null when the path is absent. */
export type Entry = { mode: string; oid: string } | null;

/** The snapshot a direct take starts from, and the entries of its tree this process already knows. */
export interface DirectBase {
  tree: string;
  commit: string;
  /** Paths of `tree` read before (ls-tree) or written by us: not asked of git again. */
  known: Map<string, Entry>;
}

/** What a direct take made: the new snapshot, or `undefined` when the index's way must take it. */
export interface DirectResult {
  tree: string;
  commit: string;
  /** Paths whose entries now differ from the private index (a later whole snapshot restages them). */
  written: string[];
  /** Per written path, its entry in `base.tree` and in the new tree: the new snapshot's changes from `base.commit`. */
  changed: Array<{ path: string; from: Entry; to: Entry }>;
}

/**
 * What paths were when the caller last looked (lstat; undefined: gone), looked at before they are
 * read: a path here is not looked at again (snapshot-watch.ts's answer has looked already).
 */
export type Looks = ReadonlyMap<string, Stats | BigIntStats | undefined>;

/** What a declared path is now. */
type Found =
  | { kind: "record"; mode: string; data: Buffer; oid: string }
  | { kind: "gone" }
  | { kind: "big" }
  | { kind: "keep" }
  | { kind: "index" };

/** git never records a path with a `.git` component (any case, as core.protectNTFS has it). */
const DOT_GIT = /(^|\/)\.git(\/|$)/i;
const IGNORE_FILE = /(^|\/)\.gitignore$/;
const DONE = Buffer.from("done\n");

export function blobOid(data: Buffer): string {
  return createHash("sha1").update(`blob ${data.length}\0`).update(data).digest("hex");
}

const code = (err: unknown) => (err as NodeJS.ErrnoException).code;

/** How the folders on a path's way down are: plain, not there (or not a folder), or one holds a nested repository. */
async function parentsOf(workspace: string, rel: string): Promise<"plain" | "gone" | "nested"> {
  let dir = workspace;
  for (const part of rel.split("/").slice(0, -1)) {
    dir = path.join(dir, part);
    try {
      if (!(await lstat(dir)).isDirectory()) return "gone"; // beyond a symlink or a file: git sees it deleted
    } catch {
      return "gone";
    }
    try {
      await lstat(path.join(dir, ".git"));
      return "nested";
    } catch {
      // a plain folder
    }
  }
  return "plain";
}

/**
 * A workspace file's bytes, read through a descriptor opened without following a link at its end
 * and without blocking, and checked again there: a file swapped for a FIFO or a link after its
 * lstat (a command running meanwhile) is refused (ELOOP, or "not a regular file"), never waited
 * on. The caller compares the length with its limit (the file may have grown since its lstat).
 */
export async function readRegularFile(abs: string): Promise<Buffer> {
  const handle = await open(abs, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW | fsConstants.O_NONBLOCK);
  try {
    if (!(await handle.stat()).isFile()) throw new Error(`${abs} is no longer a regular file`);
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}

async function find(workspace: string, rel: string, looks: Looks | undefined): Promise<Found> {
  if (DOT_GIT.test(rel)) return { kind: "keep" };
  if (IGNORE_FILE.test(rel)) return { kind: "index" };
  const parents = await parentsOf(workspace, rel);
  if (parents === "nested") return { kind: "index" };
  if (parents === "gone") return { kind: "gone" };
  const abs = path.join(workspace, rel);
  try {
    const st = looks?.has(rel) ? looks.get(rel) : await lstat(abs);
    if (!st) return { kind: "gone" };
    if (st.isSymbolicLink()) {
      const data = await readlink(abs, { encoding: "buffer" });
      return { kind: "record", mode: "120000", data, oid: blobOid(data) };
    }
    if (st.isDirectory()) return { kind: "index" };
    if (!st.isFile()) return { kind: "keep" };
    if (Number(st.size) > MAX_SNAPSHOT_FILE_BYTES) return { kind: "big" };
    const data = await readRegularFile(abs);
    // Grown past the limit since the lstat: never into the store.
    if (data.length > MAX_SNAPSHOT_FILE_BYTES) return { kind: "big" };
    return { kind: "record", mode: Number(st.mode) & 0o100 ? "100755" : "100644", data, oid: blobOid(data) };
  } catch (err) {
    if (code(err) === "ENOENT" || code(err) === "ENOTDIR") return { kind: "gone" };
    if (code(err) === "EISDIR") return { kind: "index" };
    return { kind: "keep" }; // unreadable: left as the last snapshot had it, as `git add --ignore-errors` does
  }
}

/** Entries of `tree` for `paths` (one ls-tree; an absent path is null). */
async function readEntries(git: Git, tree: string, paths: readonly string[]): Promise<Map<string, Entry>> {
  const out = new Map<string, Entry>(paths.map((p) => [p, null]));
  if (paths.length === 0) return out;
  // GIT_LITERAL_PATHSPECS is set (snapshots.ts): each path is taken as it is spelt.
  const listed = await git(["ls-tree", "-z", "--full-tree", tree, "--", ...paths]);
  for (const line of listed.split("\0")) {
    const tab = line.indexOf("\t");
    if (tab < 0) continue;
    const [mode, , oid] = line.slice(0, tab).split(" ");
    const rel = line.slice(tab + 1);
    if (out.has(rel)) out.set(rel, { mode: mode!, oid: oid! });
  }
  return out;
}

/**
 * Of `paths`, those git ignores (the index is not read: --no-index). With `verdicts`, a path whose
 * rule files are as they were when git last answered for it is not asked again.
 */
export async function ignoredOf(git: Git, paths: readonly string[], verdicts?: IgnoreVerdicts): Promise<Set<string>> {
  const ignored = new Set<string>();
  // Looked at before git is asked: a rule file changed meanwhile then makes this answer's key stale.
  const rules = new Map(paths.map((rel) => [rel, verdicts?.rulesOf(rel)]));
  const ask = paths.filter((rel) => {
    const known = verdicts?.known(rel, rules.get(rel));
    if (known) ignored.add(rel);
    return known === undefined;
  });
  if (ask.length === 0) return ignored;
  // "./" first: a name starting with ":" is then no pathspec magic. With -v -n every path gets a
  // record, in order, "<source>\0<line>\0<pattern>\0<path>\0"; an empty source: no rule matched,
  // a "!" pattern: re-included. Exit 1: none matched.
  const out = await git(
    ["check-ignore", "--no-index", "-v", "-n", "-z", "--stdin"],
    `${ask.map((p) => `./${p}`).join("\0")}\0`,
    { okExit: [1], pathspecs: "plain" },
  );
  const fields = out.split("\0");
  ask.forEach((rel, i) => {
    const source = fields[i * 4];
    const pattern = fields[i * 4 + 2];
    const isIgnored = Boolean(source && pattern !== undefined && !pattern.startsWith("!"));
    if (isIgnored) ignored.add(rel);
    verdicts?.keep(rel, rules.get(rel), isIgnored);
  });
  return ignored;
}

/** A path as fast-import reads it: C-style quoted, so any byte but NUL may be in it. */
export function quotePath(rel: string): string {
  let out = '"';
  for (const byte of Buffer.from(rel, "utf8")) {
    if (byte === 0x22) out += '\\"';
    else if (byte === 0x5c) out += "\\\\";
    else if (byte < 0x20 || byte === 0x7f) out += `\\${byte.toString(8).padStart(3, "0")}`;
    else out += String.fromCharCode(byte);
  }
  // Bytes of UTF-8 above 0x7f were made chars one by one: written back as those bytes (latin1).
  return `${out}"`;
}

/**
 * The snapshot `base` with `paths` as they are now, made without the index; `base.commit` itself
 * when none of them changed; undefined when a path needs the index's way. Files over the limit
 * go into `oversized` (and out of it once they are not). `ref` is the snapshot branch: the new
 * commit's parent is its tip when fast-import reads it, and fast-import moves it only when that is
 * still the tip (a process that moved it meanwhile makes this throw RefMovedError, to try again).
 * `looks`: what the caller saw of some paths just before (they are not looked at again).
 */
export async function takeDirect(
  git: Git,
  workspace: string,
  paths: readonly string[],
  base: DirectBase,
  oversized: Set<string>,
  ref: string,
  looks?: Looks,
  verdicts?: IgnoreVerdicts,
): Promise<DirectResult | undefined> {
  const unique = [...new Set(paths)];
  const found = await Promise.all(unique.map((rel) => find(workspace, rel, looks)));
  if (found.some((f) => f.kind === "index")) return undefined;
  const unknown = unique.filter((rel, i) => found[i]!.kind !== "keep" && !base.known.has(rel));
  const read = await readEntries(git, base.tree, unknown);
  const entryOf = (rel: string): Entry => (base.known.has(rel) ? base.known.get(rel)! : (read.get(rel) ?? null));
  // Untracked files to record: only those git does not ignore.
  const untracked = unique.filter((rel, i) => found[i]!.kind === "record" && !isFile(entryOf(rel)));
  const ignored = await ignoredOf(git, untracked, verdicts);
  for (const [rel, e] of read) base.known.set(rel, e);
  const lines: Buffer[] = [];
  const next = new Map<string, Entry>();
  const was = new Map<string, Entry>();
  unique.forEach((rel, i) => {
    const f = found[i]!;
    if (f.kind === "big") oversized.add(rel);
    else if (f.kind !== "keep") oversized.delete(rel);
    const now = entryOf(rel);
    if (f.kind === "record") {
      if (ignored.has(rel) || (now?.oid === f.oid && now.mode === f.mode)) return;
      next.set(rel, { mode: f.mode, oid: f.oid });
      was.set(rel, now);
      lines.push(
        Buffer.from(`M ${f.mode} inline ${quotePath(rel)}\ndata ${f.data.length}\n`, "latin1"),
        f.data,
        Buffer.from("\n"),
      );
    } else if ((f.kind === "gone" || f.kind === "big") && now) {
      next.set(rel, null);
      was.set(rel, now);
      lines.push(Buffer.from(`D ${quotePath(rel)}\n`, "latin1"));
    }
  });
  if (lines.length === 0) return { tree: base.tree, commit: base.commit, written: [], changed: [] };
  const message = "mini-cursor snapshot";
  const head = [
    "feature done",
    `commit ${ref}`,
    "mark :1",
    `committer mini-cursor <snapshots@mini-cursor.invalid> ${Math.floor(Date.now() / 1000)} +0000`,
    `data ${message.length}`,
    message,
    `from ${ref}^0`,
    // This process's last tree, whatever another process's snapshot on the branch holds.
    `M 040000 ${base.tree} ""`,
    "",
  ].join("\n");
  const tail = 'ls ""\n\nget-mark :1\n';
  const body = Buffer.concat([Buffer.from(head, "latin1"), ...lines, Buffer.from(tail)]);
  // "done" last, on its own: a stream that ends without it (this process killed) makes fast-import
  // stop without moving the branch; the named point between is where the fault tests cut it.
  const input: AsyncIterable<Buffer> = {
    async *[Symbol.asyncIterator]() {
      yield body;
      faultPoint("snapshot-import");
      yield DONE;
    },
  };
  let out: string;
  try {
    out = await git(["fast-import", "--quiet"], input);
  } catch (err) {
    // Moved before fast-import checked it ("Not updating"), or between that check and its lock.
    if (refMoved((err as Error).message)) throw new RefMovedError();
    throw err;
  }
  faultPoint("snapshot-imported");
  const tree = /^040000 tree ([0-9a-f]{40})\t/m.exec(out)?.[1];
  const commit = /^([0-9a-f]{40})$/m.exec(out)?.[1];
  if (!tree || !commit) throw new Error(`git fast-import answered unexpectedly: ${out.slice(0, 200)}`);
  for (const [rel, e] of next) base.known.set(rel, e);
  const changed = [...next].map(([rel, to]) => ({ path: rel, from: was.get(rel) ?? null, to }));
  return { tree, commit, written: [...next.keys()], changed };
}

const isFile = (e: Entry) => e !== null && e.mode !== "040000";

/**
 * Whether git refused to move a ref because another process moved it first: fast-import's "Not
 * updating", or a compare-and-swap that found another value ("is at … but expected …").
 */
export function refMoved(message: string): boolean {
  return /Not updating|cannot lock ref '[^']+': is at [0-9a-f]+ but expected/.test(message);
}

/** Another process moved the snapshot branch between fast-import reading and moving it. */
export class RefMovedError extends Error {
  override name = "RefMovedError";
}

/**
 * A leftover of an import older than this is dead whatever /proc says (a pid used again): no git
 * call on the store runs longer (snapshots.ts GIT_TIMEOUT_MS).
 */
export const IMPORT_LEFTOVER_AGE_MS = 10 * 60_000;
const CRASH_REPORT = /^fast_import_crash_(\d+)$/;
const TEMP_PACK = /^tmp_(?:pack|idx)_[A-Za-z0-9]+$/;

/**
 * Removes what a fast-import that died left in the store `dir`: its crash report
 * (`fast_import_crash_<pid>`, written when its stream ended early because this process was
 * killed mid-import) once that pid is gone, and its unfinished pack (`objects/pack/tmp_pack_*`,
 * when it was killed itself) once no git works on the store (`liveGit`: their pids, undefined
 * when that cannot be told); either when older than IMPORT_LEFTOVER_AGE_MS.
 */
export function removeImportLeftovers(dir: string, liveGit: () => number[] | undefined): void {
  const packs = path.join(dir, "objects", "pack");
  const reports = namesIn(dir).filter((n) => CRASH_REPORT.test(n));
  const temps = namesIn(packs).filter((n) => TEMP_PACK.test(n));
  for (const name of reports) {
    const pid = Number(CRASH_REPORT.exec(name)![1]);
    removeIf(path.join(dir, name), !pidAlive(pid));
  }
  // Listed before the look at /proc: a git that starts after it makes its own, which is not in the list.
  if (temps.length === 0) return;
  const idle = liveGit()?.length === 0;
  for (const name of temps) removeIf(path.join(packs, name), idle);
}

function namesIn(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

function removeIf(file: string, dead: boolean): void {
  try {
    if (dead || Date.now() - statSync(file).mtimeMs > IMPORT_LEFTOVER_AGE_MS) unlinkSync(file);
  } catch {
    // removed meanwhile
  }
}
