import { execFile } from "node:child_process";
import { lstatSync, mkdirSync, readFileSync, rmdirSync, unlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { ensureStateSubdir, STATE_DIR_NAME } from "../memory/state-dir.js";
import { snapshotGitEnvironment } from "../settings.js";

/**
 * Workspace snapshots in a shadow git repository under `.mini-cursor/snapshots/`, so /undo,
 * /rewind and Studio's time travel can bring files back. The user's own `.git`, index and
 * configuration are never read or written: git runs with GIT_DIR, GIT_WORK_TREE and
 * GIT_INDEX_FILE pointing here, no system or global configuration, no hooks and no signing.
 * The workspace's `.gitignore` files are honoured (an ignored `node_modules` is not recorded),
 * and the shadow index is kept between snapshots, so git's stat cache makes a snapshot of an
 * unchanged project cost one directory walk.
 */

/** Folder under `.mini-cursor/` holding the shadow repository. */
export const SNAPSHOTS_DIR = "snapshots";
/** The branch every snapshot commit is chained on, so none is ever unreachable. */
const SNAPSHOT_REF = "refs/heads/snapshots";
/** Where the snapshot each thread's workspace was last left at is kept (time travel compares against it). */
const THREAD_REF_PREFIX = "refs/threads/";
/** A git call that takes longer than this is given up (the run goes on without a snapshot). */
export const GIT_TIMEOUT_MS = 60_000;
/** Output of one git call we are prepared to read (paths of a large project's diff). */
const GIT_MAX_BUFFER = 256 * 1024 * 1024;

/** Configuration on every call: nothing from the user's files may change what git does here. */
const GIT_CONFIG = [
  "core.hooksPath=/dev/null",
  "commit.gpgSign=false",
  "core.autocrlf=false",
  "core.safecrlf=false",
  "core.fsmonitor=false",
  "core.symlinks=true",
  "core.fileMode=true",
  "core.quotePath=false",
  "core.longpaths=true",
  "gc.auto=0",
  "advice.addEmbeddedRepo=false",
  "init.defaultBranch=snapshots",
  "user.name=mini-cursor",
  "user.email=snapshots@mini-cursor.invalid",
];

/** git is missing, or a call failed: the caller goes on without snapshots. */
export class SnapshotError extends Error {
  override name = "SnapshotError";
}

/** One path that differs between two snapshots, as git's raw diff says. */
export interface SnapshotChange {
  path: string;
  /** A: only in the second snapshot; D: only in the first; M: content changed; T: type or mode changed. */
  status: "A" | "D" | "M" | "T";
  /** File mode in the first and second snapshot ("000000" when absent). */
  fromMode: string;
  toMode: string;
  /** Lines added and removed going from the first to the second (undefined for binary files). */
  added?: number;
  removed?: number;
}

export interface SnapshotStore {
  readonly workspace: string;
  /** Records the workspace now; returns the snapshot's id (a commit hash). */
  take(): Promise<string>;
  /** What differs going from snapshot `from` to snapshot `to`. */
  changes(from: string, to: string): Promise<SnapshotChange[]>;
  /** Puts `paths` back as they are in snapshot `source` (written, or deleted when absent there). */
  restore(source: string, paths: readonly string[]): Promise<void>;
  /** The snapshot a thread's workspace was last left at, if recorded. */
  threadSnapshot(threadId: string): Promise<string | undefined>;
  setThreadSnapshot(threadId: string, id: string): Promise<void>;
}

function gitDir(workspace: string): string {
  return path.join(workspace, STATE_DIR_NAME, SNAPSHOTS_DIR);
}

function run(workspace: string, args: string[], input?: string): Promise<string> {
  const dir = gitDir(workspace);
  const env = {
    ...snapshotGitEnvironment(),
    GIT_DIR: dir,
    GIT_WORK_TREE: workspace,
    GIT_INDEX_FILE: path.join(dir, "index"),
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    HOME: dir,
    XDG_CONFIG_HOME: dir,
    GIT_TERMINAL_PROMPT: "0",
    GIT_LITERAL_PATHSPECS: "1",
    LC_ALL: "C",
  };
  const argv = [...GIT_CONFIG.flatMap((c) => ["-c", c]), ...args];
  return new Promise((resolve, reject) => {
    const child = execFile(
      "git",
      argv,
      { cwd: workspace, env, timeout: GIT_TIMEOUT_MS, maxBuffer: GIT_MAX_BUFFER, encoding: "utf8" },
      (err, stdout, stderr) => {
        if (!err) return resolve(stdout);
        const code = (err as NodeJS.ErrnoException).code;
        if (code === "ENOENT")
          return reject(
            new SnapshotError("git is not installed (or not on PATH), so the workspace cannot be snapshotted"),
          );
        reject(
          new SnapshotError(`git ${args[0]} failed: ${(stderr || err.message).trim().split("\n").slice(-3).join(" ")}`),
        );
      },
    );
    if (input !== undefined) child.stdin?.end(input);
  });
}

/** Creates the shadow repository on first use; the state folder ignores itself, and is excluded here too. */
async function ensureRepository(workspace: string): Promise<void> {
  const dir = gitDir(workspace);
  ensureStateSubdir(workspace, SNAPSHOTS_DIR);
  let ready = false;
  try {
    ready = lstatSync(path.join(dir, "HEAD")).isFile();
  } catch {
    // not created yet
  }
  if (!ready) await run(workspace, ["init", "--quiet"]);
  const exclude = path.join(dir, "info", "exclude");
  const wanted = `/${STATE_DIR_NAME}/\n`;
  let current = "";
  try {
    current = readFileSync(exclude, "utf8");
  } catch {
    mkdirSync(path.dirname(exclude), { recursive: true });
  }
  if (current !== wanted) writeFileSync(exclude, wanted);
}

function parseRaw(output: string): SnapshotChange[] {
  // -z raw format: ":<mode> <mode> <sha> <sha> <status>\0<path>\0"
  const parts = output.split("\0");
  const out: SnapshotChange[] = [];
  for (let i = 0; i + 1 < parts.length; i += 2) {
    const meta = parts[i]!.replace(/^:/, "").split(" ");
    out.push({
      path: parts[i + 1]!,
      status: meta[4]![0] as SnapshotChange["status"],
      fromMode: meta[0]!,
      toMode: meta[1]!,
    });
  }
  return out;
}

function applyNumstat(changes: SnapshotChange[], output: string): void {
  const byPath = new Map(changes.map((c) => [c.path, c]));
  // -z numstat: "<added>\t<removed>\t<path>\0"
  for (const entry of output.split("\0")) {
    const [added, removed, ...rest] = entry.split("\t");
    const change = byPath.get(rest.join("\t"));
    if (!change || added === "-" || added === undefined) continue;
    change.added = Number(added);
    change.removed = Number(removed);
  }
}

/** Refuses to touch anything reached through a symlinked folder inside the workspace. */
function insideThroughPlainFolders(workspace: string, rel: string): boolean {
  if (path.isAbsolute(rel) || rel.split("/").includes("..")) return false;
  let dir = workspace;
  for (const part of rel.split("/").slice(0, -1)) {
    dir = path.join(dir, part);
    try {
      if (!lstatSync(dir).isDirectory()) return false;
    } catch {
      return true; // missing: git creates plain folders
    }
  }
  return true;
}

function removeFile(workspace: string, rel: string): void {
  if (!insideThroughPlainFolders(workspace, rel)) return;
  const file = path.join(workspace, rel);
  try {
    unlinkSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
  // Folders the file was the last thing in go too, as they were not there before.
  for (
    let dir = path.dirname(file);
    dir !== workspace && dir.startsWith(workspace + path.sep);
    dir = path.dirname(dir)
  ) {
    try {
      rmdirSync(dir);
    } catch {
      break;
    }
  }
}

/** Snapshot stores per workspace, so calls on one workspace are never run at the same time (one index). */
const stores = new Map<string, SnapshotStore>();

export function snapshotStore(workspace: string): SnapshotStore {
  const root = path.resolve(workspace);
  const existing = stores.get(root);
  if (existing) return existing;
  let queue: Promise<unknown> = Promise.resolve();
  const serial = <T>(work: () => Promise<T>): Promise<T> => {
    const next = queue.then(work, work);
    queue = next.catch(() => undefined);
    return next;
  };
  let last: { tree: string; commit: string } | undefined;
  // Threads' snapshots as this process last read or set them: an agent step then checks its thread without running git.
  const threadRefs = new Map<string, string>();
  const store: SnapshotStore = {
    workspace: root,
    take: () =>
      serial(async () => {
        await ensureRepository(root);
        // --ignore-errors: a file we may not read is left out rather than losing the whole snapshot.
        await run(root, ["add", "--all", "--ignore-errors", "--", "."]).catch((err: SnapshotError) => {
          if (!/unable to (index|stat)|Permission denied|open\(/i.test(err.message)) throw err;
        });
        const tree = (await run(root, ["write-tree"])).trim();
        if (last?.tree === tree) return last.commit;
        const parent = (await run(root, ["rev-parse", "--verify", "--quiet", SNAPSHOT_REF]).catch(() => "")).trim();
        const commit = (
          await run(root, ["commit-tree", tree, ...(parent ? ["-p", parent] : []), "-m", "mini-cursor snapshot"])
        ).trim();
        await run(root, ["update-ref", SNAPSHOT_REF, commit]);
        last = { tree, commit };
        return commit;
      }),
    changes: (from, to) =>
      serial(async () => {
        if (from === to) return [];
        const changes = parseRaw(await run(root, ["diff-tree", "-r", "-z", "--no-renames", "--raw", from, to]));
        if (changes.length > 0)
          applyNumstat(changes, await run(root, ["diff-tree", "-r", "-z", "--no-renames", "--numstat", from, to]));
        return changes;
      }),
    restore: (source, paths) =>
      serial(async () => {
        if (paths.length === 0) return;
        const present = new Set(
          (await run(root, ["ls-tree", "-r", "-z", "--name-only", source, "--", ...paths])).split("\0").filter(Boolean),
        );
        for (const rel of paths) if (!present.has(rel)) removeFile(root, rel);
        const write = paths.filter((p) => present.has(p) && insideThroughPlainFolders(root, p));
        if (write.length > 0) {
          await run(
            root,
            ["checkout", "--quiet", source, "--pathspec-from-file=-", "--pathspec-file-nul"],
            write.join("\0"),
          );
        }
        last = undefined;
      }),
    threadSnapshot: (threadId) =>
      serial(async () => {
        const known = threadRefs.get(threadId);
        if (known) return known;
        await ensureRepository(root);
        const out = (await run(root, ["rev-parse", "--verify", "--quiet", threadRef(threadId)]).catch(() => "")).trim();
        if (out) threadRefs.set(threadId, out);
        return out || undefined;
      }),
    setThreadSnapshot: (threadId, id) =>
      serial(async () => {
        await run(root, ["update-ref", threadRef(threadId), id]);
        threadRefs.set(threadId, id);
      }),
  };
  stores.set(root, store);
  return store;
}

function threadRef(threadId: string): string {
  // Ref names allow few characters; thread ids come from users.
  return THREAD_REF_PREFIX + Buffer.from(threadId, "utf8").toString("hex");
}
