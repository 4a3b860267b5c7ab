import { execFile, type ChildProcess } from "node:child_process";
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
import type { Writable } from "node:stream";
import { faultPoint } from "../memory/fault-point.js";
import { IgnoreVerdicts } from "./ignore-verdicts.js";
import { writeLooseBlob } from "./loose-objects.js";
import { ensureStateSubdir, stateDirPath } from "../memory/state-dir.js";
import { snapshotGitEnvironment, snapshotWatchEnabled, stateHomePath } from "../settings.js";
import {
  capturePaths,
  orphanedPending,
  PENDING_PREFIX,
  savePendingEntries,
  pendingChanges,
  settlePending,
  type PendingSnapshot,
} from "./snapshot-pending.js";
import { isPendingSnapshot } from "./snapshot-pending.js";
import {
  type DirectResult,
  type Entry,
  type Looks,
  RefMovedError,
  refMoved,
  removeImportLeftovers,
  takeDirect,
} from "./snapshot-direct.js";
import { refreshAll, refreshPaths, type Git, type GitCallOptions, type GitInput, ZERO_OID } from "./snapshot-scan.js";
import { WorkspaceWatcher } from "./snapshot-watch.js";
import { pidAlive } from "./session-processes.js";

export { isPendingSnapshot } from "./snapshot-pending.js";
export { MAX_SNAPSHOT_FILE_BYTES } from "./snapshot-scan.js";

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
/**
 * A git call of the first whole snapshot of a process, which runs in the background: hashing
 * every file of a big repository the first time takes minutes on a slow disk, and no step waits
 * for it except a command step, for at most MINI_CURSOR_SNAPSHOT_WAIT_MS.
 */
export const FIRST_SNAPSHOT_TIMEOUT_MS = 30 * 60_000;
/** Output of one git call we are prepared to read (paths of a large project's diff). */
const GIT_MAX_BUFFER = 256 * 1024 * 1024;
/** How long a lock held by a live process is waited for before the snapshot gives up. */
export const LOCK_WAIT_MS = 15_000;
/** Between looks at a held lock. */
const LOCK_POLL_MS = 100;
/**
 * How long a take keeps trying to move the snapshot branch while other processes keep moving it
 * first: each lost attempt means another take was recorded, so trying on is safe. A count of 8
 * attempts ran out while another process took snapshots back to back (a two-process test).
 */
const REF_RETRY_MS = LOCK_WAIT_MS;
/** Attempts at moving the branch when it failed for another reason than a lost race. */
const OTHER_FAILURE_ATTEMPTS = 8;
/**
 * Before each attempt after a lost one, a random wait of up to this times the attempts lost
 * (at most REF_RETRY_MAX_STEPS times): two processes taking snapshots back to back otherwise lose
 * to each other in lockstep.
 */
const REF_RETRY_JITTER_MS = 10;
const REF_RETRY_MAX_STEPS = 20;

/** The random wait before attempt `attempt` (from 2 on) at moving the branch. */
const refRetryPause = (attempt: number) =>
  new Promise((resolve) =>
    setTimeout(resolve, Math.random() * Math.min(attempt - 1, REF_RETRY_MAX_STEPS) * REF_RETRY_JITTER_MS),
  );
/** Direct takes whose changes are remembered (a step's before and after are taken one after the other). */
const MAX_REMEMBERED_DIRECT = 16;
/** The shared index each process's own index starts from. */
const SHARED_INDEX = "index";
/** Never made: what a git call that needs no index is pointed at, so it reads none. */
const NO_INDEX = "no-index";
/** Our own index files: `index-<pid>-<random>`. */
const OWN_INDEX = /^index-(\d+)-[0-9a-f]+(?:\.lock)?$/;

