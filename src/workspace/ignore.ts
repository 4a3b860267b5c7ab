import path from "node:path";
import ignore, { type Ignore } from "ignore";
import { readRegularTextSync } from "../regular-file.js";

/**
 * .gitignore matching, as the walks of find_files and search_files (fast-walk.ts), list_directory
 * and the snapshot watcher ask it. Git reads the root .gitignore and one in every directory on
 * the way down; each file's patterns are relative to its own directory, a deeper file overrides a
 * shallower one, and `!` re-includes. `.git` is always hidden: it is never the model's business.
 */

export const GITIGNORE_FILE = ".gitignore";
/** Names hidden whatever .gitignore says. */
export const ALWAYS_HIDDEN: ReadonlySet<string> = new Set([".git"]);
/** A .gitignore larger than this is not read: it is not a real one, and reading it costs. */
export const MAX_GITIGNORE_BYTES = 1024 * 1024;

/** One .gitignore's rules. */
export interface Level {
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

/** The rules of one .gitignore as the ignore package reads them. */
function packageLevel(dir: string, text: string): Level {
  const rules: Ignore = ignore().add(text);
  return {
    dir,
    test(local, _name, isDirectory) {
      const verdict = rules.test(isDirectory ? `${local}/` : local);
      return verdict.ignored ? "ignored" : verdict.unignored ? "unignored" : undefined;
    },
  };
}

/** The rules of one .gitignore, tested by name alone when every rule allows it (nameRules). */
export function levelFrom(dir: string, text: string): Level {
  const byName = nameRules(text);
  if (!byName) return packageLevel(dir, text);
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

/** The .gitignore in the folder `io` leads to (`dir` relative to the root); undefined when it has none. */
export function readLevel(io: string, dir: string, make = levelFrom): Level | undefined {
  try {
    // Not following a symlinked .gitignore (it could pull rules from outside), never waiting on a FIFO.
    return make(dir, readRegularTextSync(`${io}/${GITIGNORE_FILE}`, { maxBytes: MAX_GITIGNORE_BYTES }));
  } catch {
    return undefined;
  }
}

/**
 * Whether git ignores `name` in `relDir`, given the levels that apply there (root first) and
 * that none of its parent directories is ignored: the deepest .gitignore with a matching rule
 * decides, and a `!pattern` there un-ignores.
 */
export function ignoredBy(levels: readonly Level[], relDir: string, name: string, isDirectory: boolean): boolean {
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

/** Decides, with caching, whether git ignores an entry of a directory it walks into. */
export function createIgnoreChecker(root: string) {
  const levelsByDir = new Map<string, Level | undefined>();
  const levelAt = (dir: string) => {
    if (!levelsByDir.has(dir)) levelsByDir.set(dir, readLevel(path.join(root, dir), dir, packageLevel));
    return levelsByDir.get(dir);
  };
  /** Whether `name` in `relDir` (relative to the root, "" for the root) is ignored; its parents are not. */
  const ignored = (relDir: string, name: string, isDirectory: boolean): boolean => {
    if (ALWAYS_HIDDEN.has(name)) return true;
    const parts = relDir === "" ? [] : relDir.split("/");
    const dirs = [""].concat(parts.map((_, i) => parts.slice(0, i + 1).join("/")));
    return ignoredBy(
      dirs.flatMap((dir) => levelAt(dir) ?? []),
      relDir,
      name,
      isDirectory,
    );
  };
  return {
    ignored,
    /** Whether a path (file or directory) or any folder above it is ignored. */
    pathIgnored(relPath: string, isDirectory: boolean): boolean {
      const parts = relPath
        .split(path.sep)
        .join("/")
        .split("/")
        .filter((p) => p !== "" && p !== ".");
      // Git cannot re-include a file inside an ignored directory, so every ancestor is checked first.
      for (let i = 0; i < parts.length; i++) {
        if (ignored(parts.slice(0, i).join("/"), parts[i]!, i < parts.length - 1 || isDirectory)) return true;
      }
      return false;
    },
  };
}
