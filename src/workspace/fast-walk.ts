import { closeSync, type Dirent, openSync, readdirSync } from "node:fs";
import path from "node:path";
import picomatch from "picomatch";
import { ALWAYS_HIDDEN, ignoredBy, type Level, readLevel } from "./ignore.js";
import type { Workspace } from "./paths.js";
import { canVerifyDescriptors, descriptorPath, DIR_FLAGS, verifyDescriptor } from "./verified-open.js";

/**
 * The walk behind find_files and search_files (issue 30): as close to ripgrep's as Node allows.
 * Synchronous system calls in short slices (the event loop gets a turn every few milliseconds),
 * .gitignore rules read once per folder through the folder's own descriptor, and nothing per
 * file beyond what confinement needs: every folder is opened, then verified to lie inside the
 * workspace (/proc/self/fd), and its entries are reached through that descriptor, so a folder
 * swapped for a symlink meanwhile leads nowhere outside. Symlinks are never followed.
 */

/** How long the walk runs before letting the event loop turn (abort signals, output, timers). */
const SLICE_MS = 8;

export interface WalkedFile {
  /** "/"-separated path relative to the workspace root. */
  rel: string;
  /** Where to open it: through its verified folder's descriptor (like openat), never from "/". */
  io: string;
}

export interface TreeWalkOptions {
  /** Hide what .gitignore ignores (default true); `.git` is hidden either way. */
  respectGitignore?: boolean;
  signal?: AbortSignal;
  /** Only files whose path relative to the walk's base matches this glob (dot files included). */
  glob?: string;
  /** Each file, folder by folder in name order; a returned promise is awaited before going on. */
  onFile(file: WalkedFile): void | Promise<void>;
  /** Checked after each file: true ends the walk. */
  done?(): boolean;
}

const toPosix = (p: string) => p.split(path.sep).join("/");

/** Opens a folder by name and verifies where it really is; undefined when it is gone or outside. */
function openFolder(ws: Workspace, absolute: string): { fd: number; io: string } | undefined {
  let fd: number;
  try {
    fd = openSync(absolute, DIR_FLAGS);
  } catch {
    return undefined;
  }
  try {
    // Where it really is must be where it was named: a symlink on the way is not followed.
    const real = verifyDescriptor(ws, fd, absolute);
    if (real !== "" && real !== absolute) throw new Error("moved");
  } catch {
    closeSync(fd);
    return undefined;
  }
  return { fd, io: canVerifyDescriptors() ? descriptorPath(fd) : absolute };
}

/** The .gitignore levels that apply at `relBase`: the root's and every folder's down to it. */
function levelsDownTo(ws: Workspace, relBase: string): Level[] {
  const parts = relBase === "" ? [] : relBase.split("/");
  const levels: Level[] = [];
  for (let i = 0; i < parts.length; i++) {
    const dir = parts.slice(0, i).join("/");
    const folder = openFolder(ws, path.join(ws.root, dir));
    if (!folder) continue;
    const level = readLevel(folder.io, dir);
    closeSync(folder.fd);
    if (level) levels.push(level);
  }
  return levels;
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Walks the files under `baseAbs` (a folder inside the workspace), calling `onFile` for each. */
export async function walkTree(ws: Workspace, baseAbs: string, options: TreeWalkOptions): Promise<void> {
  const respect = options.respectGitignore ?? true;
  const relBase = toPosix(path.relative(ws.root, baseAbs));
  const matches = options.glob ? picomatch(options.glob, { dot: true }) : undefined;
  const prefix = relBase === "" ? 0 : relBase.length + 1;
  const stack: Array<{ rel: string; levels: Level[] }> = [
    { rel: relBase, levels: respect ? levelsDownTo(ws, relBase) : [] },
  ];
  let sliceStart = performance.now();
  while (stack.length > 0) {
    const { rel, levels: above } = stack.pop()!;
    const folder = openFolder(ws, path.join(ws.root, rel));
    if (!folder) continue;
    try {
      let entries: Dirent[];
      try {
        entries = readdirSync(folder.io, { withFileTypes: true });
      } catch {
        continue;
      }
      const own = respect ? readLevel(folder.io, rel) : undefined;
      const levels = own ? [...above, own] : above;
      entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      const dirs: string[] = [];
      for (const entry of entries) {
        // Symlinks are never listed or followed: one could lead out of the workspace.
        if (entry.isSymbolicLink() || ALWAYS_HIDDEN.has(entry.name)) continue;
        const isDir = entry.isDirectory();
        if (!isDir && !entry.isFile()) continue;
        if (respect && ignoredBy(levels, rel, entry.name, isDir)) continue;
        const childRel = rel === "" ? entry.name : `${rel}/${entry.name}`;
        if (isDir) {
          dirs.push(childRel);
          continue;
        }
        if (matches && !matches(childRel.slice(prefix))) continue;
        const pending = options.onFile({ rel: childRel, io: `${folder.io}/${entry.name}` });
        if (pending) await pending;
        if (options.done?.()) return;
        if (performance.now() - sliceStart > SLICE_MS) {
          await turn();
          if (options.signal?.aborted) throw options.signal.reason ?? new Error("aborted");
          sliceStart = performance.now();
        }
      }
      for (let i = dirs.length - 1; i >= 0; i--) stack.push({ rel: dirs[i]!, levels });
    } finally {
      closeSync(folder.fd);
    }
  }
}
