import type { BigIntStats, Stats } from "node:fs";
import { lstat, readlink } from "node:fs/promises";
import path from "node:path";
import { faultPoint } from "../memory/fault-point.js";
import { FileTooLargeError, readRegularFile } from "../regular-file.js";
import { GITIGNORE_FILE } from "../workspace/ignore.js";
import { absPath, type Git, isGone, nulPaths, pathBinary, pathOf } from "./git.js";

/** The edit limit of the file tools (tools/edit-target.ts): a file no edit can rewrite whole is never hashed. */
export const MAX_SNAPSHOT_FILE_BYTES = 10 * 1024 * 1024;
/** lstat calls in flight at once when a status names many paths (the first snapshot: every file). */
const STAT_CONCURRENCY = 64;
const STATUS = ["status", "--porcelain", "-z", "--untracked-files=all", "--no-renames", "--ignore-submodules=all"];
const DOT_GIT = /(^|\/)\.git(\/|$)/i;

/** A path's entry in a tree, or null when absent. */
export type Entry = { mode: string; oid: string } | null;
/** What a path is now, for a take without the index ("index": only a scan records it as git does). */
export type Found = { kind: "record"; mode: string; data: Buffer } | { kind: "gone" | "big" | "keep" | "index" };
/** What paths were when last looked at (lstat; undefined: gone): not looked at again. */
export type Looks = ReadonlyMap<string, Stats | BigIntStats | undefined>;

/**
 * What `rel` is now, read here for a take by fast-import (the index is megabytes in a big repository).
 * "index": a folder or a `.gitignore`; "keep": a `.git` path, one in a nested repository, unreadable.
 */
export async function find(root: string, rel: string, looks?: Looks): Promise<Found> {
  if (DOT_GIT.test(rel)) return { kind: "keep" };
  if (path.posix.basename(rel) === GITIGNORE_FILE) return { kind: "index" };
  let dir = root;
  for (const part of rel.split("/").slice(0, -1)) {
    dir = path.join(dir, part);
    if (!(await lstat(dir).catch(() => undefined))?.isDirectory()) return { kind: "gone" }; // beyond a link or a file
    if (await lstat(path.join(dir, ".git")).catch(() => undefined)) return { kind: "keep" };
  }
  const abs = path.join(root, rel);
  try {
    const st = looks?.has(rel) ? looks.get(rel) : await lstat(abs);
    if (!st) return { kind: "gone" };
    if (st.isSymbolicLink())
      return { kind: "record", mode: "120000", data: await readlink(abs, { encoding: "buffer" }) };
    if (st.isDirectory()) return { kind: "index" };
    if (!st.isFile()) return { kind: "keep" };
    if (Number(st.size) > MAX_SNAPSHOT_FILE_BYTES) return { kind: "big" };
    // Not following a link, not waiting on a FIFO swapped in since the lstat; grown past the limit: big.
    const data = await readRegularFile(abs, { maxBytes: MAX_SNAPSHOT_FILE_BYTES });
    return { kind: "record", mode: Number(st.mode) & 0o100 ? "100755" : "100644", data };
  } catch (err) {
    if (err instanceof FileTooLargeError) return { kind: "big" };
    if (isGone(err)) return { kind: "gone" };
    return { kind: (err as NodeJS.ErrnoException).code === "EISDIR" ? "index" : "keep" };
  }
}

/** Of `paths`, those git ignores (`check-ignore --no-index`: the index is not read). */
export async function ignoredOf(git: Git, paths: readonly string[]): Promise<Set<string>> {
  if (paths.length === 0) return new Set();
  // "./" first: a name starting with ":" is no pathspec magic. With -v -n each path gets a record,
  // "<source>\0<line>\0<pattern>\0<path>\0": no source, no rule matched; a "!" pattern re-includes.
  const input = `${paths.map((p) => `./${p}`).join("\0")}\0`;
  const args = ["check-ignore", "--no-index", "-v", "-n", "-z", "--stdin"];
  const fields = (await git(args, input, { checkIgnore: true })).split("\0");
  return new Set(paths.filter((_, i) => fields[i * 4] && !fields[i * 4 + 2]?.startsWith("!")));
}

/** A path status named: over the limit, gone (also beyond a link, which git refuses to add), a nested repository (a folder: never recorded, and one with no commit stops `git add`), or to stage. */
async function kindOf(root: string, rel: string, folders: Map<string, Promise<boolean>> | undefined) {
  const isFolder = async (p: string) => (await lstat(absPath(root, p)).catch(() => undefined))?.isDirectory() === true;
  const parts = rel.split("/");
  for (let i = 1; folders && i < parts.length; i++) {
    const dir = parts.slice(0, i).join("/");
    if (!(await (folders.get(dir) ?? folders.set(dir, isFolder(dir)).get(dir)))) return "gone";
  }
  const st = await lstat(absPath(root, rel)).catch(() => undefined);
  return !st ? "gone" : st.isDirectory() ? "nested" : st.isFile() && st.size > MAX_SNAPSHOT_FILE_BYTES ? "big" : "ok";
}

