import { promises as fs } from "node:fs";
import path from "node:path";

/**
 * Workspace confinement. Every path a tool touches goes through `resolvePath`, so the
 * rules (no `..` escapes, no symlink or hard-link escapes, no `~`) live in one place.
 */

/** Longest path we accept; Linux's PATH_MAX. */
export const MAX_PATH_LENGTH = 4096;
/** Longest single path component; Linux's NAME_MAX. */
export const MAX_NAME_LENGTH = 255;
/** Symlink hops we follow by hand before giving up (the kernel's own limit is 40). */
const MAX_SYMLINK_HOPS = 40;

export type PathErrorCode = "outside" | "invalid" | "not_found" | "not_directory" | "hard_link";

/** A refusal the model can read and act on; tools turn it into their result text. */
export class PathError extends Error {
  constructor(
    readonly code: PathErrorCode,
    message: string,
  ) {
    super(message);
    this.name = "PathError";
  }
}

export interface Workspace {
  /** The workspace root with every symlink resolved. */
  readonly root: string;
}

/**
 * The path each workspace was opened with, when it differs from its real root (it went through
 * a symlink). Absolute paths spelled with that prefix are mapped onto the real root.
 */
const aliases = new WeakMap<Workspace, string>();

/** Resolves the root once (it may itself sit behind a symlink, e.g. /tmp on macOS). */
export async function openWorkspace(dir: string): Promise<Workspace> {
  const abs = path.resolve(dir);
  let root: string;
  try {
    root = await fs.realpath(abs);
  } catch {
    throw new Error(`Workspace ${abs} does not exist. Create it or pass another --workspace.`);
  }
  const stat = await fs.stat(root);
  if (!stat.isDirectory()) throw new Error(`Workspace ${abs} is not a directory.`);
  const ws: Workspace = { root };
  if (abs !== root) aliases.set(ws, abs);
  return ws;
}

/** True when `candidate` is `root` or below it (both absolute and normalised). */
export function isInside(root: string, candidate: string): boolean {
  const rel = path.relative(root, candidate);
  // Compare whole components: a child named "..foo" is inside, "../foo" is not.
  return rel === "" || (rel !== ".." && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

/** The path as the model should see it: relative to the root, "." for the root itself. */
export function displayPath(ws: Workspace, absolute: string): string {
  const rel = path.relative(ws.root, absolute);
  return rel === "" ? "." : rel;
}

/** The refusals more than one check gives, each in one wording. */
export const notFound = (userPath: string) =>
  new PathError("not_found", `"${userPath}" does not exist. List the parent directory to see what is there.`);
export const throughFile = (userPath: string) =>
  new PathError("not_directory", `"${userPath}" goes through a file as if it were a directory.`);
export const hardLinked = (userPath: string, links: number) =>
  new PathError(
    "hard_link",
    `Refused: "${userPath}" has ${links} hard links, so it may be the same file as one outside the workspace; mini-cursor does not touch such files.`,
  );
const symlinkLoop = () => new PathError("invalid", "Refused: too many levels of symbolic links.");

function outside(userPath: string): PathError {
  return new PathError(
    "outside",
    `Refused: "${userPath}" is outside the workspace. Use a path inside the workspace (relative paths are resolved against its root).`,
  );
}

function validate(userPath: string): void {
  if (typeof userPath !== "string" || userPath.trim() === "") {
    throw new PathError("invalid", "Refused: the path is empty. Pass a file or directory path inside the workspace.");
  }
  if (userPath.includes("\0")) {
    throw new PathError("invalid", "Refused: the path contains a NUL byte.");
  }
  if (userPath.length > MAX_PATH_LENGTH) {
    throw new PathError("invalid", `Refused: the path is longer than ${MAX_PATH_LENGTH} characters.`);
  }
  if (userPath.split(/[\\/]/).some((part) => Buffer.byteLength(part) > MAX_NAME_LENGTH)) {
    throw new PathError("invalid", `Refused: a path component is longer than ${MAX_NAME_LENGTH} bytes.`);
  }
  // `~` is expanded by shells, not by us; refusing beats silently creating a folder named "~".
  if (userPath === "~" || userPath.startsWith("~/") || /^~[^/]*(\/|$)/.test(userPath)) {
    throw outside(userPath);
  }
}

/**
 * Resolves symlinks in `abs` even when its tail does not exist yet, following dangling links
 * by hand so a link in a parent of a file to be created cannot point the write outside.
 */
async function realResolve(abs: string, hops: number): Promise<string> {
  if (hops > MAX_SYMLINK_HOPS) throw symlinkLoop();
  try {
    return await fs.realpath(abs);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ELOOP") throw symlinkLoop();
    if (code === "ENAMETOOLONG") throw new PathError("invalid", "Refused: the resolved path is too long.");
    if (code !== "ENOENT" && code !== "ENOTDIR") throw err;
  }
  const parent = path.dirname(abs);
  if (parent === abs) return abs;
  const realParent = await realResolve(parent, hops);
  const candidate = path.join(realParent, path.basename(abs));
  const lst = await fs.lstat(candidate).catch(() => undefined);
  if (!lst) return candidate; // does not exist: nothing further to follow
  if (lst.isSymbolicLink()) {
    const target = await fs.readlink(candidate);
    return realResolve(path.resolve(realParent, target), hops + 1);
  }
  return candidate;
}

export interface ResolveOptions {
  /** Fail with a clear message when the path does not exist. */
  mustExist?: boolean;
  /** Require a directory (e.g. list_directory, workingDirectory). */
  directory?: boolean;
  /** Refuse regular files with more than one hard link (their other name may be outside). */
  refuseHardLinks?: boolean;
}

export interface ResolvedPath {
  /** Absolute path with every symlink resolved; inside the workspace. */
  readonly absolute: string;
  /** The path relative to the root, for messages to the model. */
  readonly display: string;
  /** Whether anything exists there now. */
  readonly exists: boolean;
  readonly isDirectory: boolean;
}

/**
 * Maps a path from the model to a real absolute path inside the workspace, or throws a
 * PathError whose message is written for the model.
 */
export async function resolvePath(
  ws: Workspace,
  userPath: string,
  options: ResolveOptions = {},
): Promise<ResolvedPath> {
  validate(userPath);
  let lexical = path.resolve(ws.root, userPath);
  const alias = aliases.get(ws);
  if (alias && !isInside(ws.root, lexical) && isInside(alias, lexical)) {
    lexical = path.join(ws.root, path.relative(alias, lexical));
  }
  const confine = (p: string) => {
    if (!isInside(ws.root, p)) throw outside(userPath);
    if (Buffer.byteLength(p) >= MAX_PATH_LENGTH) {
      throw new PathError("invalid", `Refused: the full path would be longer than ${MAX_PATH_LENGTH} bytes.`);
    }
    return p;
  };
  const real = confine(await realResolve(confine(lexical), 0));

  let stat;
  try {
    stat = await fs.stat(real);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOTDIR") throw throughFile(userPath);
    stat = undefined;
  }
  const display = displayPath(ws, real);
  if (!stat) {
    if (options.mustExist || options.directory) throw notFound(userPath);
    return { absolute: real, display, exists: false, isDirectory: false };
  }
  if (options.directory && !stat.isDirectory()) {
    throw new PathError("not_directory", `"${userPath}" is a file, not a directory.`);
  }
  if (options.refuseHardLinks && stat.isFile() && stat.nlink > 1) throw hardLinked(userPath, stat.nlink);
  return { absolute: real, display, exists: true, isDirectory: stat.isDirectory() };
}
