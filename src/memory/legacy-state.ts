import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readlinkSync,
  readSync,
  readdirSync,
  writeFileSync,
  writeSync,
  existsSync,
} from "node:fs";
import path from "node:path";
import { MAX_CONFIG_BYTES, MAX_STATE_FILE_BYTES, readRegularFileSync, readRegularTextSync } from "../regular-file.js";

/**
 * The one-time move of state that earlier versions kept in `<workspace>/.mini-cursor/`.
 *
 * A repository can ship a `.mini-cursor/` folder, so its content is copied only when it is
 * evidently one mini-cursor made on this machine, by this user:
 * - it is a real folder (not a symlink) owned by the current user;
 * - it holds the `.gitignore` of exactly `*` that mini-cursor wrote into every state folder;
 * - the workspace's git index (when the workspace is a git repository) tracks nothing under
 *   `.mini-cursor/`: a folder that came with a clone is tracked, and then nothing is copied.
 * Only data is copied: the thread database (state.sqlite with its -wal), the thread index, the
 * loop's thread files, and the snapshot repository's objects and refs (never its config, hooks,
 * info or index, which git would run or honour). Every file is opened without following a
 * symlink and must lie inside the folder; links and special files are skipped. The old folder is
 * left as it is (the rules file in it stays the repository's), and a `migrated` file in the state
 * folder makes this happen once.
 */

const LEGACY_DIR = ".mini-cursor";
/** What every state folder of ours held: it made the folder ignore itself for git. */
const OUR_GITIGNORE = "*\n";
/** Marks a state folder as done with the old folder, whatever the outcome. */
const MIGRATED_FILE = "migrated";
/** The plain files and folders copied as they are. */
const DATA_ITEMS = ["state.sqlite", "state.sqlite-wal", "threads.json", "loop-threads"];
/** Of the snapshot repository, only what holds data. */
const SNAPSHOT_ITEMS = ["objects", "refs", "packed-refs", "HEAD"];
const SNAPSHOTS = "snapshots";
/** Items whose presence makes an old folder worth a line when it is not copied. */
const STATE_ITEMS = ["state.sqlite", "threads.json", "loop-threads", SNAPSHOTS];
const COPY_CHUNK = 1024 * 1024;
const NOFOLLOW_READ = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

function lstatOrUndefined(p: string) {
  try {
    return lstatSync(p);
  } catch {
    return undefined;
  }
}

/** The workspace's git index file, or undefined when the workspace is not a git repository; null when it cannot be told. */
function gitIndexOf(workspace: string): string | undefined | null {
  const dotGit = path.join(workspace, ".git");
  const st = lstatOrUndefined(dotGit);
  if (!st) return undefined;
  if (st.isDirectory()) return path.join(dotGit, "index");
  if (!st.isFile()) return null;
  // A worktree or submodule: ".git" names the git dir.
  const match = /^gitdir:\s*(.+?)\s*$/m.exec(readRegularTextSync(dotGit, { maxBytes: MAX_CONFIG_BYTES }));
  return match ? path.join(path.resolve(workspace, match[1]!), "index") : null;
}

/** Git's offset-varint (index v4's "bytes to drop from the previous path"). */
function readVarint(buf: Buffer, at: number): [number, number] {
  let byte = buf[at++]!;
  let value = byte & 0x7f;
  while (byte & 0x80) {
    byte = buf[at++]!;
    value = ((value + 1) << 7) | (byte & 0x7f);
  }
  return [value, at];
}

/** The paths a git index (versions 2 to 4, SHA-1) lists, or undefined when it cannot be read as one. */
export function indexPaths(buf: Buffer): string[] | undefined {
  if (buf.length < 12 || buf.toString("latin1", 0, 4) !== "DIRC") return undefined;
  const version = buf.readUInt32BE(4);
  const count = buf.readUInt32BE(8);
  if (version < 2 || version > 4) return undefined;
  const paths: string[] = [];
  let at = 12;
  let previous = "";
  for (let i = 0; i < count; i++) {
    const start = at;
    if (at + 62 > buf.length) return undefined;
    const flags = buf.readUInt16BE(at + 60);
    at += 62;
    if (flags & 0x4000) at += 2; // extended flags (v3+)
    let name: string;
    if (version === 4) {
      const [drop, next] = readVarint(buf, at);
      const end = buf.indexOf(0, next);
      if (end < 0 || drop > previous.length) return undefined;
      name = previous.slice(0, previous.length - drop) + buf.toString("utf8", next, end);
      at = end + 1;
    } else {
      const end = buf.indexOf(0, at);
      if (end < 0) return undefined;
      name = buf.toString("utf8", at, end);
      // Entries are padded with 1 to 8 NULs to a multiple of 8 bytes.
      at = start + Math.ceil((end - start + 1) / 8) * 8;
    }
    paths.push(name);
    previous = name;
  }
  return paths;
}