/** Brings the index up to date with what `git status` says changed (over the limit: `oversized`); whether any did. */
export async function scanIndex(git: Git, root: string, oversized: Set<string>, timeoutMs?: number): Promise<boolean> {
  const entries = (await git(STATUS, undefined, { writeIndex: true, timeoutMs }))
    .split("\0")
    .filter((e) => e.length > 3 && e[1] !== " ") // "XY path": Y is the worktree against the index, "??" untracked
    .map((e) => ({ path: pathOf(e.slice(3).replace(/\/$/, "")), untracked: e.startsWith("??") })); // "?? sub/": a repository
  if (entries.length === 0) return false;
  let changed = entries.map((e) => e.path);
  const rulesChanged = changed.some((p) => path.posix.basename(p) === GITIGNORE_FILE);
  if (rulesChanged) {
    const ignored = (await git(["ls-files", "-z", "--cached", "--ignored", "--exclude-standard"])).split("\0");
    const dropped = new Set(ignored.filter(Boolean).map(pathOf));
    if (dropped.size > 0) await git(["update-index", "--force-remove", "-z", "--stdin"], nulPaths([...dropped]));
    changed = changed.filter((p) => !dropped.has(p));
  }
  const untracked = new Set(entries.filter((e) => e.untracked).map((e) => e.path));
  const folders = new Map<string, Promise<boolean>>();
  const kinds: string[] = [];
  // An untracked path status named is never beyond a link (status follows none): its folders are not looked at.
  const kind = (rel: string) => kindOf(root, rel, untracked.has(rel) ? undefined : folders);
  for (let i = 0; i < changed.length; i += STAT_CONCURRENCY)
    kinds.push(...(await Promise.all(changed.slice(i, i + STAT_CONCURRENCY).map(kind))));
  for (const [i, rel] of changed.entries())
    if (kinds[i] === "big") oversized.add(rel);
    else oversized.delete(rel);
  const add = changed.filter((_, i) => kinds[i] === "ok");
  const remove = changed.filter((rel, i) => kinds[i] === "gone" || (kinds[i] === "big" && !untracked.has(rel)));
  const opts = { timeoutMs };
  if (remove.length > 0) await git(["update-index", "--force-remove", "-z", "--stdin"], nulPaths(remove), opts);
  // update-index costs what it is given; one it cannot take (unreadable, a folder now) goes through
  // `git add`, which leaves out what it may not read rather than failing the snapshot.
  const addAll = ["add", "--all", "--ignore-errors", "--pathspec-from-file=-", "--pathspec-file-nul"];
  if (add.length > 0)
    await git(["update-index", "--add", "--remove", "-z", "--stdin"], nulPaths(add), opts).catch(() =>
      git(addAll, nulPaths(add), opts).catch((err: Error) => {
        if (!/unable to (index|stat)|Permission denied|open\(/i.test(err.message)) throw err;
        return "";
      }),
    );
  return remove.length + add.length > 0 || rulesChanged;
}

/** A path as fast-import reads it: C-style quoted, so any byte but NUL may be in it (one char a byte, written as latin1). */
const quotePath = (rel: string) =>
  `"${pathBinary(rel)
    .replace(/["\\]/g, "\\$&")
    .replace(/[^ -~\x80-\xff]/g, (c) => `\\${c.charCodeAt(0).toString(8).padStart(3, "0")}`)}"`;

/** One commit for fast-import: `tree` (the last snapshot's) with `changes` on it, on `ref`, its parent `from`. */
export interface ImportCommit {
  ref: string;
  from?: string;
  tree?: string;
  /** A path's new entry (null: removed). */
  changes: ReadonlyArray<{ path: string; to: Entry }>;
}

/** Writes `commits` by one `git fast-import` ("done" ends it: one cut short moves no ref); each one's commit and tree. */
export async function runImport(
  git: Git,
  commits: readonly ImportCommit[],
  options: { force?: boolean; point?: boolean } = {},
) {
  let body = "feature done\n";
  commits.forEach((c, i) => {
    const who = `committer mini-cursor <snapshots@mini-cursor.invalid> ${Math.floor(Date.now() / 1000)} +0000`;
    body += `commit ${c.ref}\nmark :${i + 1}\n${who}\ndata 20\nmini-cursor snapshot\n`;
    body += `${c.from ? `from ${c.from}\n` : ""}${c.tree ? `M 040000 ${c.tree} ""\n` : ""}`;
    for (const { path: p, to: e } of c.changes)
      body += e ? `M ${e.mode} ${e.oid} ${quotePath(p)}\n` : `D ${quotePath(p)}\n`;
    body += `ls ""\n\nget-mark :${i + 1}\n`;
  });
  // An iterable, not an iterator: a git that found a lock taken runs again, and is fed again.
  const stream = {
    async *[Symbol.asyncIterator]() {
      yield Buffer.from(body, "latin1");
      if (options.point) faultPoint("snapshot-import");
      yield Buffer.from("done\n");
    },
  };
  const out = await git(["fast-import", "--quiet", ...(options.force ? ["--force"] : [])], stream, { noIndex: true });
  if (options.point) faultPoint("snapshot-imported");
  const trees = [...out.matchAll(/^040000 tree ([0-9a-f]{40})\t/gm)].map((m) => m[1]!);
  const ids = [...out.matchAll(/^([0-9a-f]{40})$/gm)].map((m) => m[1]!);
  if (ids.length !== commits.length || trees.length !== commits.length)
    throw new Error(`git fast-import answered unexpectedly: ${out.slice(0, 200)}`);
  return ids.map((commit, i) => ({ commit, tree: trees[i]! }));
}

/** Whether git refused to move a ref because another process moved it first. */
export const refMoved = (message: string) =>
  /Not updating|cannot lock ref '[^']+': is at [0-9a-f]+ but expected/.test(message);
