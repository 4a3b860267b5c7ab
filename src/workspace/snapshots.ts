import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import {
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmdirSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { ensureStateSubdir, stateDirPath } from "../memory/state-dir.js";
import { snapshotGitEnvironment, stateHomePath } from "../settings.js";

/**
 * Workspace snapshots in a shadow git repository in the workspace's private state folder
 * (memory/state-dir.ts: `<state>/snapshots/`), so /undo, /rewind and Studio's time travel can
 * bring files back. git here is hermetic, because what the workspace holds is not trusted:
 * - the git dir is outside the workspace and its `config` is rewritten by us on first use in a
 *   process; no system or global config (GIT_CONFIG_NOSYSTEM, GIT_CONFIG_GLOBAL=/dev/null, HOME
 *   and XDG_CONFIG_HOME pointed at a folder that does not exist), none of the user's GIT_*
 *   variables (settings.ts `snapshotGitEnvironment`), no hooks, no fsmonitor, no signing;
 * - the git dir's `info/attributes` (which outranks every `.gitattributes`) unsets text, eol,
 *   filter, ident and working-tree-encoding for every path, so a workspace's `.gitattributes`
 *   can neither convert bytes nor name a filter; and no filter driver is configured anyway;
 * - a symlink anywhere in the snapshot store's own folders is refused, not followed.
 * The workspace's `.gitignore` files are honoured (an ignored `node_modules` is not recorded).
 * Each process keeps its own index (GIT_INDEX_FILE `index-<pid>-<random>`, seeded from the shared
 * `index` and handed back at exit), so two processes never contend for one index; objects and
 * refs are shared. A lock left by a git that died is removed once no live git works on this
 * store; one held by a live process is waited for, then reported.
 */

/** Folder of the state folder holding the shadow repository. */
export const SNAPSHOTS_DIR = "snapshots";
/** The branch every snapshot commit is chained on, so none is ever unreachable. */
const SNAPSHOT_REF = "refs/heads/snapshots";
/** Where the snapshot each thread's workspace was last left at is kept (time travel compares against it). */
const THREAD_REF_PREFIX = "refs/threads/";
/** Per thread, a blob: the log of where its files went (time travel restores only what it changed). */
const THREAD_LOG_PREFIX = "refs/thread-logs/";
/** Entries a thread's log keeps; time travel further back than these cannot tell what the thread changed. */
export const MAX_THREAD_LOG = 500;
/** A git call that takes longer than this is given up (the run goes on without a snapshot). */
export const GIT_TIMEOUT_MS = 60_000;
/** Output of one git call we are prepared to read (paths of a large project's diff). */
const GIT_MAX_BUFFER = 256 * 1024 * 1024;
/** How long a lock held by a live process is waited for before the snapshot gives up. */
export const LOCK_WAIT_MS = 15_000;
/** Between looks at a held lock. */
const LOCK_POLL_MS = 100;
/** Attempts at moving the snapshot branch when another process moved it meanwhile. */
const REF_ATTEMPTS = 8;
/** The shared index each process's own index starts from. */
const SHARED_INDEX = "index";
/** Our own index files: `index-<pid>-<random>`. */
const OWN_INDEX = /^index-(\d+)-[0-9a-f]+(?:\.lock)?$/;

/** Configuration on every call: nothing from the user's files may change what git does here. */
const GIT_CONFIG = [
  "core.hooksPath=/dev/null",
  "core.attributesFile=/dev/null",
  "core.excludesFile=/dev/null",
  "core.fsmonitor=false",
  "core.untrackedCache=false",
  "core.splitIndex=false",
  "core.sparseCheckout=false",
  "commit.gpgSign=false",
  "core.autocrlf=false",
  "core.safecrlf=false",
  "core.symlinks=true",
  "core.fileMode=true",
  "core.quotePath=false",
  "core.longpaths=true",
  "core.bigFileThreshold=512m",
  "gc.auto=0",
  "maintenance.auto=false",
  "safe.directory=*",
  "submodule.recurse=false",
  "advice.addEmbeddedRepo=false",
  "init.defaultBranch=snapshots",
  "init.templateDir=",
  "user.name=mini-cursor",
  "user.email=snapshots@mini-cursor.invalid",
];

/** The repository's own config, rewritten on first use in a process: nothing but the format. */
const REPO_CONFIG = "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tlogallrefupdates = false\n";
/** Highest-precedence attributes: no conversion, no filter, whatever the workspace's `.gitattributes` say. */
const NEUTRAL_ATTRIBUTES = "* -text -eol -crlf -filter -ident -working-tree-encoding !diff !merge\n";

/** git is missing, a call failed, or the store is unusable: the caller goes on without snapshots. */
export class SnapshotError extends Error {
  override name = "SnapshotError";
}

/** One path that differs between two snapshots, as git's raw diff says. */
export interface SnapshotChange {
  path: string;
  /** A: only in the second snapshot; D: only in the first; M: content changed; T: type or mode changed. */
  status: "A" | "D" | "M" | "T";
  /** File mode in the first and second snapshot ("000000" when absent). */
  fromMode: string;
  toMode: string;
  /** Lines added and removed going from the first to the second (undefined for binary files). */
  added?: number;
  removed?: number;
}

export interface SnapshotStore {
  readonly workspace: string;
  /**
   * Records the workspace now; returns the snapshot's id (a commit hash). With `paths`
   * (workspace-relative, `/`-separated), after a first whole snapshot in this process, only those
   * paths are looked at again: the rest stays as the previous snapshot had it (issue 30: an edit
   * step costs what it changes, not what the repository holds).
   */
  take(paths?: readonly string[]): Promise<string>;
  /** What differs going from snapshot `from` to snapshot `to` (only under `paths`, when given). */
  changes(from: string, to: string, paths?: readonly string[]): Promise<SnapshotChange[]>;
  /** Puts `paths` back as they are in snapshot `source` (written, or deleted when absent there). */
  restore(source: string, paths: readonly string[]): Promise<void>;
  /** Whether this store holds snapshot `id` (a thread shared through PostgreSQL may come from another machine). */
  has(id: string): Promise<boolean>;
  /** The snapshot a thread's workspace was last left at, if recorded. */
  threadSnapshot(threadId: string): Promise<string | undefined>;
  /**
   * Records that the thread left its files at snapshot `id`, having changed `paths` on the way
   * there (a step's files, the files time travel or an undo put back); unknown when not given.
   */
  setThreadSnapshot(threadId: string, id: string, paths?: readonly string[]): Promise<void>;
  /**
   * The paths the thread changed since its files were last at snapshot `id` (its log of
   * setThreadSnapshot calls, read backwards); undefined when the log does not go back to `id`
   * or a step on the way did not say which files it changed.
   */
  threadChangesSince(threadId: string, id: string): Promise<string[] | undefined>;
  /** Where the shadow repository is (for messages). */
  readonly gitDir: string;
}

/** The shadow repository's folder for a workspace (not created). */
export function snapshotGitDir(workspace: string): string {
  return path.join(stateDirPath(workspace), SNAPSHOTS_DIR);
}

interface GitContext {
  workspace: string;
  dir: string;
  index: string;
}

function gitEnvironment(ctx: GitContext): NodeJS.ProcessEnv {
  // A folder that does not exist: no ~/.gitconfig, no $XDG_CONFIG_HOME/git/{config,attributes,ignore}.
  const nowhere = path.join(ctx.dir, "no-home");
  return {
    ...snapshotGitEnvironment(),
    GIT_DIR: ctx.dir,
    GIT_WORK_TREE: ctx.workspace,
    GIT_INDEX_FILE: ctx.index,
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_CONFIG_SYSTEM: "/dev/null",
    GIT_ATTR_NOSYSTEM: "1",
    GIT_NO_REPLACE_OBJECTS: "1",
    GIT_OPTIONAL_LOCKS: "0",
    HOME: nowhere,
    XDG_CONFIG_HOME: nowhere,
    GIT_TERMINAL_PROMPT: "0",
    GIT_LITERAL_PATHSPECS: "1",
    LC_ALL: "C",
  };
}

/** What a failed git call left for us to read. */
interface GitFailure {
  message: string;
  stderr: string;
  missing?: boolean;
}

function runOnce(ctx: GitContext, args: string[], input?: string): Promise<string | GitFailure> {
  const argv = [...GIT_CONFIG.flatMap((c) => ["-c", c]), ...args];
  return new Promise((resolve) => {
    const child = execFile(
      "git",
      argv,
      {
        cwd: ctx.workspace,
        env: gitEnvironment(ctx),
        timeout: GIT_TIMEOUT_MS,
        maxBuffer: GIT_MAX_BUFFER,
        encoding: "utf8",
      },
      (err, stdout, stderr) => {
        if (!err) return resolve(stdout);
        const missing = (err as NodeJS.ErrnoException).code === "ENOENT";
        resolve({ message: err.message, stderr: stderr ?? "", missing });
      },
    );
    if (input !== undefined) child.stdin?.end(input);
  });
}

/** The lock file a failed git call names ("Unable to create '…/x.lock': File exists."). */
function lockIn(stderr: string): string | undefined {
  return (
    /Unable to create '([^']+\.lock)': File exists/.exec(stderr)?.[1] ??
    /cannot lock ref '[^']+': Unable to create '([^']+\.lock)'/.exec(stderr)?.[1]
  );
}

