import path from "node:path";
import ignore, { type Ignore } from "ignore";
import { readRegularFile } from "../regular-file.js";

/**
 * .gitignore matching for listings. Git reads the root .gitignore and one in every directory
 * on the way down; each file's patterns are relative to its own directory, and a deeper file
 * overrides a shallower one. `.git` is always hidden: it is never the model's business.
 */

export const GITIGNORE_FILE = ".gitignore";
/** Names hidden whatever .gitignore says. */
export const ALWAYS_HIDDEN: ReadonlySet<string> = new Set([".git"]);
/** A .gitignore larger than this is not read: it is not a real one, and reading it costs. */
export const MAX_GITIGNORE_BYTES = 1024 * 1024;

export interface IgnoreMatcher {
  /** True when git would ignore `relPath` (relative to the root, "/"-separated). */
  ignores(relPath: string, isDirectory: boolean): boolean;
}

interface IgnoreLevel {
  /** The directory holding this .gitignore, relative to the root ("" for the root). */
  dir: string;
  rules: Ignore;
}

/** Reads one .gitignore; only regular files count, so a symlinked one cannot pull rules from outside. */
async function readGitignore(absDir: string): Promise<string | undefined> {
  const file = path.join(absDir, GITIGNORE_FILE);
  try {
    // Not followed, not waited on: a link or a FIFO named .gitignore adds no rules.
    return (await readRegularFile(file, { maxBytes: MAX_GITIGNORE_BYTES })).toString("utf8");
  } catch {
    return undefined;
  }
}

/** "/"-separated relative path, whatever the platform. */
function toPosix(rel: string): string {
  return rel.split(path.sep).join("/");
}

/** The directories from the root down to `relDir`, inclusive: "", "a", "a/b". */
function chain(relDir: string): string[] {
  const parts = relDir === "" || relDir === "." ? [] : toPosix(relDir).split("/");
  return [""].concat(parts.map((_, i) => parts.slice(0, i + 1).join("/")));
}

/** Whether directory `dir` (relative, "" = root) strictly contains `relPath`. */
function contains(dir: string, relPath: string): boolean {
  return dir === "" || relPath.startsWith(`${dir}/`);
}

/**
 * Git's verdict on one path given that none of its parent directories is ignored: the deepest
 * .gitignore with a matching rule decides, and a `!pattern` there un-ignores.
 */
function decide(levels: readonly IgnoreLevel[], relPath: string, isDirectory: boolean): boolean {
  for (let i = levels.length - 1; i >= 0; i--) {
    const level = levels[i]!;
    if (!contains(level.dir, relPath)) continue;
    const local = level.dir === "" ? relPath : relPath.slice(level.dir.length + 1);
    const verdict = level.rules.test(isDirectory ? `${local}/` : local);
    if (verdict.ignored) return true;
    if (verdict.unignored) return false;
  }
  return false;
}

/** Builds a matcher from already-parsed levels (root first). */
function matcherFromLevels(levels: readonly IgnoreLevel[]): IgnoreMatcher {
  return {
    ignores(relPath, isDirectory) {
      const parts = toPosix(relPath)
        .split("/")
        .filter((p) => p !== "" && p !== ".");
      if (parts.some((p) => ALWAYS_HIDDEN.has(p))) return true;
      // Git cannot re-include a file inside an ignored directory, so check every ancestor first.
      for (let i = 1; i <= parts.length; i++) {
        const prefix = parts.slice(0, i).join("/");
        if (decide(levels, prefix, i < parts.length || isDirectory)) return true;
      }
      return false;
    },
  };
}

/**
 * Loads the .gitignore files that apply inside `relDir` (relative to `root`): the root's and
 * those of every directory down to and including `relDir`.
 */
export async function loadIgnoreMatcher(root: string, relDir: string): Promise<IgnoreMatcher> {
  const levels: IgnoreLevel[] = [];
  for (const dir of chain(relDir)) {
    const text = await readGitignore(path.join(root, dir));
    if (text !== undefined) levels.push({ dir, rules: ignore().add(text) });
  }
  return matcherFromLevels(levels);
}
