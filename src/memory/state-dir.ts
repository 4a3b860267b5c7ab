import { createHash } from "node:crypto";
import {
  chmodSync,
  lstatSync,
  mkdirSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  unlinkSync,
  writeFileSync,
  type Stats,
} from "node:fs";
import { isRefusedFile, readRegularTextSync } from "../regular-file.js";
import path from "node:path";
import { migrateLegacyState } from "./legacy-state.js";
import { StateError } from "./state-errors.js";
import { startSlot } from "../contracts/start-slices.js";

/**
 * mini-cursor's private state lives outside every workspace, in the person's state folder
 * (settings.ts `stateHomePath`: MINI_CURSOR_STATE_HOME, `$XDG_STATE_HOME/mini-cursor`,
 * `~/.local/state/mini-cursor`, handed over at start: `useStateHome`), one folder per workspace keyed by the workspace's real path:
 * `workspaces/<name>-<sha256 of the real path, 16 hex>/`, with a `workspace` file naming that
 * path. Nothing a repository ships or the agent writes in the workspace is read as state, and a
 * read-only checkout can be worked on. The project rules files stay in the workspace: they are
 * the repository's content, trusted only after the trust question (security/rules.ts).
 */

/** The state home, handed over once at start (app/configure.ts); a test that changes it hands it over again. */
const home = startSlot<string>("mini-cursor's state home");
export const useStateHome = home.set;
/** The folder holding the state of every workspace, as handed over at start. */
export const stateHome = home.get;

/** The folder a repository may ship with its rules file (`.mini-cursor/config.json`); also where earlier versions kept their state. */
export const STATE_DIR_NAME = ".mini-cursor";
/** Folder of the per-workspace state folders under the state home. */
const WORKSPACES_DIR = "workspaces";
/** File in a workspace's state folder naming the workspace's real path, so the folder describes itself. */
export const WORKSPACE_NAME_FILE = "workspace";
/** Subfolder of the state folder for full command output and offloaded tool results. */
const OUTPUT_SUBDIR = "output";
/** Saved "always for this project" answers: allow rules the person chose (security/rules.ts reads them as trusted). */
export const SAVED_ANSWERS_FILE = "answers.json";
/** Characters of the workspace's folder name kept in its state folder's name. */
const NAME_CHARS = 40;
/** Hex digits of the real path's SHA-256 in the state folder's name. */
const HASH_CHARS = 16;
/** Only the person may read their threads and saved output. */
const PRIVATE_MODE = 0o700;

/**
 * Raised when the state folder (or something in it) is a symlink or cannot be made; says which and
 * what to do. A state error: printed as it is, never as a model request's failure.
 */
export class StateDirError extends StateError {
  override name = "StateDirError";
  constructor(message: string) {
    super(message, "STATE_DIR");
  }
}

function lstatOrUndefined(p: string): Stats | undefined {
  try {
    return lstatSync(p);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
}

/** Group and other permission bits: none may be set on a folder of ours. */
const SHARED_BITS = 0o077;
/** Group and other write bits, and the sticky bit that makes a shared folder safe to create in. */
const OTHERS_WRITE = 0o022;
const STICKY = 0o1000;

const myUid = (): number | undefined => process.getuid?.();

function notOurs(dir: string, uid: number): StateDirError {
  return new StateDirError(
    `${dir} belongs to another user (uid ${uid}), so whoever made it could read or change your conversations; mini-cursor will not keep its state there. Remove it, or set MINI_CURSOR_STATE_HOME to a folder of your own.`,
  );
}

/**
 * Creates the folder `dir` unless it is there, private to this user (mode 700). One already there
 * must be a real folder (not a symlink) that this user owns: another user could have made it in
 * advance (a shared MINI_CURSOR_STATE_HOME, where the names are predictable) to read or change
 * what is kept in it. Ours with looser permissions is narrowed to 700.
 */
function privateDirectory(dir: string): void {
  if (!lstatOrUndefined(dir)) {
    try {
      mkdirSync(dir, { mode: PRIVATE_MODE }); // not recursive: mkdir never follows a symlink at its end
      return;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== "EEXIST") throw stateError(dir, err);
    }
  }
  const st = lstatSync(dir);
  if (!st.isDirectory())
    throw new StateDirError(
      `${dir} is a symlink or not a folder; mini-cursor keeps its state there and will not write through it. Remove it and start again.`,
    );
  const uid = myUid();
  if (uid === undefined) return;
  if (st.uid !== uid) throw notOurs(dir, st.uid);
  if ((st.mode & SHARED_BITS) !== 0) chmodSync(dir, PRIVATE_MODE);
}

/**
 * The state home, created private when missing. One that is there is ours, or a shared folder
 * (root's) that others cannot rename our folders in: not writable by others, or sticky as /tmp is.
 * What is below it is checked folder by folder (privateDirectory).
 */