/**
 * Processes other than this one running git on the store, found by their GIT_DIR in /proc
 * (readable for one's own processes). Undefined when /proc cannot tell.
 */
export function liveGitProcesses(dir: string): number[] | undefined {
  let pids: string[];
  try {
    pids = readdirSync("/proc").filter((n) => /^\d+$/.test(n));
  } catch {
    return undefined;
  }
  const wanted = Buffer.from(`GIT_DIR=${dir}\0`);
  const found: number[] = [];
  for (const pid of pids) {
    if (Number(pid) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${pid}/environ`).includes(wanted)) found.push(Number(pid));
    } catch {
      // gone, or another user's
    }
  }
  return found;
}

function lockAge(lock: string): number | undefined {
  try {
    return Date.now() - statSync(lock).mtimeMs;
  } catch {
    return undefined;
  }
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Runs git on the store. A lock left by a git that died (no live git works on this store, or
 * without /proc, older than any git call may run) is removed and the call tried again; a lock
 * a live process holds is waited for up to LOCK_WAIT_MS.
 */
async function run(ctx: GitContext, args: string[], input?: string): Promise<string> {
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    const out = await runOnce(ctx, args, input);
    if (typeof out === "string") return out;
    if (out.missing)
      throw new SnapshotError("git is not installed (or not on PATH), so the workspace cannot be snapshotted");
    const lock = lockIn(out.stderr);
    if (lock?.startsWith(`${ctx.dir}/`)) {
      const holders = liveGitProcesses(ctx.dir);
      const age = lockAge(lock);
      const stale = holders ? holders.length === 0 : age === undefined || age > GIT_TIMEOUT_MS;
      if (stale) {
        try {
          unlinkSync(lock);
        } catch {
          // removed meanwhile
        }
        continue;
      }
      if (Date.now() < deadline) {
        await pause(LOCK_POLL_MS);
        continue;
      }
      const who = holders?.length ? `process ${holders.join(", ")}` : "another process";
      throw new SnapshotError(
        `${lock} is held by ${who}, still running after ${LOCK_WAIT_MS / 1000} s; once it ends, snapshots work again`,
      );
    }
    throw new SnapshotError(
      `git ${args[0]} failed: ${(out.stderr || out.message).trim().split("\n").slice(-3).join(" ")}`,
    );
  }
}

/** Refuses a symlink in the store's own folders (git would read or write through it). */
function refuseLinks(dir: string, depth: number): void {
  for (const name of readdirSync(dir)) {
    const entry = path.join(dir, name);
    const st = lstatSync(entry);
    if (st.isSymbolicLink())
      throw new SnapshotError(
        `the snapshot store ${dir} holds a symlink (${entry} -> ${readlinkSync(entry)}); it is not followed. Remove it to use snapshots again`,
      );
    // Loose objects' folders are checked; the objects in them are files git reads by name only there.
    if (st.isDirectory() && depth > 0) refuseLinks(entry, name === "objects" ? 1 : depth - 1);
  }
}

/**
 * Own index files of processes that are gone (and their locks) are removed, and the shared
 * index's lock (earlier versions wrote that index in place) once no git works on the store.
 */
function removeDeadIndexes(dir: string): void {
  const sharedLock = path.join(dir, `${SHARED_INDEX}.lock`);
  if (existsSync(sharedLock) && liveGitProcesses(dir)?.length === 0) {
    try {
      unlinkSync(sharedLock);
    } catch {
      // removed meanwhile
    }
  }
  for (const name of readdirSync(dir)) {
    const match = OWN_INDEX.exec(name);
    if (!match) continue;
    const pid = Number(match[1]);
    let alive = pid === process.pid;
    if (!alive) {
      try {
        process.kill(pid, 0);
        alive = true;
      } catch (err) {
        alive = (err as NodeJS.ErrnoException).code === "EPERM";
      }
    }
    if (!alive) {
      try {
        unlinkSync(path.join(dir, name));
      } catch {
        // removed by another process
      }
    }
  }
}

/** The state home, when it lies inside the workspace: it must not be snapshotted (nor restored). */
function stateHomeInside(workspace: string): string | undefined {
  const rel = path.relative(workspace, stateHomePath());
  return rel && !rel.startsWith("..") && !path.isAbsolute(rel) ? rel.split(path.sep).join("/") : undefined;
}

/** Creates the shadow repository on first use, and makes its config, attributes and excludes ours. */
async function ensureRepository(ctx: GitContext): Promise<void> {
  ensureStateSubdir(ctx.workspace, SNAPSHOTS_DIR);
  let ready = false;
  try {
    ready = lstatSync(path.join(ctx.dir, "HEAD")).isFile();
  } catch {
    // not created yet
  }
  if (!ready) await run(ctx, ["init", "--quiet"]);
  refuseLinks(ctx.dir, 3);
  writeFileSync(path.join(ctx.dir, "config"), REPO_CONFIG);
  mkdirSync(path.join(ctx.dir, "info"), { recursive: true });
  writeFileSync(path.join(ctx.dir, "info", "attributes"), NEUTRAL_ATTRIBUTES);
  const inside = stateHomeInside(ctx.workspace);
  writeFileSync(path.join(ctx.dir, "info", "exclude"), `/.mini-cursor/\n${inside ? `/${inside}/\n` : ""}`);
  removeDeadIndexes(ctx.dir);
  try {
    copyFileSync(path.join(ctx.dir, SHARED_INDEX), ctx.index);
  } catch {
    // no shared index yet: git builds ours from scratch
  }
  // Our index becomes the shared one when we leave; a SIGKILL only loses git's stat cache.
  process.once("exit", () => {
    try {
      renameSync(ctx.index, path.join(ctx.dir, SHARED_INDEX));
    } catch {
      // never made, or the store is gone
    }
  });
}

function parseRaw(output: string): SnapshotChange[] {
  // -z raw format: ":<mode> <mode> <sha> <sha> <status>\0<path>\0"
  const parts = output.split("\0");
  const out: SnapshotChange[] = [];
  for (let i = 0; i + 1 < parts.length; i += 2) {
    const meta = parts[i]!.replace(/^:/, "").split(" ");
    out.push({
      path: parts[i + 1]!,
      status: meta[4]![0] as SnapshotChange["status"],
      fromMode: meta[0]!,
      toMode: meta[1]!,
    });
  }
  return out;
}

function applyNumstat(changes: SnapshotChange[], output: string): void {
  const byPath = new Map(changes.map((c) => [c.path, c]));
  // -z numstat: "<added>\t<removed>\t<path>\0"
  for (const entry of output.split("\0")) {
    const [added, removed, ...rest] = entry.split("\t");
    const change = byPath.get(rest.join("\t"));
    if (!change || added === "-" || added === undefined) continue;
    change.added = Number(added);
    change.removed = Number(removed);
  }
}

/** Refuses to touch anything reached through a symlinked folder inside the workspace. */
function insideThroughPlainFolders(workspace: string, rel: string): boolean {
  if (path.isAbsolute(rel) || rel.split("/").includes("..")) return false;
  let dir = workspace;
  for (const part of rel.split("/").slice(0, -1)) {
    dir = path.join(dir, part);
    try {
      if (!lstatSync(dir).isDirectory()) return false;
    } catch {
      return true; // missing: git creates plain folders
    }
  }
  return true;
}

function removeFile(workspace: string, rel: string): void {
  if (!insideThroughPlainFolders(workspace, rel)) return;
  const file = path.join(workspace, rel);
  try {
    unlinkSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
  // Folders the file was the last thing in go too, as they were not there before.
  for (
    let dir = path.dirname(file);
    dir !== workspace && dir.startsWith(workspace + path.sep);
    dir = path.dirname(dir)
  ) {
    try {
      rmdirSync(dir);
    } catch {
      break;
    }
  }
}

/** Snapshot stores per workspace, so calls of one process on one workspace are never run at the same time. */
const stores = new Map<string, SnapshotStore>();

export function snapshotStore(workspace: string): SnapshotStore {
  const root = path.resolve(workspace);
  const dir = snapshotGitDir(root);
  const key = `${dir}\0${root}`;
  const existing = stores.get(key);
  if (existing) return existing;
  const ctx: GitContext = {
    workspace: root,
    dir,
    index: path.join(dir, `index-${process.pid}-${randomBytes(4).toString("hex")}`),
  };
  let queue: Promise<unknown> = Promise.resolve();
  const serial = <T>(work: () => Promise<T>): Promise<T> => {
    const next = queue.then(work, work);
    queue = next.catch(() => undefined);
    return next;
  };
  let prepared: Promise<void> | undefined;
  const prepare = () =>
    (prepared ??= ensureRepository(ctx).catch((err: unknown) => {
      prepared = undefined;
      throw err instanceof SnapshotError ? err : new SnapshotError((err as Error).message);
    }));
  let last: { tree: string; commit: string } | undefined;
  // Threads' snapshots as this process last read or set them: an agent step then checks its thread without running git.
  const threadRefs = new Map<string, string>();

  /** Chains `tree` on the snapshot branch; another process moving it meanwhile is retried on its new tip. */
  async function commit(tree: string): Promise<string> {
    for (let attempt = 1; ; attempt++) {
      const parent = (await run(ctx, ["rev-parse", "--verify", "--quiet", SNAPSHOT_REF]).catch(() => "")).trim();
      const id = (
        await run(ctx, ["commit-tree", tree, ...(parent ? ["-p", parent] : []), "-m", "mini-cursor snapshot"])
      ).trim();
      try {
        await run(ctx, ["update-ref", SNAPSHOT_REF, id, parent || "0".repeat(40)]);
        return id;
      } catch (err) {
        if (attempt >= REF_ATTEMPTS) throw err;
      }
    }
  }

  const store: SnapshotStore = {
    workspace: root,
    gitDir: dir,
    take: (paths) =>
      serial(async () => {
        await prepare();
        // Only the named paths once this process's index holds a whole snapshot; anything odd there takes the whole workspace.
        const partial =
          paths !== undefined &&
          last !== undefined &&
          (await stagePaths(ctx, paths).then(
            () => true,
            () => false,
          ));
        // --ignore-errors: a file we may not read is left out rather than losing the whole snapshot.
        if (!partial) await run(ctx, ["add", "--all", "--ignore-errors", "--", "."]).catch(tolerateUnreadable);
        const tree = (await run(ctx, ["write-tree"])).trim();
        if (last?.tree === tree) return last.commit;
        const id = await commit(tree);
        last = { tree, commit: id };
        return id;
      }),
    changes: (from, to, paths) =>
      serial(async () => {
        if (from === to || paths?.length === 0) return [];
        await prepare();
        const limit = paths ? ["--", ...paths] : [];
        const changes = parseRaw(
          await run(ctx, ["diff-tree", "-r", "-z", "--no-renames", "--raw", from, to, ...limit]),
        );
        if (changes.length > 0)
          applyNumstat(
            changes,
            await run(ctx, ["diff-tree", "-r", "-z", "--no-renames", "--numstat", from, to, ...limit]),
          );
        return changes;
      }),
    restore: (source, paths) =>
      serial(async () => {
        if (paths.length === 0) return;
        await prepare();
        const present = new Set(
          (await run(ctx, ["ls-tree", "-r", "-z", "--name-only", source, "--", ...paths])).split("\0").filter(Boolean),
        );
        for (const rel of paths) if (!present.has(rel)) removeFile(root, rel);
        const write = paths.filter((p) => present.has(p) && insideThroughPlainFolders(root, p));
        if (write.length > 0) {
          await run(
            ctx,
            ["checkout", "--quiet", source, "--pathspec-from-file=-", "--pathspec-file-nul"],
            write.join("\0"),
          );
        }
        last = undefined;
      }),
    has: (id) =>
      serial(async () => {
        await prepare();
        return run(ctx, ["cat-file", "-e", `${id}^{commit}`]).then(
          () => true,
          () => false,
        );
      }),
    threadSnapshot: (threadId) =>
      serial(async () => {
        const known = threadRefs.get(threadId);
        if (known) return known;
        await prepare();
        const out = (await run(ctx, ["rev-parse", "--verify", "--quiet", threadRef(threadId)]).catch(() => "")).trim();
        if (out) threadRefs.set(threadId, out);
        return out || undefined;
      }),
    setThreadSnapshot: (threadId, id, paths) =>
      serial(async () => {
        await prepare();
        await run(ctx, ["update-ref", threadRef(threadId), id]);
        threadRefs.set(threadId, id);
        const entry: ThreadLogEntry = paths ? { at: id, paths: [...paths] } : { at: id };
        const log = [...(await readThreadLog(ctx, threadId)), entry].slice(-MAX_THREAD_LOG);
        const blob = (await run(ctx, ["hash-object", "-w", "--stdin"], JSON.stringify(log))).trim();
        await run(ctx, ["update-ref", threadLogRef(threadId), blob]);
      }),
    threadChangesSince: (threadId, id) =>
      serial(async () => {
        await prepare();
        const log = await readThreadLog(ctx, threadId);
        const changed = new Set<string>();
        for (let i = log.length - 1; i >= 0; i--) {
          const entry = log[i]!;
          if (entry.at === id) return [...changed].sort();
          if (!entry.paths) return undefined;
          for (const p of entry.paths) changed.add(p);
        }
        return undefined;
      }),
  };
  stores.set(key, store);
  return store;
}

/** A file we may not read is left out of a snapshot rather than losing the whole of it. */
function tolerateUnreadable(err: SnapshotError): void {
  if (!/unable to (index|stat)|Permission denied|open\(/i.test(err.message)) throw err;
}

/**
 * Brings the index up to date for `paths` alone: those on disk are added (ignored ones are not:
 * git refuses them, which is what a whole snapshot does too), those gone are dropped.
 */
async function stagePaths(ctx: GitContext, paths: readonly string[]): Promise<void> {
  const present: string[] = [];
  const gone: string[] = [];
  for (const rel of new Set(paths)) {
    let exists = true;
    try {
      lstatSync(path.join(ctx.workspace, rel));
    } catch {
      exists = false;
    }
    // GIT_LITERAL_PATHSPECS is set (gitEnvironment): each path is taken as it is spelt.
    (exists ? present : gone).push(rel);
  }
  if (present.length > 0) {
    await run(
      ctx,
      ["add", "--all", "--ignore-errors", "--pathspec-from-file=-", "--pathspec-file-nul"],
      present.join("\0"),
    ).catch((err: SnapshotError) => {
      // git names ignored paths and then gives hints, which are what the message keeps.
      if (!/ignored by one of your|addIgnoredFile/.test(err.message)) tolerateUnreadable(err);
    });
  }
  if (gone.length > 0) {
    await run(
      ctx,
      ["rm", "--cached", "-q", "--ignore-unmatch", "--pathspec-from-file=-", "--pathspec-file-nul"],
      gone.join("\0"),
    );
  }
}

/** One move of a thread's files: where they went, and which paths the thread changed to get there. */
interface ThreadLogEntry {
  at: string;
  paths?: string[];
}

async function readThreadLog(ctx: GitContext, threadId: string): Promise<ThreadLogEntry[]> {
  const text = await run(ctx, ["cat-file", "blob", threadLogRef(threadId)]).catch(() => "");
  try {
    const data = JSON.parse(text) as unknown;
    return Array.isArray(data) ? (data as ThreadLogEntry[]).filter((e) => typeof e?.at === "string") : [];
  } catch {
    return [];
  }
}

function threadLogRef(threadId: string): string {
  return THREAD_LOG_PREFIX + Buffer.from(threadId, "utf8").toString("hex");
}

function threadRef(threadId: string): string {
  // Ref names allow few characters; thread ids come from users.
  return THREAD_REF_PREFIX + Buffer.from(threadId, "utf8").toString("hex");
}
