import { closeSync, type Dirent, openSync, readdirSync } from "node:fs";
import path from "node:path";
import ignore, { type Ignore } from "ignore";
import picomatch from "picomatch";
import { readRegularTextSync } from "../regular-file.js";
import { ALWAYS_HIDDEN, GITIGNORE_FILE, MAX_GITIGNORE_BYTES } from "./ignore.js";
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

interface Level {
  /** Folder of this .gitignore relative to the root, "/"-separated ("" for the root). */
  dir: string;
  /** Git's verdict on a path (relative to `dir`) whose name is `name`; undefined: no rule matched. */
  test(local: string, name: string, isDirectory: boolean): "ignored" | "unignored" | undefined;
}

interface NameRule {
  re: RegExp;
  negative: boolean;
  dirOnly: boolean;
}

/**
 * A rule without a "/" inside (most are: "node_modules/", "*.log", ".env") matches a name at any
 * depth, so it is tested against the name alone with a regex compiled here; the ignore package's
 * test of a whole path costs several microseconds, which at 100,000 files is most of a walk.
 * Undefined when a rule needs the path (anchored, nested, "**"): the package decides then.
 */
function nameRules(text: string): NameRule[] | undefined {
  const rules: NameRule[] = [];
  for (const raw of text.split(/\r?\n/)) {
    let line = raw.replace(/(?<!\\)\s+$/, "");
    if (line === "" || line.startsWith("#")) continue;
    const negative = line.startsWith("!");
    if (negative) line = line.slice(1);
    const dirOnly = line.endsWith("/");
    if (dirOnly) line = line.slice(0, -1);
    if (line === "" || line.includes("/") || line.includes("**")) return undefined;
    let source = "";
    for (let i = 0; i < line.length; i++) {
      const c = line[i]!;
      if (c === "\\" && i + 1 < line.length) source += escapeRegex(line[++i]!);
      else if (c === "*") source += "[^/]*";
      else if (c === "?") source += "[^/]";
      else if (c === "[") {
        const close = line.indexOf("]", i + 2);
        if (close === -1) return undefined;
        const body = line
          .slice(i + 1, close)
          .replace(/^!/, "^")
          .replace(/\\/g, "\\\\");
        source += `[${body}]`;
        i = close;
      } else source += escapeRegex(c);
    }
    try {
      rules.push({ re: new RegExp(`^${source}$`), negative, dirOnly });
    } catch {
      return undefined;
    }
  }
  return rules;
}

const escapeRegex = (c: string) => c.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");

function levelFrom(dir: string, text: string): Level {
  const byName = nameRules(text);
  if (byName) {
    return {
      dir,
      test(_local, name, isDirectory) {
        for (let i = byName.length - 1; i >= 0; i--) {
          const rule = byName[i]!;
          if (rule.dirOnly && !isDirectory) continue;
          if (rule.re.test(name)) return rule.negative ? "unignored" : "ignored";
        }
        return undefined;
      },
    };
  }
  const rules: Ignore = ignore().add(text);
  return {
    dir,
    test(local, _name, isDirectory) {
      const verdict = rules.test(isDirectory ? `${local}/` : local);
      return verdict.ignored ? "ignored" : verdict.unignored ? "unignored" : undefined;
    },
  };
}

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

function gitignoreAt(io: string, dir: string): Level | undefined {
  try {
    // Not following a symlinked .gitignore (it could pull rules from outside), never waiting on a FIFO.
    return levelFrom(dir, readRegularTextSync(`${io}/${GITIGNORE_FILE}`, { maxBytes: MAX_GITIGNORE_BYTES }));
  } catch {
    return undefined;
  }
}

/** Whether git ignores `name` in `relDir`, given the levels that apply there (root first). */
function ignoredBy(levels: readonly Level[], relDir: string, name: string, isDirectory: boolean): boolean {
  if (levels.length === 0) return false;
  const relPath = relDir === "" ? name : `${relDir}/${name}`;
  for (let i = levels.length - 1; i >= 0; i--) {
    const level = levels[i]!;
    const local = level.dir === "" ? relPath : relPath.slice(level.dir.length + 1);
    const verdict = level.test(local, name, isDirectory);
    if (verdict === "ignored") return true;
    if (verdict === "unignored") return false;
  }
  return false;
}

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
    const level = gitignoreAt(folder.io, dir);
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
      const own = respect ? gitignoreAt(folder.io, rel) : undefined;
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