/** Configuration on every call: nothing from the user's files may change what git does here. */
const GIT_CONFIG = [
  "core.hooksPath=/dev/null",
  "core.attributesFile=/dev/null",
  "core.excludesFile=/dev/null",
  "core.fsmonitor=false",
  // The untracked cache (kept in our own index) reads again only folders whose mtime changed;
  // it serves `status -uall` only when the configuration asks for all untracked files too.
  "core.untrackedCache=true",
  "status.showUntrackedFiles=all",
  "core.preloadIndex=true",
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

export interface TakeOptions {
  /**
   * A whole snapshot scans every file instead of asking the watcher, for this reason: the step
   * did what the watcher cannot see (agent/link-commands.ts: it made hard links).
   */
  scan?: string;
}

export interface SnapshotStore {
  readonly workspace: string;
  /**
   * Records the workspace now; returns the snapshot's id (a commit hash, or a pending ref, see
   * below). Without `paths` the whole workspace is looked at, through git's change detection
   * (snapshot-scan.ts): a stat per file, a hash per changed file. With `paths`
   * (workspace-relative, `/`-separated) only those are looked at again and the rest stays as
   * the previous snapshot had it (issue 30: an edit step costs what it changes). While the
   * first whole snapshot of this process is still running, a take with `paths` does not wait
   * for it: it hashes them at once and returns a `refs/pending/…` id that names a whole
   * snapshot once the first one is done (snapshot-pending.ts); a take without waits for it.
   */
  take(paths?: readonly string[], options?: TakeOptions): Promise<string>;
  /** Starts this process's first whole snapshot in the background, once; later calls do nothing. */
  startFirst(): void;
  /**
   * Waits at most `ms` for the first whole snapshot: true once it is done (the snapshots taken
   * meanwhile whole, the threads' moves to them recorded), false when it is still running;
   * rejects with its error when it failed (the next take tries again).
   */
  firstReady(ms: number): Promise<boolean>;
  /**
   * Whether snapshots taken while the first one runs wait for it to become whole, or a thread's
   * move to one is not recorded yet: a process must not end before both are (finishSnapshots).
   */
  hasPending(): boolean;
  /** Whether a pending snapshot id was made by this store (not another state folder's). */
  pendingHere(id: string): Promise<boolean>;
  /** Of `paths` (all when not given), those left out of snapshots in this process for being over MAX_SNAPSHOT_FILE_BYTES. */
  oversized(paths?: readonly string[]): string[];
  /**
   * What differs going from snapshot `from` to snapshot `to` (only under `paths`, when given);
   * `lines: false` leaves out the lines added and removed (one git call fewer).
   */
  changes(from: string, to: string, paths?: readonly string[], lines?: boolean): Promise<SnapshotChange[]>;
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

function gitEnvironment(ctx: GitContext, options: GitCallOptions): NodeJS.ProcessEnv {
  // A folder that does not exist: no ~/.gitconfig, no $XDG_CONFIG_HOME/git/{config,attributes,ignore}.
  const nowhere = path.join(ctx.dir, "no-home");
  return {
    ...snapshotGitEnvironment(),
    GIT_DIR: ctx.dir,
    GIT_WORK_TREE: ctx.workspace,
    // diff-tree reads the index it never uses (megabytes in a big repository): it gets none.
    GIT_INDEX_FILE: options.noIndex ? path.join(ctx.dir, NO_INDEX) : ctx.index,
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_CONFIG_SYSTEM: "/dev/null",
    GIT_ATTR_NOSYSTEM: "1",
    GIT_NO_REPLACE_OBJECTS: "1",
    // Only `git status` on our own index may write back what it refreshed (stat data, untracked cache).
    GIT_OPTIONAL_LOCKS: options.writeIndex ? "1" : "0",
    HOME: nowhere,
    XDG_CONFIG_HOME: nowhere,
    GIT_TERMINAL_PROMPT: "0",
    // check-ignore takes no pathspec magic, not even this; its paths are not globbed either.
    ...(options.pathspecs === "plain" ? {} : { GIT_LITERAL_PATHSPECS: "1" }),
    LC_ALL: "C",
  };
}

/** What a failed git call left for us to read. */
interface GitFailure {
  message: string;
  stderr: string;
  missing?: boolean;
}

/** git processes running now: a process that exits while the first snapshot runs ends them with it. */
const running = new Set<ChildProcess>();
let killOnExit = false;

function runOnce(
  ctx: GitContext,
  args: string[],
  input?: GitInput,
  options: GitCallOptions = {},
): Promise<string | GitFailure> {
  const argv = [...GIT_CONFIG.flatMap((c) => ["-c", c]), ...args];
  if (!killOnExit) {
    killOnExit = true;
    process.once("exit", () => {
      for (const child of running) child.kill("SIGKILL");
    });
  }
  return new Promise((resolve) => {
    const timeout = options.timeoutMs ?? GIT_TIMEOUT_MS;
    const child = execFile(
      "git",
      argv,
      {
        cwd: ctx.workspace,
        env: gitEnvironment(ctx, options),
        timeout,
        maxBuffer: GIT_MAX_BUFFER,
        encoding: "utf8",
      },
      (err, stdout, stderr) => {
        running.delete(child);
        if (!err || options.okExit?.includes((err as { code?: unknown }).code as number)) return resolve(stdout);
        const missing = (err as NodeJS.ErrnoException).code === "ENOENT";
        const message = (err as { killed?: boolean }).killed
          ? `git ${args[0]} took longer than ${Math.round(timeout / 1000)} s and was stopped`
          : err.message;
        resolve({ message, stderr: (err as { killed?: boolean }).killed ? "" : (stderr ?? ""), missing });
      },
    );
    running.add(child);
    if (input !== undefined && child.stdin) {
      // A git that ends before reading all it is given (killed, timed out) fails by its exit; the write's EPIPE is no crash.
      child.stdin.on("error", () => undefined);
      if (typeof input === "string" || Buffer.isBuffer(input)) child.stdin.end(input);
      else void feed(child.stdin, input);
    }
  });
}

/** Writes each part once the one before it reached the pipe, then ends the input. */
async function feed(stdin: Writable, parts: AsyncIterable<Buffer>): Promise<void> {
  try {
    for await (const part of parts)
      await new Promise<void>((resolve, reject) => stdin.write(part, (err) => (err ? reject(err) : resolve())));
    stdin.end();
  } catch {
    stdin.destroy(); // git ended first: its exit says why
  }
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
async function run(ctx: GitContext, args: string[], input?: GitInput, options?: GitCallOptions): Promise<string> {
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    const out = await runOnce(ctx, args, input, options);
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

/**
 * Refuses a symlink in the store's own folders (git would read or write through it), `depth`
 * folders down. Exported for its test.
 */
export function refuseLinks(dir: string, depth: number): void {
  for (const name of readdirSync(dir)) {
    const entry = path.join(dir, name);
    let st;
    try {
      st = lstatSync(entry);
    } catch (err) {
      // Another process's git (a temporary object) or watcher (a beacon) removed it meanwhile.
      if ((err as NodeJS.ErrnoException).code === "ENOENT") continue;
      throw err;
    }
    if (st.isSymbolicLink())
      throw new SnapshotError(
        `the snapshot store ${dir} holds a symlink (${entry} -> ${readlinkSync(entry)}); it is not followed. Remove it to use snapshots again`,
      );
    // Loose objects' folders are checked, not the objects in them: files git only reads by name
    // and never writes through, and one lstat each, on every start, of a store that grows with
    // every snapshot (issue 30's probe: 1.4 s of a 100k-file workspace's first step).
    if (st.isDirectory() && depth > 0) refuseLinks(entry, name === "objects" ? 0 : depth - 1);
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
    if (pid !== process.pid && !pidAlive(pid)) {
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
  // Rewritten only when it differs: the untracked cache starts over when this file changes.
  writeIfDifferent(path.join(ctx.dir, "info", "exclude"), `/.mini-cursor/\n${inside ? `/${inside}/\n` : ""}`);
  removeDeadIndexes(ctx.dir);
  removeImportLeftovers(ctx.dir, () => liveGitProcesses(ctx.dir));
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

function writeIfDifferent(file: string, text: string): void {
  try {
    if (readFileSync(file, "utf8") === text) return;
  } catch {
    // not there yet
  }
  writeFileSync(file, text);
}

/** This store's own name, made with it: pending ids carry it, so undo tells them from another state folder's. */
function storeId(ctx: GitContext): string {
  const file = path.join(ctx.dir, "mini-cursor-store-id");
  try {
    const id = readFileSync(file, "utf8").trim();
    if (/^[0-9a-f]{16}$/.test(id)) return id;
  } catch {
    // made below
  }
  try {
    writeFileSync(file, `${randomBytes(8).toString("hex")}\n`, { flag: "wx" });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
  }
  return readFileSync(file, "utf8").trim();
}

/** Our index becomes the shared one now (a copy renamed into place), so a later process starts from it. */
function publishIndex(ctx: GitContext): void {
  // Named like an own index, so a copy a killed process left is removed as one (removeDeadIndexes).
  const temp = path.join(ctx.dir, `index-${process.pid}-00`);
  try {
    copyFileSync(ctx.index, temp);
    renameSync(temp, path.join(ctx.dir, SHARED_INDEX));
  } catch {
    try {
      unlinkSync(temp);
    } catch {
      // never made
    }
  }
}

/** File kinds of a tree entry's mode that a recursive diff lists as themselves (not a folder, not a gitlink). */
const LISTED_AS_FILE = new Set(["100644", "100755", "120000"]);

/**
 * What `git diff-tree -r --raw` would list for a direct take's changes, in its order; undefined
 * when it could list more than the paths themselves: a path that was not a file before may have
 * replaced a file on its way (a recursive diff then lists that one's deletion too), and a folder
 * or gitlink is listed differently.
 */
function directChangesOf(changed: DirectResult["changed"]): SnapshotChange[] | undefined {
  const out: SnapshotChange[] = [];
  for (const { path: rel, from, to } of changed) {
    if (!from || !LISTED_AS_FILE.has(from.mode) || (to && !LISTED_AS_FILE.has(to.mode))) return undefined;
    const symlink = (mode: string) => mode === "120000";
    const status = !to ? "D" : symlink(from.mode) !== symlink(to.mode) ? "T" : "M";
    out.push({ path: rel, status, fromMode: from.mode, toMode: to?.mode ?? "000000" });
  }
  // diff-tree's order for files: their paths' bytes.
  return out.sort((a, b) => Buffer.compare(Buffer.from(a.path), Buffer.from(b.path)));
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

/** Folder of the snapshot store holding each process's watcher beacon (snapshot-watch.ts). */
const WATCH_DIR = "watch";

/** How this process's whole snapshots of a store were taken: from the watcher's answer, or by a scan (and why). */
export interface WholeTakeCounts {
  watched: number;
  scanned: number;
  /** Why the last scan was needed (the watcher's reason), for tests and traces. */
  lastScanReason?: string;
}
const wholeTakeCounts = new WeakMap<SnapshotStore, WholeTakeCounts>();
/** Test hook: how `store`'s whole snapshots were taken in this process. */
export function wholeTakesOf(store: SnapshotStore): WholeTakeCounts | undefined {
  return wholeTakeCounts.get(store);
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
  const git: Git = (args, input, options) => run(ctx, args, input, options);
  let last: { tree: string; commit: string } | undefined;
  // Threads' snapshots as this process last read or set them: an agent step then checks its thread without running git.
  const threadRefs = new Map<string, string>();
  const oversized = new Set<string>();
  /**
   * The changes of the latest direct takes from the snapshot each was made on (a step's after from
   * its before), when they are certain without git: see directChangesOf.
   */
  const directChanges = new Map<string, { from: string; changes: SnapshotChange[] }>();
  const rememberDirect = (from: string, to: string, changed: DirectResult["changed"]) => {
    const changes = directChangesOf(changed);
    if (!changes) return;
    if (directChanges.size >= MAX_REMEMBERED_DIRECT) directChanges.delete(directChanges.keys().next().value!);
    directChanges.set(to, { from, changes });
  };
  /** git's ignore answers for declared paths, while their rule files stay as they were. */
  const verdicts = new IgnoreVerdicts(root, path.join(dir, "info", "exclude"));
  /** The first whole snapshot of this process, once started; `last` is set when it is done. */
  let first: Promise<void> | undefined;
  /**
   * The first snapshot's job has ended: the snapshots taken meanwhile are whole and the threads'
   * moves to them recorded. `last` is set midway, before these.
   */
  let firstDone = false;
  /** Snapshots of declared paths taken while the first one runs, in order (snapshot-pending.ts). */
  let pending: PendingSnapshot[] = [];
  let pendingSeq = 0;
  const pendingById = new Map<string, PendingSnapshot>();
  /**
   * Thread moves to pending snapshots, recorded by the first snapshot's job once their refs are
   * made; each stays here until recorded, so hasPending() holds until then.
   */
  const afterPending: { threadId: string; id: string; paths?: readonly string[] }[] = [];
  /**
   * The index no longer holds `last`'s tree (a restore checked files out into it, or a direct
   * take recorded paths without it): the next whole snapshot writes a tree even if status sees nothing.
   */
  let indexMoved = false;
  /** Paths direct takes recorded that the index has not seen since: a take through the index restages them too. */
  const notInIndex = new Set<string>();
  /** Entries of `last`'s tree this process knows (a direct take asks git only for the others). */
  let known: { tree: string; entries: Map<string, Entry> } | undefined;

  /** Started with the first whole snapshot; says which paths changed since the last one (snapshot-watch.ts). */
  let watcher: WorkspaceWatcher | undefined;
  const counts: WholeTakeCounts = { watched: 0, scanned: 0 };

  /**
   * The whole workspace as a snapshot: from the watcher's answer when it is certain (only the
   * paths that changed are looked at, the way of declared paths), else through the index and a
   * scan of every file; nothing written when nothing changed.
   */
  async function takeWhole(timeoutMs?: number, scan?: string): Promise<string> {
    const watched = scan
      ? { reason: scan }
      : await takeWatched().catch((err: unknown) => ({
          reason: `the watcher's take failed: ${(err as Error).message}`,
        }));
    if ("id" in watched) return watched.id;
    const token = await watcher?.markScan();
    const changed = await refreshAll(git, root, oversized, timeoutMs);
    faultPoint("snapshot");
    notInIndex.clear();
    const id = await indexSnapshot(changed);
    watcher?.scanDone(token);
    counts.scanned++;
    counts.lastScanReason = watched.reason;
    return id;
  }

  /**
   * The watcher's way: the paths that changed since the last whole snapshot, on top of it, the
   * way of declared paths. Returns the snapshot's id, or why the scan must take it.
   */
  async function takeWatched(): Promise<{ id: string } | { reason: string }> {
    if (!watcher) return { reason: "the watcher is off" };
    if (!last) return { reason: "no snapshot yet" };
    const answer = await watcher.changes();
    if (!answer.certain) return { reason: answer.reason };
    const paths = new Set<string>();
    const replaced: string[] = [];
    const gone = new Set(answer.goneDirs);
    for (const rel of [...gone, ...answer.paths]) {
      // Gone (no look): recorded as gone.
      const folder = answer.looks.get(rel)?.isDirectory() ?? false;
      // A folder now: what is in it was marked one by one; a folder there before left entries to look at.
      if (!folder) paths.add(rel);
      else if (gone.has(rel)) replaced.push(rel);
    }
    if (replaced.length > 0) {
      const listed = await run(ctx, [
        "ls-tree",
        "-r",
        "-z",
        "--name-only",
        "--full-tree",
        last.tree,
        "--",
        ...replaced,
      ]);
      for (const rel of listed.split("\0")) if (rel) paths.add(rel);
    }
    faultPoint("snapshot");
    const id = paths.size === 0 ? last.commit : await direct([...paths], answer.looks);
    if (id === undefined)
      return { reason: "a changed path needs the index (a folder, a .gitignore, a nested repository)" };
    watcher.accept();
    counts.watched++;
    return { id };
  }

  /**
   * Paths on top of the last snapshot, without the index (snapshot-direct.ts); undefined when a
   * path needs the index's way, or the direct way failed (its rules are the same).
   */
  async function direct(paths: readonly string[], looks?: Looks): Promise<string | undefined> {
    const deadline = Date.now() + REF_RETRY_MS;
    for (let attempt = 1; last && (attempt === 1 || Date.now() < deadline); attempt++) {
      if (known?.tree !== last.tree) known = { tree: last.tree, entries: new Map() };
      const base = { tree: last.tree, commit: last.commit, known: known.entries };
      let made;
      try {
        made = await takeDirect(git, root, paths, base, oversized, SNAPSHOT_REF, looks, verdicts);
      } catch (err) {
        if (err instanceof RefMovedError) {
          await refRetryPause(attempt + 1);
          continue;
        }
        known = undefined;
        break;
      }
      if (!made) break;
      if (made.commit !== last.commit) {
        rememberDirect(base.commit, made.commit, made.changed);
        last = { tree: made.tree, commit: made.commit };
        known = { tree: made.tree, entries: base.known };
        tip = made.commit;
        indexMoved = true;
        for (const rel of made.written) notInIndex.add(rel);
      }
      return last.commit;
    }
    return undefined;
  }

  /** Declared paths: the direct way, else through the index (snapshot-scan.ts). */
  async function takePaths(paths: readonly string[]): Promise<string> {
    const id = await direct(paths);
    if (id !== undefined) return id;
    // What direct takes recorded (a whole one's too: paths other steps changed) goes back into the
    // index as the last snapshot has it, so this snapshot is that one with the declared paths.
    if (last && notInIndex.size > 0) {
      await run(
        ctx,
        ["reset", "-q", last.commit, "--pathspec-from-file=-", "--pathspec-file-nul"],
        [...notInIndex].join("\0"),
      );
      indexMoved = true;
    }
    notInIndex.clear();
    const staged = await refreshPaths(git, root, paths, oversized);
    return indexSnapshot(staged);
  }

  /** The index as a snapshot: the last one when nothing changed, a commit only for a new tree. */
  async function indexSnapshot(changed: boolean): Promise<string> {
    if (!changed && last && !indexMoved) return last.commit;
    const tree = (await run(ctx, ["write-tree"])).trim();
    indexMoved = false;
    if (last?.tree === tree) return last.commit;
    const id = await commit(tree);
    last = { tree, commit: id };
    return id;
  }

  const startFirst = (): Promise<void> =>
    (first ??= serial(async () => {
      await prepare();
      if (!watcher && snapshotWatchEnabled()) {
        watcher = new WorkspaceWatcher(root, path.join(dir, WATCH_DIR));
        watcher.start();
      }
      await takeWhole(FIRST_SNAPSHOT_TIMEOUT_MS);
      publishIndex(ctx);
      // Those a killed process left unmade first, then this process's: their refs are made now, in order.
      pending = [...(await orphanedPending(git, storeId(ctx))), ...pending];
      // The threads' moves to them in the same job, kept in afterPending until recorded: a process
      // that ends waits only while hasPending() says so (finishSnapshots), and its exit stops any
      // git still running (a thread's ref moved without its log: its next run cannot follow it).
      while (pending.length > 0 || afterPending.length > 0) {
        if (pending.length > 0) {
          const batch = pending;
          pending = [];
          last = await settlePending(git, batch, commit, last);
          for (const snap of batch) pendingById.delete(snap.id);
          continue;
        }
        const move = afterPending[0]!;
        // A move that fails leaves the thread as it was: its steps' undo still has their snapshots.
        await recordThreadMove(move.threadId, move.id, move.paths).catch(() => undefined);
        afterPending.shift();
      }
      firstDone = true;
    }).catch((err: unknown) => {
      first = undefined;
      throw err instanceof SnapshotError ? err : new SnapshotError((err as Error).message);
    }));

  /**
   * Each thread's log as this process last wrote it, and its blob: the next move's transaction
   * checks that the log ref still names that blob, so another writer is never overwritten.
   */
  const threadLogs = new Map<string, { blob: string; log: ThreadLogEntry[] }>();
  /**
   * The thread's ref and its log move in one `git update-ref --stdin` transaction, the log's blob
   * written here (loose-objects.ts): one git process per move where four ran (about 20 ms each),
   * and a process killed between the two can no longer leave the ref moved and the log not.
   * Runs in a serial job; threadRefs is the caller's to set.
   */
  async function recordThreadMove(threadId: string, id: string, paths?: readonly string[]): Promise<void> {
    const logRef = threadLogRef(threadId);
    const entry: ThreadLogEntry = paths ? { at: id, paths: [...paths] } : { at: id };
    for (let attempt = 1; ; attempt++) {
      let known = threadLogs.get(threadId);
      if (!known) {
        const blob = (await run(ctx, ["rev-parse", "--verify", "--quiet", logRef]).catch(() => "")).trim();
        known = { blob, log: blob ? parseThreadLog(await run(ctx, ["cat-file", "blob", blob]).catch(() => "")) : [] };
      }
      const log = [...known.log, entry].slice(-MAX_THREAD_LOG);
      const blob = await writeLooseBlob(dir, Buffer.from(JSON.stringify(log)));
      const expected = known.blob || ZERO_OID;
      try {
        await run(
          ctx,
          ["update-ref", "--stdin", "-z"],
          `update ${threadRef(threadId)}\0${id}\0\0update ${logRef}\0${blob}\0${expected}\0`,
        );
        threadLogs.set(threadId, { blob, log });
        return;
      } catch (err) {
        // Moved by another writer meanwhile (or unknown): read again, once.
        threadLogs.delete(threadId);
        if (attempt >= 2) throw err;
      }
    }
  }

  /** The snapshot branch as this process last set it. */
  let tip: string | undefined;
  /** Chains `tree` on the snapshot branch; another process moving it meanwhile is retried on its new tip. */
  async function commit(tree: string): Promise<string> {
    const deadline = Date.now() + REF_RETRY_MS;
    for (let attempt = 1; ; attempt++) {
      // The tip this process last set is tried first; when another process moved it, the swap fails and it is read.
      const parent =
        attempt === 1 && tip !== undefined
          ? tip
          : (await run(ctx, ["rev-parse", "--verify", "--quiet", SNAPSHOT_REF]).catch(() => "")).trim();
      const id = (
        await run(ctx, ["commit-tree", tree, ...(parent ? ["-p", parent] : []), "-m", "mini-cursor snapshot"])
      ).trim();
      try {
        await run(ctx, ["update-ref", SNAPSHOT_REF, id, parent || ZERO_OID]);
        tip = id;
        return id;
      } catch (err) {
        // Lost to another process: tried on until the deadline; any other failure a few times.
        const lost = refMoved((err as Error).message);
        if (lost ? Date.now() >= deadline : attempt >= OTHER_FAILURE_ATTEMPTS) throw err;
        await refRetryPause(attempt + 1);
      }
    }
  }

  const store: SnapshotStore = {
    workspace: root,
    gitDir: dir,
    take: async (paths, options) => {
      if (paths !== undefined && !last) {
        void startFirst().catch(() => undefined);
        if (!last) {
          await prepare();
          // Registered before hashing, so the first snapshot, when it ends, waits for these blobs.
          const id = `${PENDING_PREFIX}${storeId(ctx)}/${process.pid}-${++pendingSeq}-${randomBytes(4).toString("hex")}`;
          const snap: PendingSnapshot = {
            id,
            entries: capturePaths(git, dir, root, paths, oversized, verdicts).then(async (entries) => {
              await savePendingEntries(dir, id, entries);
              return entries;
            }),
          };
          pending.push(snap);
          pendingById.set(snap.id, snap);
          await snap.entries.catch((err: unknown) => {
            pending = pending.filter((p) => p !== snap);
            pendingById.delete(snap.id);
            throw err;
          });
          return snap.id;
        }
      }
      if (!last) await startFirst();
      return serial(async () => {
        await prepare();
        if (paths === undefined) return takeWhole(undefined, options?.scan);
        return takePaths(paths);
      });
    },
    startFirst: () => void startFirst().catch(() => undefined),
    firstReady: async (ms) => {
      if (firstDone) return true;
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
      try {
        return await Promise.race([startFirst().then(() => true), late]);
      } finally {
        clearTimeout(timer);
      }
    },
    hasPending: () => pendingById.size > 0 || afterPending.length > 0,
    pendingHere: async (id) => {
      await prepare();
      return id.startsWith(`${PENDING_PREFIX}${storeId(ctx)}/`);
    },
    oversized: (paths) => (paths ? paths.filter((p) => oversized.has(p)) : [...oversized]),
    changes: async (from, to, paths, lines = true) => {
      // A direct take's own changes from the snapshot it was made on: known without a diff-tree.
      const direct = lines ? undefined : directChanges.get(to);
      if (direct?.from === from) {
        const limit = paths && new Set(paths);
        return direct.changes.filter((c) => !limit || limit.has(c.path)).map((c) => ({ ...c }));
      }
      // A step's own before and after while the first snapshot runs: what its paths' blobs say.
      const a = pendingById.get(from);
      const b = pendingById.get(to);
      if (a && b) {
        const limit = paths && new Set(paths);
        return pendingChanges(await a.entries, await b.entries).filter((c) => !limit || limit.has(c.path));
      }
      return serial(async () => {
        if (from === to || paths?.length === 0) return [];
        await prepare();
        const limit = paths ? ["--", ...paths] : [];
        const changes = parseRaw(
          await run(ctx, ["diff-tree", "-r", "-z", "--no-renames", "--raw", from, to, ...limit], undefined, {
            noIndex: true,
          }),
        );
        if (changes.length > 0 && lines)
          applyNumstat(
            changes,
            await run(ctx, ["diff-tree", "-r", "-z", "--no-renames", "--numstat", from, to, ...limit], undefined, {
              noIndex: true,
            }),
          );
        return changes;
      });
    },
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
        indexMoved = true;
      }),
    has: async (id) => {
      // A snapshot taken during this process's first one: its ref is made when that ends.
      if (isPendingSnapshot(id)) await startFirst().catch(() => undefined);
      return serial(async () => {
        await prepare();
        return run(ctx, ["cat-file", "-e", `${id}^{commit}`]).then(
          () => true,
          () => false,
        );
      });
    },
    threadSnapshot: async (threadId) => {
      // Known here without git: a step never queues behind the first snapshot for it.
      const known = threadRefs.get(threadId);
      if (known) return known;
      // A ref read needs no index: it does not queue behind a snapshot (the first one takes minutes in a big repository).
      await prepare();
      const out = (await run(ctx, ["rev-parse", "--verify", "--quiet", threadRef(threadId)]).catch(() => "")).trim();
      if (out) threadRefs.set(threadId, out);
      return out || undefined;
    },
    setThreadSnapshot: async (threadId, id, paths) => {
      if (pendingById.has(id)) {
        // Its ref is made when the first snapshot ends; the move is recorded then.
        threadRefs.set(threadId, id);
        afterPending.push({ threadId, id, ...(paths ? { paths: [...paths] } : {}) });
        return;
      }
      return serial(async () => {
        await prepare();
        await recordThreadMove(threadId, id, paths);
        threadRefs.set(threadId, id);
      });
    },
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
  wholeTakeCounts.set(store, counts);
  stores.set(key, store);
  return store;
}

/** One move of a thread's files: where they went, and which paths the thread changed to get there. */
interface ThreadLogEntry {
  at: string;
  paths?: string[];
}

async function readThreadLog(ctx: GitContext, threadId: string): Promise<ThreadLogEntry[]> {
  return parseThreadLog(await run(ctx, ["cat-file", "blob", threadLogRef(threadId)]).catch(() => ""));
}

function parseThreadLog(text: string): ThreadLogEntry[] {
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
