import { execFile, type ChildProcess } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { deflateSync } from "node:zlib";
import { faultPoint } from "../memory/fault-point.js";
import { isRefusedFile, readRegularTextSync } from "../regular-file.js";
import { ensureStateSubdir, stateDirFor, stateHome } from "../memory/state-dir.js";
import { startSlot, type SnapshotSlice } from "../contracts/start-slices.js";
import { processAlive } from "../process-life.js";

/** The snapshots' settings, handed over once at start (app/configure.ts). */
export const { set: useSnapshotSettings, get: snapshotSettings } = startSlot<SnapshotSlice>("the snapshots' settings");
/** git on the shadow repository, hermetic as nothing of the workspace is trusted (docs/ARCHITECTURE.md lists how). */
export const SNAPSHOTS_DIR = "snapshots";
/** A git call that takes longer is given up (the run goes on without a snapshot). */
export const GIT_TIMEOUT_MS = 60_000;
/** A git call of the first whole snapshot, in the background: hashing a big repository the first time takes minutes. */
export const FIRST_SNAPSHOT_TIMEOUT_MS = 30 * 60_000;
/** How long a lock held by a live process is waited for. */
export const LOCK_WAIT_MS = 15_000;
/** A leftover of a fast-import older than this is dead whatever /proc says (no git call runs longer). */
export const IMPORT_LEFTOVER_AGE_MS = 10 * 60_000;
/** git's "no object": as an old value, "the ref must not exist". */
export const ZERO_OID = "0".repeat(40);
const SHARED_INDEX = "index";
/** Our own indexes (`index-<pid>-<random>`) and their locks, and stores being made (`snapshots.new-<pid>-…`). */
const OWN_INDEX = /^index-(\d+)-[0-9a-f]+(?:\.lock)?$/;
const NEW_STORE = /^snapshots\.new-(\d+)-[0-9a-f]+$/;
// The untracked cache (in our own index) rereads only folders whose mtime moved; `status -uall` uses it only with all.
const GIT_CONFIG =
  `core.hooksPath=/dev/null core.attributesFile=/dev/null core.excludesFile=/dev/null core.fsmonitor=false
  core.untrackedCache=true status.showUntrackedFiles=all core.preloadIndex=true core.splitIndex=false
  core.sparseCheckout=false commit.gpgSign=false core.autocrlf=false core.safecrlf=false core.symlinks=true
  core.fileMode=true core.quotePath=false core.bigFileThreshold=512m gc.auto=0 maintenance.auto=false safe.directory=*
  submodule.recurse=false advice.addEmbeddedRepo=false init.defaultBranch=snapshots init.templateDir=
  user.name=mini-cursor user.email=snapshots@mini-cursor.invalid`
    .split(/\s+/)
    .flatMap((c) => ["-c", c]);