function readyStateHome(home: string): void {
  if (!lstatOrUndefined(home)) {
    try {
      mkdirSync(home, { recursive: true, mode: PRIVATE_MODE });
    } catch (err) {
      throw stateError(home, err);
    }
  }
  const uid = myUid();
  // A link someone else owns could be pointed elsewhere between two writes (only its owner can
  // replace it in a sticky folder such as /tmp): refused; one of ours, or root's, is followed.
  const link = lstatSync(home);
  if (link.isSymbolicLink() && uid !== undefined && link.uid !== uid && link.uid !== 0) throw notOurs(home, link.uid);
  const st = statSync(home);
  if (uid === undefined || st.uid === uid) return;
  if (st.uid !== 0 || ((st.mode & OTHERS_WRITE) !== 0 && (st.mode & STICKY) === 0)) throw notOurs(home, st.uid);
}

function stateError(dir: string, err: unknown): StateDirError {
  const code = (err as NodeJS.ErrnoException).code;
  const why =
    code === "EACCES" || code === "EPERM" || code === "EROFS"
      ? "it is not writable"
      : code === "ENOSPC"
        ? "the disk is full"
        : (err as Error).message;
  return new StateDirError(
    `cannot create mini-cursor's state folder ${dir}: ${why}. Make it writable, or set MINI_CURSOR_STATE_HOME to a folder you can write.`,
  );
}

/** The workspace's real path (symlinks resolved), the key of its state folder. */
export function workspaceRealPath(workspace: string): string {
  try {
    return realpathSync(workspace);
  } catch {
    return path.resolve(workspace);
  }
}

/** `<name>-<hash>`: readable in a listing, unique per real path. */
export function stateFolderName(realPath: string): string {
  const name =
    path
      .basename(realPath)
      .replace(/[^A-Za-z0-9._-]/g, "_")
      .replace(/^\.+/, "")
      .slice(0, NAME_CHARS) || "workspace";
  const hash = createHash("sha256").update(realPath).digest("hex").slice(0, HASH_CHARS);
  return `${name}-${hash}`;
}

/** Where a workspace's state folder is (not created). */
export function stateDirPath(workspace: string): string {
  return path.join(stateHome(), WORKSPACES_DIR, stateFolderName(workspaceRealPath(workspace)));
}

/** State folders this process has made ready, by state home and workspace. */
const ready = new Map<string, string>();
/** One-line notices (a migration done or refused) for the front end to show once. */
const pending: string[] = [];

/**
 * The workspace's private state folder, created on first use (mode 700, with its `workspace`
 * file). On the first use in a process, state an earlier version kept in `<workspace>/.mini-cursor/`
 * is copied over once when it is evidently ours (memory/legacy-state.ts); the line saying so
 * waits in `takeStateNotices`.
 */
export function stateDirFor(workspace: string): string {
  const real = workspaceRealPath(workspace);
  const home = stateHome();
  const key = `${home}\0${real}`;
  const known = ready.get(key);
  if (known) return known;
  readyStateHome(home);
  privateDirectory(path.join(home, WORKSPACES_DIR));
  const dir = path.join(home, WORKSPACES_DIR, stateFolderName(real));
  privateDirectory(dir);
  const nameFile = path.join(dir, WORKSPACE_NAME_FILE);
  let named = "";
  try {
    named = readRegularTextSync(nameFile);
  } catch (err) {
    // First use; anything but a regular file in its place is removed (a FIFO would block the write).
    if (isRefusedFile(err)) rmSync(nameFile, { recursive: true, force: true });
  }
  if (named !== `${real}\n`) writeFileSync(nameFile, `${real}\n`, { mode: 0o600 });
  const notice = migrateLegacyState(real, dir);
  if (notice) pending.push(notice);
  ready.set(key, dir);
  return dir;
}

/** The notices state folders produced since the last call (each is shown once). */
export function takeStateNotices(): string[] {
  return pending.splice(0);
}

/** `<state folder>/<name>`, created as a plain folder (a symlink there is refused). */
export function ensureStateSubdir(workspace: string, name: string): string {
  const sub = path.join(stateDirFor(workspace), name);
  privateDirectory(sub);
  return sub;
}

/** Where full command output and offloaded results are saved (created). */
export function ensureOutputDir(workspace: string): string {
  return ensureStateSubdir(workspace, OUTPUT_SUBDIR);
}

/** The output folder's path, without creating anything (read_file checks paths against it). */
export function outputDirPath(workspace: string): string {
  return path.join(stateDirPath(workspace), OUTPUT_SUBDIR);
}

/** The saved "always for this project" answers of a workspace (the state folder is created). */
export function savedAnswersFile(workspace: string): string {
  return path.join(stateDirFor(workspace), SAVED_ANSWERS_FILE);
}

/** Written to a temporary file and renamed, so a crash never leaves half of `file`. */
export function writeFileReplacing(file: string, text: string, beforeRename?: () => void): void {
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    writeFileSync(tmp, text);
    beforeRename?.();
    renameSync(tmp, file);
  } catch (err) {
    // A full disk leaves no half-written temporary file behind.
    try {
      unlinkSync(tmp);
    } catch {
      // never made
    }
    throw err;
  }
}
