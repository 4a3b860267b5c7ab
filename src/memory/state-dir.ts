import {
  closeSync,
  constants,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readlinkSync,
  unlinkSync,
  writeSync,
  type Stats,
} from "node:fs";
import path from "node:path";

/** Folder in the workspace for mini-cursor's own files (threads, saved output); it ignores itself for git. */
export const STATE_DIR_NAME = ".mini-cursor";
/** Subfolder of the state folder for full command output and offloaded tool results. */
const OUTPUT_SUBDIR = "output";
/** Where full outputs are saved, relative to the workspace root. */
export const OUTPUT_DIR = `${STATE_DIR_NAME}/${OUTPUT_SUBDIR}`;

/**
 * Raised when a repository ships the state folder (or something in it) as a symlink: every
 * write of ours (state.sqlite, threads.json, saved output, rules) would land where it points.
 */
export class StateDirError extends Error {
  override name = "StateDirError";
}

function lstatOrUndefined(p: string): Stats | undefined {
  try {
    return lstatSync(p);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
}

function refuseLink(p: string, workspace: string): never {
  let target = "";
  try {
    target = ` (it points to ${readlinkSync(p)})`;
  } catch {
    // not a link after all: the message still says what to do
  }
  const rel = path.relative(workspace, p);
  throw new StateDirError(
    `${rel} in ${workspace} is a symlink or not a plain folder${target}; mini-cursor keeps its own files there and will not write through it. Remove it (rm ${rel}) and start again.`,
  );
}

/** Creates the folder `dir` unless it is there; refuses a symlink or a file in its place. */
function plainDirectory(dir: string, workspace: string): void {
  const stat = lstatOrUndefined(dir);
  if (!stat) {
    try {
      mkdirSync(dir); // not recursive: mkdir never follows a symlink at its end
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
  }
  if (!lstatSync(dir).isDirectory()) refuseLink(dir, workspace);
}

/**
 * Creates `<workspace>/.mini-cursor` with a .gitignore of `*`, so it ignores itself for git.
 * A cloned repository may ship the folder as a symlink, or a symlinked `.gitignore`,
 * `state.sqlite` or `threads.json` in it: the folder and any symlinked entry are refused with a
 * StateDirError; a symlinked `.gitignore` is replaced by a plain file.
 */
export function ensureStateDir(workspace: string): string {
  const dir = path.join(workspace, STATE_DIR_NAME);
  plainDirectory(dir, workspace);
  for (const name of readdirSync(dir)) {
    const entry = path.join(dir, name);
    if (!lstatSync(entry).isSymbolicLink()) continue;
    if (name === ".gitignore") unlinkSync(entry);
    else refuseLink(entry, workspace);
  }
  const ignore = path.join(dir, ".gitignore");
  if (!lstatOrUndefined(ignore)) {
    try {
      // O_EXCL: never follows a symlink someone puts there meanwhile.
      const fd = openSync(
        ignore,
        constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
        0o666,
      );
      try {
        writeSync(fd, "*\n");
      } finally {
        closeSync(fd);
      }
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
  }
  return dir;
}

/** `<workspace>/.mini-cursor/<name>`, created as a plain folder (a symlink there is refused). */
export function ensureStateSubdir(workspace: string, name: string): string {
  const sub = path.join(ensureStateDir(workspace), name);
  plainDirectory(sub, workspace);
  return sub;
}

/** `<workspace>/.mini-cursor/output`, created as a plain folder (a symlink there is refused). */
export function ensureOutputDir(workspace: string): string {
  return ensureStateSubdir(workspace, OUTPUT_SUBDIR);
}