const REPO_CONFIG = "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tlogallrefupdates = false\n";
const NEUTRAL_ATTRIBUTES = "* -text -eol -crlf -filter -ident -working-tree-encoding !diff !merge\n";
const LOCKED = /(?:Unable to create|cannot lock ref '[^']+': Unable to create) '([^']+\.lock)': File exists/;
/** What git says when it cannot read the objects it has (a truncated pack, a corrupt loose object). */
const DAMAGE =
  /packfile \S+ (does not match index|cannot be accessed)|too short to be a packfile|object \S+ (\(stored in \S+\) )?is corrupt|inflate: |unable to unpack|object file \S+ is empty|bad packed object/;

/** git is missing, a call failed, or the store is unusable; `damaged`: its objects cannot be read. */
export class SnapshotError extends Error {
  override name = "SnapshotError";
  damaged = false;
}

/** Passes a damaged store on where a failed read is otherwise an answer: it is never "no snapshot". */
export function rethrowDamage(err: unknown): void {
  if ((err as SnapshotError).damaged) throw err;
}

// A path is its UTF-8 text, or when its bytes are not UTF-8, "/" and the bytes one char each (git
// never names a path starting with "/"; the form survives JSON and PostgreSQL). git's output is read
// one char a byte ("latin1"); pathOf decodes a path of it.
export function pathOf(bytes: string): string {
  const text = Buffer.from(bytes, "latin1").toString("utf8");
  return Buffer.from(text).toString("latin1") === bytes ? text : `/${bytes}`;
}
/** Whether a path is one of bytes that are not UTF-8 (see pathOf). */
export const isBytes = (p: string) => p.startsWith("/");
/** A path as git reads it, one char a byte. */
export const pathBinary = (p: string) => (isBytes(p) ? p.slice(1) : Buffer.from(p).toString("latin1"));
/** A workspace path for the file system (a Buffer when its name is not UTF-8). */
export const absPath = (root: string, rel: string): string | Buffer =>
  isBytes(rel) ? Buffer.concat([Buffer.from(`${root}/`), Buffer.from(rel.slice(1), "latin1")]) : `${root}/${rel}`;
/** A path for messages (bytes that are not UTF-8 shown as U+FFFD). */
export const shownPath = (p: string) => (isBytes(p) ? Buffer.from(p.slice(1), "latin1").toString() : p);
/** A failure that says the path is not there (or lies beyond a file). */
export const isGone = (err: unknown) => ["ENOENT", "ENOTDIR"].includes((err as NodeJS.ErrnoException).code ?? "");
/** What a path is now, not following a link; undefined when it cannot be looked at (gone, or beyond a file). */
export const lstatOrNone = (file: string | Buffer) => tryOr(() => fs.lstatSync(file), undefined);
/** NUL-terminated paths, as git reads them with -z. */
export const nulPaths = (paths: readonly string[]) =>
  Buffer.from(paths.map((p) => `${pathBinary(p)}\0`).join(""), "latin1");

/** What a git call reads on stdin (fast-import's stream in parts). */
export type GitInput = string | Buffer | AsyncIterable<Buffer>;
export interface GitOptions {
  timeoutMs?: number;
  /** Lets `git status` write what it refreshed (stat data, untracked cache) back to our own index. */
  writeIndex?: boolean;
  /** check-ignore: its exit 1 is an answer (nothing ignored), and it refuses GIT_LITERAL_PATHSPECS. */
  checkIgnore?: boolean;
  /** The call needs no index (a diff of two snapshots, fast-import): it reads none. */
  noIndex?: boolean;
}
/** One git call on the store; its output one char a byte (see pathOf). */
export type Git = (args: string[], input?: GitInput, options?: GitOptions) => Promise<string>;

/** git processes running now: a process that exits (while the first snapshot runs) ends them with it. */
const running = new Set<ChildProcess>();
process.once("exit", () => running.forEach((child) => child.kill("SIGKILL")));

function runOnce(dir: string, root: string, index: string, args: string[], input?: GitInput, o: GitOptions = {}) {
  const nowhere = path.join(dir, "no-home");
  const env: NodeJS.ProcessEnv = {
    ...snapshotSettings().gitEnvironment,
    ...{ GIT_DIR: dir, GIT_WORK_TREE: root, GIT_INDEX_FILE: o.noIndex ? path.join(dir, "no-index") : index },
    ...{ GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_SYSTEM: "/dev/null" },
    ...{ GIT_ATTR_NOSYSTEM: "1", GIT_NO_REPLACE_OBJECTS: "1", GIT_TERMINAL_PROMPT: "0", LC_ALL: "C" },
    ...{ GIT_OPTIONAL_LOCKS: o.writeIndex ? "1" : "0", HOME: nowhere, XDG_CONFIG_HOME: nowhere },
    ...(o.checkIgnore ? {} : { GIT_LITERAL_PATHSPECS: "1" }),
  };
  const timeout = o.timeoutMs ?? GIT_TIMEOUT_MS;
  const options = { cwd: root, env, timeout, maxBuffer: 256 * 1024 * 1024, encoding: "latin1" as const };
  return new Promise<string | { stderr: string; message: string; missing: boolean }>((resolve) => {
    const child = execFile("git", [...GIT_CONFIG, ...args], options, (err, stdout, stderr) => {
      running.delete(child);
      const code = (err as { code?: unknown } | null)?.code;
      if (!err || (o.checkIgnore && code === 1)) return resolve(stdout);
      const killed = (err as { killed?: boolean }).killed;
      const late = `git ${args[0]} took longer than ${Math.round(timeout / 1000)} s and was stopped`;
      resolve({ message: killed ? late : err.message, stderr: killed ? "" : stderr, missing: code === "ENOENT" });
    });
    running.add(child);
    // A git that ends first fails by its exit: the write's EPIPE is no crash.
    if (input !== undefined && child.stdin) pipeline(Readable.from(input), child.stdin).catch(() => undefined);
  });
}

/** Processes other than this one running git on the store (their GIT_DIR in /proc); undefined when /proc cannot tell. */
export function liveGitProcesses(dir: string): number[] | undefined {
  if (!fs.existsSync("/proc/self/environ")) return undefined;
  const wanted = Buffer.from(`GIT_DIR=${dir}\0`);
  const environ = (pid: string) => fs.readFileSync(`/proc/${pid}/environ`).includes(wanted);
  // Gone meanwhile, or another user's: not ours to wait for.
  return namesIn("/proc")
    .filter((n) => /^\d+$/.test(n) && Number(n) !== process.pid && tryOr(() => environ(n), false))
    .map(Number);
}

/** `f()`, or when it throws `none` (a function: called with the error). */
export function tryOr<T, N>(f: () => T, none: N | ((err: unknown) => N)): T | N {
  try {
    return f();
  } catch (err) {
    return typeof none === "function" ? (none as (err: unknown) => N)(err) : none;
  }
}

export function damagedStore(dir: string, what: string): SnapshotError {
  const moveAside = `Move it aside (mv ${dir} ${dir}.damaged) and the next snapshot starts a new store`;
  const text = `the snapshot store ${dir} is damaged (${what}), so the snapshots in it cannot be read. ${moveAside}`;
  const message = `${text}; the turns recorded in the old one can no longer be undone`;
  return Object.assign(new SnapshotError(message), { damaged: true });
}

/** Runs git on the store, taking over a dead git's lock and waiting for a live one's; failures as SnapshotError. */
export function gitRunner(dir: string, root: string, index: string): Git {
  return async (args, input, options) => {
    const deadline = Date.now() + LOCK_WAIT_MS;
    for (;;) {
      const out = await runOnce(dir, root, index, args, input, options);
      if (typeof out === "string") return out;
      if (out.missing)
        throw new SnapshotError("git is not installed (or not on PATH), so the workspace cannot be snapshotted");
      const said = (out.stderr || out.message).trim().split("\n").slice(-3).join(" ");
      if (DAMAGE.test(out.stderr)) throw damagedStore(dir, `git ${args[0]}: ${said}`);
      const lock = LOCKED.exec(out.stderr)?.[1];
      if (!lock?.startsWith(`${dir}/`)) throw new SnapshotError(`git ${args[0]} failed: ${said}`);
      const holders = liveGitProcesses(dir);
      const age = Date.now() - (lstatOrNone(lock)?.mtimeMs ?? Date.now());
      if (holders ? holders.length === 0 : age > GIT_TIMEOUT_MS) fs.rmSync(lock, { force: true });
      else if (Date.now() >= deadline) {
        const who = holders?.length ? `process ${holders.join(", ")}` : "another process";
        throw new SnapshotError(
          `${lock} is held by ${who}, still running after ${LOCK_WAIT_MS / 1000} s; once it ends, snapshots work again`,
        );
      } else await new Promise((r) => setTimeout(r, 100));
    }
  };
}

/** Refuses a symlink in the store's own folders, `depth` folders down (loose objects' folders, not each object). */
export function refuseLinks(dir: string, depth: number): void {
  for (const name of fs.readdirSync(dir)) {
    const entry = path.join(dir, name);
    const st = lstatOrNone(entry); // gone meanwhile: another git's temporary file
    if (st?.isSymbolicLink())
      throw new SnapshotError(
        `the snapshot store ${dir} holds a symlink (${entry} -> ${fs.readlinkSync(entry)}); it is not followed. Remove it to use snapshots again`,
      );
    if (st?.isDirectory() && depth > 0) refuseLinks(entry, name === "objects" ? 0 : depth - 1);
  }
}

const namesIn = (dir: string) => tryOr(() => fs.readdirSync(dir), []);

/** Removes what processes that are gone left in `dir`: the names `owner` gives a pid of (its first group). */
export function removeDeadOnes(dir: string, owner: RegExp): void {
  for (const name of namesIn(dir)) {
    const pid = Number(owner.exec(name)?.[1]);
    if (pid && pid !== process.pid && !processAlive(pid))
      fs.rmSync(path.join(dir, name), { recursive: true, force: true });
  }
}

/** Removes `file` when its writer is dead, or it is older than any git call runs (gone meanwhile: nothing). */
function removeIf(file: string, dead: boolean): void {
  const old = () => Date.now() - fs.statSync(file).mtimeMs > IMPORT_LEFTOVER_AGE_MS;
  tryOr(() => (dead || old()) && fs.rmSync(file, { recursive: true }), undefined);
}

/** What a dead fast-import left: its crash report once its feeder is gone, its pack (and the shared index's lock, which earlier versions wrote in place) once no git works on the store. */
export function removeImportLeftovers(dir: string, liveGit: () => number[] | undefined): void {
  for (const name of namesIn(dir)) {
    const pid = /^fast_import_crash_(\d+)$/.exec(name)?.[1];
    if (pid) removeIf(path.join(dir, name), !processAlive(Number(pid)));
  }
  const packs = path.join(dir, "objects", "pack");
  // Listed before /proc is read: a git that starts after it makes its own, not in the list.
  const temps = namesIn(packs)
    .filter((n) => /^tmp_(?:pack|idx)_[A-Za-z0-9]+$/.test(n))
    .map((n) => path.join(packs, n));
  if (fs.existsSync(path.join(dir, `${SHARED_INDEX}.lock`))) temps.push(path.join(dir, `${SHARED_INDEX}.lock`));
  const idle = temps.length > 0 && liveGit()?.length === 0;
  for (const file of temps) removeIf(file, idle);
}

/** A pack whose end is not the checksum its index names (cut short: truncated, a full disk), found when a store opens. */
function damagedPack(dir: string): string | undefined {
  const tail = (file: string, back: number) => {
    const fd = fs.openSync(file, "r");
    try {
      const out = Buffer.alloc(20);
      return fs.readSync(fd, out, 0, 20, Math.max(0, fs.fstatSync(fd).size - back)) === 20 ? out : undefined;
    } finally {
      fs.closeSync(fd);
    }
  };
  const packs = path.join(dir, "objects", "pack");
  for (const idx of namesIn(packs).filter((n) => /^pack-[0-9a-f]+\.idx$/.test(n))) {
    const pack = path.join(packs, idx.replace(/\.idx$/, ".pack"));
    const sum = tail(path.join(packs, idx), 40);
    if (fs.existsSync(pack) && !(sum && tail(pack, 20)?.equals(sum))) return pack;
  }
}

/** The repository's config, attributes and excludes, ours whatever was there. */
function ownFiles(dir: string, workspace: string): void {
  fs.writeFileSync(path.join(dir, "config"), REPO_CONFIG);
  fs.mkdirSync(path.join(dir, "info"), { recursive: true });
  fs.writeFileSync(path.join(dir, "info", "attributes"), NEUTRAL_ATTRIBUTES);
  // The state home when it lies inside the workspace is never recorded (nor restored).
  const home = path.relative(workspace, stateHome()).split(path.sep).join("/");
  const inside = home && !home.startsWith("..") && !path.isAbsolute(home) ? `/${home}/\n` : "";
  const exclude = path.join(dir, "info", "exclude");
  const want = `/.mini-cursor/\n${inside}`;
  // Rewritten only when it differs (the untracked cache starts over when it changes); anything but a
  // regular file in its place is removed first (a FIFO would block the write).
  const refused = (err: unknown) => isRefusedFile(err) && fs.rmSync(exclude, { recursive: true, force: true });
  if (tryOr(() => readRegularTextSync(exclude), refused) !== want) fs.writeFileSync(exclude, want);
}

/** Makes the store when there is none (whole, renamed into place), makes it ours and seeds this process's index. */
export async function openStore(workspace: string, dir: string, index: string): Promise<void> {
  removeDeadOnes(stateDirFor(workspace), NEW_STORE);
  if (!fs.existsSync(path.join(dir, "HEAD"))) {
    const fresh = ensureStateSubdir(workspace, `${SNAPSHOTS_DIR}.new-${process.pid}-${randomBytes(4).toString("hex")}`);
    try {
      await gitRunner(fresh, workspace, path.join(fresh, SHARED_INDEX))(["init", "--quiet"]);
      ownFiles(fresh, workspace);
      faultPoint("snapshot-store");
      fs.renameSync(fresh, dir);
    } catch (err) {
      if (!["ENOTEMPTY", "EEXIST"].includes((err as NodeJS.ErrnoException).code ?? "")) throw err;
      // Another process's store is there; one an earlier version left half made is completed in place.
      if (!fs.existsSync(path.join(dir, "HEAD"))) await gitRunner(dir, workspace, index)(["init", "--quiet"]);
    } finally {
      fs.rmSync(fresh, { recursive: true, force: true });
    }
  }
  ensureStateSubdir(workspace, SNAPSHOTS_DIR); // a plain folder, never a link
  refuseLinks(dir, 3);
  ownFiles(dir, workspace);
  removeDeadOnes(dir, OWN_INDEX);
  removeImportLeftovers(dir, () => liveGitProcesses(dir));
  const broken = damagedPack(dir);
  if (broken) throw damagedStore(dir, `${broken} is not the pack its index describes`);
  if (fs.existsSync(path.join(dir, SHARED_INDEX))) copyIndex(path.join(dir, SHARED_INDEX), index);
  // Our index becomes the shared one when we leave; a SIGKILL only loses git's stat cache.
  process.once("exit", () => publishIndex(dir, index, true));
}

/** An index copied with its mtime: git trusts its untracked cache against it (racy git), and a later one hides files made in the second before. */
const copyIndex = (from: string, to: string) => fs.cpSync(from, to, { preserveTimestamps: true });

/** Our index becomes the shared one (a copy renamed into place; moved itself at exit), so a later process starts from it. */
export function publishIndex(dir: string, index: string, move = false): void {
  const temp = path.join(dir, `index-${process.pid}-00`);
  try {
    if (!move) copyIndex(index, temp);
    fs.renameSync(move ? index : temp, path.join(dir, SHARED_INDEX));
  } catch {
    fs.rmSync(temp, { force: true }); // never made, or the store is gone
  }
}

export const blobOid = (data: Buffer) => createHash("sha1").update(`blob ${data.length}\0`).update(data).digest("hex");

/** Writes `data` as git's loose blob, linked into place (a kill leaves no partial one): a git start (~20 ms) fewer. */
export async function writeLooseBlob(gitDir: string, data: Buffer): Promise<string> {
  const oid = blobOid(data);
  const file = path.join(gitDir, "objects", oid.slice(0, 2), oid.slice(2));
  if (fs.existsSync(file)) return oid;
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = path.join(path.dirname(file), `tmp_obj_${randomBytes(6).toString("hex")}`);
  try {
    const raw = Buffer.concat([Buffer.from(`blob ${data.length}\0`), data]);
    fs.writeFileSync(tmp, deflateSync(raw, { level: 1 }), { mode: 0o444, flag: "wx" });
    // Not linked and not there (another writer's): a file system without hard links.
    if (!tryOr(() => (fs.linkSync(tmp, file), true), false) && !fs.existsSync(file)) fs.renameSync(tmp, file);
  } finally {
    fs.rmSync(tmp, { force: true });
  }
  return oid;
}

/** Makes the new ref `ref` (a name only this process writes) point at `oid`, by git's lock protocol. */
export function writeLooseRef(gitDir: string, ref: string, oid: string): void {
  const file = path.join(gitDir, ...ref.split("/"));
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(`${file}.lock`, `${oid}\n`, { flag: "wx" });
  try {
    fs.renameSync(`${file}.lock`, file);
  } catch (err) {
    fs.unlinkSync(`${file}.lock`);
    throw err;
  }
}
