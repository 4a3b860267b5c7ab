import path from "node:path";
import ignore, { type Ignore } from "ignore";
import { readRegularTextSync } from "../regular-file.js";
import { ALWAYS_HIDDEN, GITIGNORE_FILE, MAX_GITIGNORE_BYTES } from "./ignore.js";

/**
 * What git ignores, as the walks of find_files, search_files (workspace/fast-walk.ts) and the
 * snapshot watcher ask it: .gitignore files at every level, the deepest one deciding, `!`
 * re-including, and `.git` always; plus the glob helpers find_files and the tools' declared
 * paths share.
 */

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
      // Only a regular file (a symlinked .gitignore could pull rules from outside), never waited on.
      rules = ignore().add(readRegularTextSync(file, { maxBytes: MAX_GITIGNORE_BYTES }));
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

/** A glob without "/" matches file names at any depth ("*.ts" = "**\/*.ts"), as in .gitignore and ripgrep. */
export function anyDepth(pattern: string): string {
  return pattern.includes("/") ? pattern.replace(/^\.\//, "") : `**/${pattern}`;
}

/** The folder a glob searches: its segments before the first one with a wildcard ("src" for "src/*.ts", "." for "*.md"). */
export function globBase(pattern: string): string {
  const parts = pattern.split("/");
  const first = parts.findIndex((p) => /[*?[{]/.test(p));
  const base = (first === -1 ? parts.slice(0, -1) : parts.slice(0, first)).join("/");
  return base === "" ? "." : base;
}
