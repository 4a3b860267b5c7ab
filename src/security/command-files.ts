import { lstatSync, readdirSync, realpathSync } from "node:fs";
import path from "node:path";
import {
  FileTooLargeError,
  isRefusedFile,
  NotRegularFileError,
  readRegularTextSync,
  reportSkippedFile,
} from "../regular-file.js";
import { kindAt } from "./files.js";
import { contentHash } from "./trust.js";

/**
 * Reading a folder of custom slash command files (app/custom-commands.ts) without letting the
 * folder lead elsewhere: a project's `.mini-cursor/commands/` is the repository's content, and
 * the person's own folder is read under the same rules. A command's name is its file's name,
 * checked against COMMAND_NAME; nothing the person types is ever made into a path.
 * - A subfolder is a namespace, as in Claude Code: `frontend/component.md` is `frontend:component`
 *   (at most MAX_COMMAND_DEPTH folders deep). A subfolder must be a plain folder, not a symlink.
 * - A file that is a symlink out of the folder (or not a regular file) is refused, and said to be.
 * - In a project, the `.mini-cursor` folder and its `commands` folder must be plain folders.
 * - Each file is at most MAX_COMMAND_FILE_BYTES, and at most MAX_COMMAND_FILES are read.
 */

/** A command's file name without `.md`: what follows the slash. */
export const COMMAND_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
/** A prompt template longer than this is refused (it would fill the context, not help it). */
export const MAX_COMMAND_FILE_BYTES = 64 * 1024;
/** Files read from one folder (its subfolders included); the rest are said to be left out. */
export const MAX_COMMAND_FILES = 200;
/** Subfolders below the commands folder that are read as namespaces (`a/b/c.md` is `a:b:c`). */
export const MAX_COMMAND_DEPTH = 3;
const EXTENSION = ".md";
/** Joins a subfolder's name to its commands' names, as Claude Code does. */
export const NAMESPACE_SEPARATOR = ":";

export interface CommandFile {
  /** Without the slash; `folder:name` for a file in a subfolder. */
  name: string;
  /** The path below the folder, e.g. `frontend/component.md` (how messages name it). */
  relative: string;
  /** The path as listed in the folder (trust is kept by this path). */
  file: string;
  text: string;
  /** SHA-256 of the text (security/trust.ts). */
  hash: string;
}

function inside(root: string, target: string): boolean {
  const rel = path.relative(root, target);
  return rel !== "" && !rel.startsWith("..") && !path.isAbsolute(rel);
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
    // Why it is not a plain folder: missing (nothing to read), a symlink, or not a folder.
    const kind = kindAt(folder, false);
    if (kind === undefined) return { files: [], problems };
    const problem = kind === "link" ? "symlink" : "not a folder";
    if (kind !== "dir")
      return { files: [], problems: [`${label} is not read: ${folder} is a ${problem}, and must be a plain folder.`] };
  }
  let real: string;
  try {
    real = realpathSync(dir);
  } catch {
    return { files: [], problems };
  }
  // Each entry as a path below the folder, subfolders walked in name order.
  const entries: string[] = [];
  const walk = (relative: string, depth: number) => {
    let names: string[];
    try {
      names = readdirSync(path.join(real, relative)).sort();
    } catch {
      return;
    }
    for (const entry of names) {
      const rel = relative ? `${relative}/${entry}` : entry;
      if (entry.endsWith(EXTENSION)) {
        entries.push(rel);
        continue;
      }
      const kind = kindAt(path.join(real, rel), false);
      if (kind === "link") {
        if (kindAt(path.join(real, rel)) !== "dir") continue;
        problems.push(
          `${label}/${rel} is a symlink to a folder; a subfolder of commands must be a plain folder, so it is not read.`,
        );
      } else if (kind === "dir") {
        if (!COMMAND_NAME.test(entry))
          problems.push(
            `${label}/${rel} is not read: a subfolder's name is a command name's first part (letters, digits, - and _).`,
          );
        else if (depth >= MAX_COMMAND_DEPTH)
          problems.push(`${label}/${rel} is not read: subfolders are read ${MAX_COMMAND_DEPTH} deep at most.`);
        else walk(rel, depth + 1);
      }
    }
  };
  walk("", 0);
  let names = entries;
  if (names.length > MAX_COMMAND_FILES) {
    problems.push(
      `${label} has ${names.length} command files; only the first ${MAX_COMMAND_FILES} (by name) are read.`,
    );
    names = names.slice(0, MAX_COMMAND_FILES);
  }
  const files: CommandFile[] = [];
  for (const relative of names) {
    const parts = relative.slice(0, -EXTENSION.length).split("/");
    const base = parts[parts.length - 1]!;
    const name = parts.join(NAMESPACE_SEPARATOR);
    const shown = `${label}/${relative}`;
    if (!COMMAND_NAME.test(base)) {
      problems.push(
        `${shown} is not a command: a name is letters, digits, - and _ (at most 64, starting with a letter or digit).`,
      );
      continue;
    }
    const file = path.join(dir, relative);
    let target = path.join(real, relative);
    try {
      if (lstatSync(target).isSymbolicLink()) {
        target = realpathSync(target);
        if (!inside(real, target)) {
          problems.push(`${shown} is a symlink out of the folder (to ${target}); it is not read.`);
          continue;
        }
      }
      // A regular file (the last part is never followed), read without blocking: a FIFO put in the
      // folder must not hang the prompt.
      const text = readRegularTextSync(target, { maxBytes: MAX_COMMAND_FILE_BYTES });
      files.push({ name, relative, file, text, hash: contentHash(text) });
    } catch (err) {
      // Said at once too: a one-shot run of a custom command shows no /help.
      if (isRefusedFile(err)) reportSkippedFile(target, err);
      problems.push(
        err instanceof FileTooLargeError
          ? `${shown} is larger than ${MAX_COMMAND_FILE_BYTES / 1024} KiB; it is not read.`
          : err instanceof NotRegularFileError
            ? `${shown} is not a regular file; it is not read.`
            : `${shown} could not be read: ${(err as Error).message}`,
      );
    }
  }
  return { files, problems };
}
