import { createHash } from "node:crypto";
import { closeSync, constants as fsConstants, fstatSync, lstatSync, openSync, readFileSync } from "node:fs";
import path from "node:path";
import { GITIGNORE_FILE } from "./ignore.js";

/**
 * What `git check-ignore` said of a path, kept while every rule file that could decide it holds
 * what it held: the `.gitignore` of each folder on the path's way down (there or not) and the
 * store's `info/exclude` (the store's git reads no other: snapshots.ts). A file step's snapshot
 * before and after asked git the same question twice, one process start each (about 20 ms here).
 * Rule files are compared by their bytes, not their times: a rewrite in the same clock tick is
 * still seen, and a store made a moment ago (its exclude file just written) still gains.
 */

/** A rule file longer than this is not read for the comparison: git is asked each time. */
const MAX_KEYED_RULES_BYTES = 64 * 1024;
/** Verdicts kept at most; over that the cache starts again. */
const MAX_VERDICTS = 10_000;

/**
 * A rule file's bytes, opened without following a link and without blocking: one swapped for a
 * FIFO or a link after its lstat (a command running meanwhile) is refused, not waited on.
 */
function readRules(file: string): Buffer {
  const fd = openSync(file, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW | fsConstants.O_NONBLOCK);
  try {
    const st = fstatSync(fd);
    if (!st.isFile() || st.size > MAX_KEYED_RULES_BYTES) throw new Error(`${file} is not a small regular file`);
    return readFileSync(fd);
  } finally {
    closeSync(fd);
  }
}

export class IgnoreVerdicts {
  private readonly verdicts = new Map<string, { ignored: boolean; rules: string }>();

  constructor(
    private readonly workspace: string,
    private readonly excludeFile: string,
  ) {}

  /** What the rule files `rel` depends on hold now, and its kind; undefined when not comparable. */
  rulesOf(rel: string): string | undefined {
    const parts = rel.split("/").slice(0, -1);
    const files = [this.excludeFile, path.join(this.workspace, GITIGNORE_FILE)];
    for (let i = 1; i <= parts.length; i++) files.push(path.join(this.workspace, ...parts.slice(0, i), GITIGNORE_FILE));
    const hash = createHash("sha1");
    try {
      for (const file of files) {
        const st = lstatSync(file, { throwIfNoEntry: false });
        if (!st) hash.update("-\0");
        else if (!st.isFile()) hash.update(`${st.mode}\0`);
        else if (st.size > MAX_KEYED_RULES_BYTES) return undefined;
        else hash.update(`${st.size}\0`).update(readRules(file));
      }
      // A pattern ending in "/" matches folders only: the path's own kind is part of the question.
      const own = lstatSync(path.join(this.workspace, rel), { throwIfNoEntry: false });
      hash.update(own ? (own.isDirectory() ? "d" : "f") : "-");
    } catch {
      return undefined; // cannot be read: git decides
    }
    return hash.digest("hex");
  }

  /** git's earlier verdict on `rel` when its rule files still hold what they held then. */
  known(rel: string, rules: string | undefined): boolean | undefined {
    if (rules === undefined) return undefined;
    const kept = this.verdicts.get(rel);
    return kept?.rules === rules ? kept.ignored : undefined;
  }

  keep(rel: string, rules: string | undefined, ignored: boolean): void {
    if (rules === undefined) return;
    if (this.verdicts.size >= MAX_VERDICTS) this.verdicts.clear();
    this.verdicts.set(rel, { ignored, rules });
  }
}