/** Whether git tracks anything under `.mini-cursor/`. */
function trackedByGit(workspace: string): boolean {
  let index: string | undefined | null;
  try {
    index = gitIndexOf(workspace);
  } catch {
    return true;
  }
  if (index === undefined) return false;
  if (index === null) return true;
  try {
    const paths = indexPaths(readRegularFileSync(index, { follow: true, maxBytes: MAX_STATE_FILE_BYTES }));
    return !paths || paths.some((p) => p.startsWith(`${LEGACY_DIR}/`));
  } catch (err) {
    // No index yet (a fresh `git init`): nothing is tracked.
    return (err as NodeJS.ErrnoException).code !== "ENOENT";
  }
}

/** Why the old folder is not ours to copy, or undefined when it is. */
export function legacyRefusal(workspace: string, legacy: string): string | undefined {
  const st = lstatSync(legacy);
  if (!st.isDirectory()) return "it is not a plain folder";
  const uid = process.getuid?.();
  if (uid !== undefined && st.uid !== uid) return "it belongs to another user";
  let ours = false;
  try {
    ours = readRegularTextSync(path.join(legacy, ".gitignore")) === OUR_GITIGNORE;
  } catch {
    // None, or not a regular file (a symlink, a folder): not ours.
  }
  if (!ours) return "mini-cursor did not make it (it has no .gitignore of `*`)";
  if (trackedByGit(workspace)) return "git tracks files in it, so it came with the repository";
  return undefined;
}

/** Copies one regular file without following a symlink; the opened file must lie inside `root`. */
function copyFile(source: string, target: string, root: string): boolean {
  let fd: number;
  try {
    fd = openSync(source, NOFOLLOW_READ);
  } catch {
    return false;
  }
  try {
    if (!fstatSync(fd).isFile()) return false;
    try {
      const real = readlinkSync(`/proc/self/fd/${fd}`);
      if (!real.startsWith(`${root}/`)) return false;
    } catch {
      // no /proc: the checks by name remain
    }
    const out = openSync(
      target,
      constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
      0o600,
    );
    try {
      const buffer = Buffer.alloc(COPY_CHUNK);
      for (;;) {
        const n = readSync(fd, buffer, 0, COPY_CHUNK, null);
        if (n === 0) break;
        writeSync(out, buffer, 0, n);
      }
    } finally {
      closeSync(out);
    }
    return true;
  } finally {
    closeSync(fd);
  }
}

/** Copies files and folders under `source` to `target` (created), skipping links and special files. */
function copyTree(source: string, target: string, root: string): number {
  const st = lstatOrUndefined(source);
  if (!st || st.isSymbolicLink()) return 0;
  if (st.isFile()) return !existsSync(target) && copyFile(source, target, root) ? 1 : 0;
  if (!st.isDirectory()) return 0;
  mkdirSync(target, { recursive: true, mode: 0o700 });
  let copied = 0;
  for (const name of readdirSync(source)) copied += copyTree(path.join(source, name), path.join(target, name), root);
  return copied;
}

/**
 * Copies an evidently-ours `<workspace>/.mini-cursor/` into `stateDir` once; returns the line to
 * show (moved, or not read and why), or undefined when there was nothing to say.
 */
export function migrateLegacyState(workspace: string, stateDir: string): string | undefined {
  const marker = path.join(stateDir, MIGRATED_FILE);
  if (existsSync(marker)) return undefined;
  const legacy = path.join(workspace, LEGACY_DIR);
  const st = lstatOrUndefined(legacy);
  if (!st?.isDirectory() || !STATE_ITEMS.some((item) => lstatOrUndefined(path.join(legacy, item)))) return undefined;
  let refusal: string | undefined;
  try {
    refusal = legacyRefusal(workspace, legacy);
  } catch (err) {
    refusal = (err as Error).message;
  }
  let line: string;
  if (refusal) {
    line = `${legacy}/ is not read as mini-cursor's state (${refusal}); this workspace's state is kept in ${stateDir}.`;
  } else {
    let copied = 0;
    for (const item of DATA_ITEMS) copied += copyTree(path.join(legacy, item), path.join(stateDir, item), legacy);
    for (const item of SNAPSHOT_ITEMS)
      copied += copyTree(path.join(legacy, SNAPSHOTS, item), path.join(stateDir, SNAPSHOTS, item), legacy);
    line = `Moved this workspace's threads and snapshots (${copied} files) from ${legacy}/ to ${stateDir}; the old copies are no longer read and may be deleted.`;
  }
  try {
    writeFileSync(marker, `${line}\n`, { mode: 0o600 });
  } catch {
    // Said again next time rather than lost.
  }
  return line;
}
