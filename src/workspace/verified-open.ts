import { constants, existsSync, readlinkSync, promises as fs, type Stats } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import path from "node:path";
import { writeFileAtomic, type AtomicWriteResult } from "./files.js";
import { hardLinked, isInside, notFound, PathError, throughFile, type Workspace } from "./paths.js";

/**
 * Race-free access for the file tools. `resolvePath` checks a path by name, but a process in
 * the workspace can swap a folder for a symlink between that check and the open. So the tools
 * open first and then verify what they opened: the kernel's name for the descriptor
 * (/proc/self/fd/N) must lie inside the workspace. Later steps go through the descriptor —
 * `/proc/self/fd/N/name` is resolved from the opened directory itself, like openat(2) — so a
 * swap after the check changes nothing. Without /proc (not Linux) the name-based checks remain.
 */

const FD_DIR = "/proc/self/fd";
const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
export const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

let procAvailable: boolean | undefined;
/** Whether descriptors can be verified here (Linux with /proc mounted). */
export function canVerifyDescriptors(): boolean {
  return (procAvailable ??= existsSync(FD_DIR));
}

/** The path that reaches an open descriptor (or an entry of an open directory) without a name lookup from `/`. */
export function descriptorPath(fd: number, name?: string): string {
  return name === undefined ? `${FD_DIR}/${fd}` : `${FD_DIR}/${fd}/${name}`;
}

export function raced(userPath: string): PathError {
  return new PathError(
    "outside",
    `Refused: "${userPath}" changed while it was being opened (a folder or symlink on the way was swapped), so it may lead outside the workspace. If nothing is tampering with the workspace, try again.`,
  );
}

/** Where the kernel says an open descriptor is; refuses when that is outside the workspace. */
export function verifyDescriptor(ws: Workspace, fd: number, userPath: string): string {
  if (!canVerifyDescriptors()) return "";
  let real: string;
  try {
    real = readlinkSync(descriptorPath(fd));
  } catch {
    throw raced(userPath);
  }
  if (!path.isAbsolute(real) || !isInside(ws.root, real.replace(/ \(deleted\)$/, ""))) throw raced(userPath);
  return real;
}

export interface VerifiedFile {
  handle: FileHandle;
  stat: Stats;
  /** Reopens the same file (not the same name): for helpers that take a path. */
  path: string;
}

/**
 * Opens `absolute` (a path from resolvePath) without following a symlink at its end, then
 * verifies the descriptor. Directories open too (check `stat`). The caller closes `handle`.
 */
export async function openVerified(
  ws: Workspace,
  absolute: string,
  userPath: string,
  options: { refuseHardLinks?: boolean } = {},
): Promise<VerifiedFile> {
  let handle: FileHandle;
  try {
    handle = await fs.open(absolute, READ_FLAGS);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ELOOP") throw raced(userPath);
    if (code === "ENOENT") throw notFound(userPath);
    throw err;
  }
  try {
    verifyDescriptor(ws, handle.fd, userPath);
    const stat = await handle.stat();
    if (options.refuseHardLinks && stat.isFile() && stat.nlink > 1) throw hardLinked(userPath, stat.nlink);
    return { handle, stat, path: canVerifyDescriptors() ? descriptorPath(handle.fd) : absolute };
  } catch (err) {
    await handle.close();
    throw err;
  }
}

/**
 * Opens the directory `absoluteDir` (inside the workspace, symlinks already resolved) one
 * component at a time from the workspace root, refusing any symlink on the way and creating
 * missing folders when `create` is set. The result is a directory descriptor inside the
 * workspace whatever is renamed meanwhile; the caller closes it.
 */
export async function openDirectoryVerified(
  ws: Workspace,
  absoluteDir: string,
  userPath: string,
  options: { create?: boolean } = {},
): Promise<FileHandle> {
  if (!isInside(ws.root, absoluteDir)) throw raced(userPath);
  let current = await fs.open(ws.root, DIR_FLAGS);
  try {
    verifyDescriptor(ws, current.fd, userPath);
    const rel = path.relative(ws.root, absoluteDir);
    for (const part of rel === "" ? [] : rel.split(path.sep)) {
      const next = await openChild(current, part, userPath, options.create ?? false);
      await current.close();
      current = next;
    }
    verifyDescriptor(ws, current.fd, userPath);
    return current;
  } catch (err) {
    await current.close().catch(() => undefined);
    throw err;
  }
}

async function openChild(dir: FileHandle, name: string, userPath: string, create: boolean): Promise<FileHandle> {
  const at = canVerifyDescriptors() ? descriptorPath(dir.fd, name) : undefined;
  if (!at) throw new Error("descriptor-relative opens need /proc");
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      return await fs.open(at, DIR_FLAGS);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "ENOENT" && create && attempt === 0) {
        await fs.mkdir(at).catch((e: NodeJS.ErrnoException) => {
          if (e.code !== "EEXIST") throw e;
        });
        continue;
      }
      if (code === "ELOOP") throw raced(userPath);
      if (code === "ENOTDIR") {
        const st = await fs.lstat(at).catch(() => undefined);
        if (st?.isSymbolicLink()) throw raced(userPath);
        throw throughFile(userPath);
      }
      if (code === "ENOENT") throw notFound(userPath);
      throw err;
    }
  }
  throw raced(userPath);
}

/**
 * Writes a file atomically at `absolute` (from resolvePath): the folder is opened and verified
 * first (missing ones created inside it), and the temp file and the rename go through that
 * folder's descriptor, so neither can land outside the workspace.
 */
export async function writeInWorkspace(
  ws: Workspace,
  absolute: string,
  userPath: string,
  data: string | Uint8Array,
): Promise<AtomicWriteResult> {
  if (!canVerifyDescriptors()) {
    await fs.mkdir(path.dirname(absolute), { recursive: true });
    return writeFileAtomic(absolute, data);
  }
  const dir = await openDirectoryVerified(ws, path.dirname(absolute), userPath, { create: true });
  try {
    const result = await writeFileAtomic(descriptorPath(dir.fd, path.basename(absolute)), data);
    verifyDescriptor(ws, dir.fd, userPath);
    return result;
  } finally {
    await dir.close();
  }
}

/**
 * Deletes the file at `absolute` (from resolvePath) through its verified folder's descriptor, as
 * unlinkat(2) would: Node has none, so `/proc/self/fd/<dir>/<name>` names the entry from the
 * opened folder itself. A folder on the way swapped for a symlink after the file was checked
 * cannot lead the delete outside the workspace. Only a regular file (or a symlink, which is
 * removed, never followed) is deleted.
 */
export async function unlinkInWorkspace(ws: Workspace, absolute: string, userPath: string): Promise<void> {
  if (!canVerifyDescriptors()) {
    await fs.unlink(absolute);
    return;
  }
  const dir = await openDirectoryVerified(ws, path.dirname(absolute), userPath);
  try {
    const entry = descriptorPath(dir.fd, path.basename(absolute));
    const stat = await fs.lstat(entry);
    if (stat.isDirectory()) throw new PathError("invalid", `"${userPath}" is a directory; only files are deleted.`);
    await fs.unlink(entry);
    verifyDescriptor(ws, dir.fd, userPath);
  } finally {
    await dir.close();
  }
}
