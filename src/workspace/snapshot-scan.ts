import { lstat } from "node:fs/promises";
import path from "node:path";

/**
 * What a snapshot looks at again (issue 30): git's own change detection on the shadow
 * repository's private index. `git status` compares every file's stat data with the index (the
 * stat cache) and, with the untracked cache, reads again only the folders whose mtime changed,
 * so finding what changed since the last snapshot costs a stat per file and what changed, not
 * a hash per file. Only the paths it names are then hashed, after two filters: a file over
 * MAX_SNAPSHOT_FILE_BYTES is never hashed (it is dropped from the snapshot instead), and an
 * ignored file is never listed by status, nor kept once a `.gitignore` starts ignoring it.
 */

/** One git call on the shadow repository (workspace/snapshots.ts runs it hermetically). */
/** What a git call reads on stdin; parts are written one after another (fast-import's stream ends last). */
export type GitInput = string | Buffer | AsyncIterable<Buffer>;

export type Git = (args: string[], input?: GitInput, options?: GitCallOptions) => Promise<string>;

export interface GitCallOptions {
  /** Longer than the default for the first snapshot of a big workspace, which runs in the background. */
  timeoutMs?: number;
  /** Lets `git status` write what it refreshed (stat data, untracked cache) back to our own index. */
  writeIndex?: boolean;
  /** Exit codes other than 0 that are an answer, not a failure (check-ignore's 1: nothing ignored). */
  okExit?: readonly number[];
  /** "plain": without GIT_LITERAL_PATHSPECS, for a command that refuses it (check-ignore). */
  pathspecs?: "plain";
  /** The call needs no index (diff-tree of two snapshots): it is given none to read. */
  noIndex?: boolean;
}

/** git's "no object": as an old value, "the ref must not exist"; in an index line, "remove the path". */
export const ZERO_OID = "0".repeat(40);

/**
 * Files larger than this are not recorded: the edit limit of the file tools (tools/edit-target.ts
 * MAX_EDIT_BYTES), so a file no edit can rewrite whole is never hashed into the store. Undo
 * neither brings such a file back nor removes it, and the step says so.
 */
export const MAX_SNAPSHOT_FILE_BYTES = 10 * 1024 * 1024;
/** lstat calls in flight at once when a status names many paths (the first snapshot: every file). */
const STAT_CONCURRENCY = 64;

/**
 * Paths whose worktree state differs from the index: modified, deleted, type changed, or untracked
 * (not ignored). `git status --porcelain -z` entries are "XY path"; Y is the worktree against the index.
 */
export function parseStatus(output: string): { path: string; untracked: boolean }[] {
  const out: { path: string; untracked: boolean }[] = [];
  for (const entry of output.split("\0")) {
    if (entry.length < 4) continue;
    const x = entry[0];
    const y = entry[1];
    // An untracked folder is named only when it is another repository (a gitlink): "?? sub/".
    const rel = entry.slice(3).replace(/\/$/, "");
    if (x === "?" && y === "?") out.push({ path: rel, untracked: true });
    else if (y !== " " && y !== "?") out.push({ path: rel, untracked: false });
  }
  return out;
}

/** The status call: every change since the index, untracked files one by one. */
export const STATUS_ARGS = [
  "status",
  "--porcelain",
  "-z",
  "--untracked-files=all",
  "--no-renames",
  "--ignore-submodules=all",
];

async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/**
 * Whether a path lies beyond a symlink (or a file) in the workspace, which git sees as deleted
 * and refuses to add. Folders are looked at once per call (`seen`), so a scan of many files
 * costs an lstat per folder.
 */
async function beyondLink(workspace: string, rel: string, seen: Map<string, Promise<boolean>>): Promise<boolean> {
  const parts = rel.split("/");
  for (let i = 1; i < parts.length; i++) {
    const dir = parts.slice(0, i).join("/");
    let plain = seen.get(dir);
    if (!plain) {
      plain = lstat(path.join(workspace, dir)).then(
        (st) => st.isDirectory(),
        () => false,
      );
      seen.set(dir, plain);
    }
    if (!(await plain)) return true;
  }
  return false;
}

/** What a path is now: a regular file over the limit, gone, or anything else git records. */
async function kindOf(
  workspace: string,
  rel: string,
  seen: Map<string, Promise<boolean>> | undefined,
): Promise<"big" | "gone" | "ok"> {
  if (seen && (await beyondLink(workspace, rel, seen))) return "gone";
  try {
    const st = await lstat(path.join(workspace, rel));
    return st.isFile() && st.size > MAX_SNAPSHOT_FILE_BYTES ? "big" : "ok";
  } catch {
    return "gone";
  }
}

