import fs, { type Dirent } from "node:fs";
import path from "node:path";
import ignore, { type Ignore } from "ignore";
import { glob } from "tinyglobby";
import { ALWAYS_HIDDEN, GITIGNORE_FILE } from "./ignore.js";
import { openDirectorySync } from "./verified-open.js";

/**
 * Walking the workspace for find_files and search_files: tinyglobby does the globbing, and an
 * fs adapter in front of it hides what git ignores (.gitignore files at every level, the
 * deepest one deciding, `!` re-including) and `.git`, so ignored folders such as node_modules
 * are never even read.
 */

/** A .gitignore larger than this is not a real one and is not read. */
const MAX_GITIGNORE_BYTES = 1024 * 1024;

interface Level {
  /** Directory of this .gitignore relative to the root, "/"-separated ("" for the root). */
  dir: string;
  rules: Ignore;
}

const toPosix = (p: string) => p.split(path.sep).join("/");

/** Decides, with caching, whether git ignores an entry of a directory it walks into. */
export function createIgnoreChecker(root: string) {
  const rulesByDir = new Map<string, Ignore | null>();

  function rulesOf(relDir: string): Ignore | null {
    if (rulesByDir.has(relDir)) return rulesByDir.get(relDir)!;
    let rules: Ignore | null = null;
    try {
      const file = path.join(root, relDir, GITIGNORE_FILE);
      const stat = fs.lstatSync(file);
      // Only a regular file: a symlinked .gitignore could pull rules from outside.
      if (stat.isFile() && stat.size <= MAX_GITIGNORE_BYTES) rules = ignore().add(fs.readFileSync(file, "utf8"));
    } catch {
      rules = null;
    }
    rulesByDir.set(relDir, rules);
    return rules;
  }

  function levelsFor(relDir: string): Level[] {
    const parts = relDir === "" ? [] : relDir.split("/");
    const dirs = [""].concat(parts.map((_, i) => parts.slice(0, i + 1).join("/")));
    const levels: Level[] = [];
    for (const dir of dirs) {
      const rules = rulesOf(dir);
      if (rules) levels.push({ dir, rules });
    }
    return levels;
  }

  return {
    /** Whether `name` in `relDir` (relative to the root, "" for the root) is ignored; its parents are not. */
    ignored(relDir: string, name: string, isDirectory: boolean): boolean {
      if (ALWAYS_HIDDEN.has(name)) return true;
      const relPath = relDir === "" ? name : `${relDir}/${name}`;
      const levels = levelsFor(relDir);
      for (let i = levels.length - 1; i >= 0; i--) {
        const level = levels[i]!;
        const local = level.dir === "" ? relPath : relPath.slice(level.dir.length + 1);
        const verdict = level.rules.test(isDirectory ? `${local}/` : local);
        if (verdict.ignored) return true;
        if (verdict.unignored) return false;
      }
      return false;
    },
    /** Whether a path (file or directory) or any folder above it is ignored. */
    pathIgnored(relPath: string, isDirectory: boolean): boolean {
      const parts = toPosix(relPath)
        .split("/")
        .filter((p) => p !== "" && p !== ".");
      for (let i = 0; i < parts.length; i++) {
        if (this.ignored(parts.slice(0, i).join("/"), parts[i]!, i < parts.length - 1 || isDirectory)) return true;
      }
      return false;
    },
  };
}

export interface WalkOptions {
  /** Hide what .gitignore ignores (default true); `.git` is hidden either way. */
  respectGitignore?: boolean;
  signal?: AbortSignal;
}

type ReaddirCallback = (err: NodeJS.ErrnoException | null, entries: Dirent[]) => void;

/**
 * Files under `baseAbs` (a directory inside `root`) matching the glob patterns, as paths
 * relative to `root` with "/" separators. Patterns are relative to `baseAbs`.
 */
export async function globFiles(
  root: string,
  baseAbs: string,
  patterns: string[],
  options: WalkOptions = {},
): Promise<string[]> {
  const checker = createIgnoreChecker(root);
  const respect = options.respectGitignore ?? true;
  const keep = (dirAbs: string, entry: Dirent) => {
    // Symlinks are never listed or followed: one could lead out of the workspace.
    if (entry.isSymbolicLink()) return false;
    if (!respect) return !ALWAYS_HIDDEN.has(entry.name);
    return !checker.ignored(toPosix(path.relative(root, dirAbs)), entry.name, entry.isDirectory());
  };
  // Each folder is opened, verified to be inside the workspace, then read through its
  // descriptor: a folder swapped for a symlink (or a symlink named in the pattern) lists nothing.
  const ws = { root };
  const adapter = {
    readdir(dir: string, _opts: unknown, callback: ReaddirCallback) {
      let opened: ReturnType<typeof openDirectorySync>;
      try {
        opened = openDirectorySync(ws, dir);
      } catch (err) {
        return callback(err as NodeJS.ErrnoException, []);
      }
      fs.readdir(opened.path, { withFileTypes: true }, (err, entries) => {
        opened.close();
        if (err) return callback(err, []);
        const abs = path.resolve(dir);
        callback(
          null,
          entries.filter((e) => keep(abs, e)),
        );
      });
    },
    readdirSync(dir: string) {
      const abs = path.resolve(dir);
      const opened = openDirectorySync(ws, dir);
      try {
        return fs.readdirSync(opened.path, { withFileTypes: true }).filter((e) => keep(abs, e));
      } finally {
        opened.close();
      }
    },
  };
  const found = await glob(patterns, {
    cwd: baseAbs,
    dot: true,
    onlyFiles: true,
    followSymbolicLinks: false,
    expandDirectories: false,
    absolute: true,
    signal: options.signal,
    fs: adapter as never,
  });
  return found.map((abs) => toPosix(path.relative(root, abs)));
}

/** A glob without "/" matches file names at any depth ("*.ts" = "**\/*.ts"), as in .gitignore and ripgrep. */
export function anyDepth(pattern: string): string {
  return pattern.includes("/") ? pattern.replace(/^\.\//, "") : `**/${pattern}`;
}
