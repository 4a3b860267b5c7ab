import { closeSync, constants, fstatSync, lstatSync, openSync, readdirSync, readSync, realpathSync } from "node:fs";
import path from "node:path";
import { contentHash } from "./trust.js";

/**
 * Reading a folder of custom slash command files (app/custom-commands.ts) without letting the
 * folder lead elsewhere: a project's `.mini-cursor/commands/` is the repository's content, and
 * the person's own folder is read under the same rules. A command's name is its file's name,
 * checked against COMMAND_NAME; nothing the person types is ever made into a path.
 * - A file that is a symlink out of the folder (or not a regular file) is refused, and said to be.
 * - In a project, the `.mini-cursor` folder and its `commands` folder must be plain folders.
 * - Each file is at most MAX_COMMAND_FILE_BYTES, and at most MAX_COMMAND_FILES are read.
 */

/** A command's file name without `.md`: what follows the slash. */
export const COMMAND_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
/** A prompt template longer than this is refused (it would fill the context, not help it). */
export const MAX_COMMAND_FILE_BYTES = 64 * 1024;
/** Files read from one folder; the rest are said to be left out. */
export const MAX_COMMAND_FILES = 200;
const EXTENSION = ".md";

export interface CommandFile {
  /** Without the slash. */
  name: string;
  /** The path as listed in the folder (trust is kept by this path). */
  file: string;
  text: string;
  /** SHA-256 of the text (security/trust.ts). */
  hash: string;
}

/** Why a path is not a plain folder, or undefined when it is one (or is missing: `missing`). */
function folderProblem(dir: string): "missing" | "symlink" | "not a folder" | undefined {
  try {
    const st = lstatSync(dir);
    if (st.isSymbolicLink()) return "symlink";
    return st.isDirectory() ? undefined : "not a folder";
  } catch {
    return "missing";
  }
}

function inside(root: string, target: string): boolean {
  const rel = path.relative(root, target);
  return rel !== "" && !rel.startsWith("..") && !path.isAbsolute(rel);
}

/** Reads one file that must be a regular file of at most MAX_COMMAND_FILE_BYTES; the last part is never followed. */
function readBounded(real: string): string | "too large" | "not a file" {
  // O_NONBLOCK: a FIFO put in the folder must not hang the prompt.
  const fd = openSync(real, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return "not a file";
    if (st.size > MAX_COMMAND_FILE_BYTES) return "too large";
    const buf = Buffer.alloc(st.size);
    let read = 0;
    while (read < st.size) {
      const n = readSync(fd, buf, read, st.size - read, read);
      if (n === 0) break;
      read += n;
    }
    return buf.subarray(0, read).toString("utf8");
  } finally {
    closeSync(fd);
  }
}

/**
 * The command files of `dir` and what was refused there (one sentence each, naming the file).
 * `label` names the folder in those sentences; `plainFolders` are folders that must not be
 * symlinks (a project's `.mini-cursor` and `commands`).
 */
export function readCommandFolder(
  dir: string,
  label: string,
  plainFolders: readonly string[] = [],
): { files: CommandFile[]; problems: string[] } {
  const problems: string[] = [];
  for (const folder of plainFolders) {
    const problem = folderProblem(folder);
    if (problem === "missing") return { files: [], problems };
    if (problem)
      return { files: [], problems: [`${label} is not read: ${folder} is a ${problem}, and must be a plain folder.`] };
  }
  let real: string;
  let names: string[];
  try {
    real = realpathSync(dir);
    names = readdirSync(real)
      .filter((n) => n.endsWith(EXTENSION))
      .sort();
  } catch {
    return { files: [], problems };
  }
  if (names.length > MAX_COMMAND_FILES) {
    problems.push(
      `${label} has ${names.length} command files; only the first ${MAX_COMMAND_FILES} (by name) are read.`,
    );
    names = names.slice(0, MAX_COMMAND_FILES);
  }
  const files: CommandFile[] = [];
  for (const entry of names) {
    const name = entry.slice(0, -EXTENSION.length);
    const shown = `${label}/${entry}`;
    if (!COMMAND_NAME.test(name)) {
      problems.push(
        `${shown} is not a command: a name is letters, digits, - and _ (at most 64, starting with a letter or digit).`,
      );
      continue;
    }
    const file = path.join(dir, entry);
    try {
      let target = path.join(real, entry);
      if (lstatSync(target).isSymbolicLink()) {
        target = realpathSync(target);
        if (!inside(real, target)) {
          problems.push(`${shown} is a symlink out of the folder (to ${target}); it is not read.`);
          continue;
        }
      }
      const text = readBounded(target);
      if (text === "too large") {
        problems.push(`${shown} is larger than ${MAX_COMMAND_FILE_BYTES / 1024} KiB; it is not read.`);
        continue;
      }
      if (text === "not a file") {
        problems.push(`${shown} is not a regular file; it is not read.`);
        continue;
      }
      files.push({ name, file, text, hash: contentHash(text) });
    } catch (err) {
      problems.push(`${shown} could not be read: ${(err as Error).message}`);
    }
  }
  return { files, problems };
}