/** A file we may not read is left out of a snapshot rather than losing the whole of it. */
export function tolerateUnreadable(err: Error): void {
  if (!/unable to (index|stat)|Permission denied|open\(/i.test(err.message)) throw err;
}

const nul = (paths: readonly string[]) => `${paths.join("\0")}\0`;

/**
 * Brings the index up to date for `paths` (named by status, or declared by the step's tools):
 * each is hashed, dropped when gone, or dropped when over the limit (and then remembered in
 * `oversized`). `respectIgnores`: the paths did not come from status, so git must refuse the
 * ignored ones (`git add`); status never names them. `untracked`: paths status named as not in
 * the index, so one over the limit needs no removal. Returns whether the index may have changed.
 */
export async function stagePaths(
  git: Git,
  workspace: string,
  paths: readonly string[],
  oversized: Set<string>,
  options: { respectIgnores: boolean; timeoutMs?: number; untracked?: ReadonlySet<string> },
): Promise<boolean> {
  const unique = [...new Set(paths)];
  if (unique.length === 0) return false;
  const seen = new Map<string, Promise<boolean>>();
  // An untracked path status named is never beyond a link (status does not follow one): the first
  // snapshot's every file skips the look.
  const kinds = await mapLimit(unique, STAT_CONCURRENCY, (rel) =>
    kindOf(workspace, rel, options.untracked?.has(rel) ? undefined : seen),
  );
  const drop: string[] = [];
  const gone: string[] = [];
  const add: string[] = [];
  unique.forEach((rel, i) => {
    if (kinds[i] === "big") oversized.add(rel);
    else oversized.delete(rel);
    if (kinds[i] === "big" && options.untracked?.has(rel)) return;
    (kinds[i] === "big" ? drop : kinds[i] === "gone" ? gone : add).push(rel);
  });
  const opts = { timeoutMs: options.timeoutMs };
  // A path that is gone, or over the limit, leaves the index (a path not in it is no error).
  if (drop.length + gone.length > 0)
    await git(["update-index", "--force-remove", "-z", "--stdin"], nul([...drop, ...gone]), opts);
  if (add.length === 0) return drop.length + gone.length > 0;
  // GIT_LITERAL_PATHSPECS is set (snapshots.ts): each path is taken as it is spelt.
  const viaAdd = () =>
    git(
      ["add", "--all", "--ignore-errors", "--pathspec-from-file=-", "--pathspec-file-nul"],
      add.join("\0"),
      opts,
    ).catch((err: Error) => {
      // git names ignored paths and then gives hints, which are what the message keeps.
      if (!/ignored by one of your|addIgnoredFile/.test(err.message)) tolerateUnreadable(err);
      return "";
    });
  if (options.respectIgnores) await viaAdd();
  // update-index costs what it is given; a path it cannot take (unreadable, now a folder) goes through git add.
  else await git(["update-index", "--add", "--remove", "-z", "--stdin"], nul(add), opts).catch(viaAdd);
  return true;
}

/** Tracked paths a `.gitignore` now ignores: dropped, so an ignored file is never hashed again. */
export async function dropIgnored(git: Git): Promise<string[]> {
  const ignored = (await git(["ls-files", "-z", "--cached", "--ignored", "--exclude-standard"]))
    .split("\0")
    .filter(Boolean);
  if (ignored.length > 0) await git(["update-index", "--force-remove", "-z", "--stdin"], nul(ignored));
  return ignored;
}

/**
 * Brings the index up to date for the paths a step declares, looking at those alone (status
 * limited to them reads one folder per path, no untracked cache, nothing written when nothing
 * changed). Returns whether anything did.
 */
export async function refreshPaths(
  git: Git,
  workspace: string,
  paths: readonly string[],
  oversized: Set<string>,
): Promise<boolean> {
  const unique = [...new Set(paths)];
  if (unique.length === 0) return false;
  const entries = parseStatus(await git([...STATUS_ARGS, "--", ...unique]));
  // A declared file over the limit stays out: status names it as untracked every time.
  for (const rel of unique) if (!entries.some((e) => e.path === rel)) oversized.delete(rel);
  if (entries.length === 0) return false;
  const untracked = new Set(entries.filter((e) => e.untracked).map((e) => e.path));
  return stagePaths(
    git,
    workspace,
    entries.map((e) => e.path),
    oversized,
    { respectIgnores: false, untracked },
  );
}

/**
 * Brings the whole index up to date with the workspace, looking at what changed only. Returns
 * whether anything did (when nothing did, the previous snapshot stands and no tree is written).
 */
export async function refreshAll(
  git: Git,
  workspace: string,
  oversized: Set<string>,
  timeoutMs?: number,
): Promise<boolean> {
  const entries = parseStatus(await git(STATUS_ARGS, undefined, { writeIndex: true, timeoutMs }));
  if (entries.length === 0) return false;
  let changed = entries.map((e) => e.path);
  // A changed .gitignore first drops what it now ignores (read from the files on disk), before anything is hashed.
  const rulesChanged = changed.some((p) => p === ".gitignore" || p.endsWith("/.gitignore"));
  if (rulesChanged) {
    const dropped = new Set(await dropIgnored(git));
    changed = changed.filter((p) => !dropped.has(p));
  }
  const untracked = new Set(entries.filter((e) => e.untracked).map((e) => e.path));
  const staged = await stagePaths(git, workspace, changed, oversized, { respectIgnores: false, timeoutMs, untracked });
  return staged || rulesChanged;
}
