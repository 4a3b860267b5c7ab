import { lstatSync, readlinkSync, type Stats } from "node:fs";
import path from "node:path";
import type { IgnoreVerdicts } from "./ignore-verdicts.js";
import { writeLooseBlob, writeLooseRef } from "./loose-objects.js";
import { pidAlive } from "./session-processes.js";
import { ignoredOf, readRegularFile } from "./snapshot-direct.js";
import { MAX_SNAPSHOT_FILE_BYTES, type Git, ZERO_OID } from "./snapshot-scan.js";

/**
 * Snapshots of file-tool steps taken while the first whole snapshot of a process is still
 * running in the background (issue 30: a big repository's first snapshot must not block the
 * first step). Such a step's declared paths are hashed at once (their blobs are in the store
 * before the tools run), and its snapshot gets an id that is a ref, `refs/pending/…`, made to
 * point at a whole commit once the first snapshot is done: that commit is the first snapshot
 * with these paths as the steps found them, in order. So every id a thread keeps names a whole
 * tree in the end, and undo restores the step's files exactly. A process that stops before
 * the first snapshot ends leaves the ref unmade: undo then says why it cannot bring them back.
 */

/** Where snapshots taken during the first snapshot point once it is done. */
export const PENDING_PREFIX = "refs/pending/";
/**
 * Per pending snapshot, a blob of its entries (JSON), written as soon as they are hashed: a
 * process killed before its first snapshot ended leaves them, and the next process's first
 * snapshot makes those refs instead (the declared paths exactly, the rest as it finds them).
 */
export const PENDING_ENTRIES_PREFIX = "refs/pending-entries/";

/**
 * Keeps a pending snapshot's entries in the store (at `gitDir`), so another process can make its
 * ref. Written here, not by git: see loose-objects.ts.
 */
export async function savePendingEntries(
  gitDir: string,
  id: string,
  entries: ReadonlyMap<string, Entry>,
): Promise<void> {
  const blob = await writeLooseBlob(gitDir, Buffer.from(JSON.stringify([...entries])));
  writeLooseRef(gitDir, PENDING_ENTRIES_PREFIX + id.slice(PENDING_PREFIX.length), blob);
}

/**
 * Pending snapshots of this store whose ref was never made (their process stopped first), in the
 * order they were taken (`<pid>-<sequence>-…`), with their entries.
 */
export async function orphanedPending(git: Git, storeId: string): Promise<PendingSnapshot[]> {
  const listed = (await git(["for-each-ref", "--format=%(refname) %(objectname)", PENDING_ENTRIES_PREFIX + storeId]))
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const [ref, blob] = line.split(" ");
      return { id: PENDING_PREFIX + ref!.slice(PENDING_ENTRIES_PREFIX.length), blob: blob! };
    });
  const made = new Set(
    (await git(["for-each-ref", "--format=%(refname)", PENDING_PREFIX + storeId])).split("\n").filter(Boolean),
  );
  const order = (id: string) => (/\/(\d+)-(\d+)-[0-9a-f]+$/.exec(id) ?? []).slice(1).map(Number);
  return (
    listed
      // A live process's own (this one's too) are made whole by that process: only the dead's are orphans.
      .filter((o) => {
        const pid = order(o.id)[0];
        return !made.has(o.id) && (pid === undefined || !pidAlive(pid));
      })
      .sort((a, b) => {
        const [pa = 0, sa = 0] = order(a.id);
        const [pb = 0, sb = 0] = order(b.id);
        return pa - pb || sa - sb;
      })
      .map((o) => {
        const entries = git(["cat-file", "blob", o.blob]).then(
          (text) => new Map(JSON.parse(text) as [string, Entry][]),
        );
        // Read now, awaited in turn: one that fails while an earlier one is awaited is that one's
        // failure to report, not an unhandled rejection of this one (the whole settling fails anyway).
        entries.catch(() => undefined);
        return { id: o.id, entries };
      })
  );
}

/** A path's entry in a tree: its mode and blob, or null when the path is absent. */
export type Entry = { mode: string; oid: string } | null;

export interface PendingSnapshot {
  id: string;
  /** The declared paths as this snapshot found them (filled in when hashed). */
  entries: Promise<Map<string, Entry>>;
}

export function isPendingSnapshot(id: string): boolean {
  return id.startsWith(PENDING_PREFIX);
}

/**
 * Hashes `paths` as they are now into the store (blobs only, no index: the first snapshot is
 * using it). Files over the limit are left out and remembered in `oversized`; files git ignores
 * are never hashed (the first snapshot decides them, as git would); folders and other kinds are
 * not what a file tool changes and are left out too.
 */
export async function capturePaths(
  git: Git,
  gitDir: string,
  workspace: string,
  paths: readonly string[],
  oversized: Set<string>,
  verdicts?: IgnoreVerdicts,
): Promise<Map<string, Entry>> {
  const out = new Map<string, Entry>();
  // One lstat per path: the paths present are asked about ignores, and the same stats say what each is.
  const stats = new Map<string, Stats | undefined>();
  for (const rel of new Set(paths)) {
    try {
      stats.set(rel, lstatSync(path.join(workspace, rel)));
    } catch {
      stats.set(rel, undefined);
    }
  }
  const ignored = await ignoredOf(
    git,
    [...stats].filter(([, st]) => st).map(([rel]) => rel),
    verdicts,
  );
  for (const [rel, st] of stats) {
    if (ignored.has(rel)) continue;
    const abs = path.join(workspace, rel);
    if (!st) {
      out.set(rel, null);
      continue;
    }
    if (st.isSymbolicLink()) {
      out.set(rel, { mode: "120000", oid: await writeLooseBlob(gitDir, readlinkSync(abs, { encoding: "buffer" })) });
    } else if (st.isFile()) {
      const mode = st.mode & 0o100 ? "100755" : "100644"; // git reads the owner's bit
      if (st.size > MAX_SNAPSHOT_FILE_BYTES) oversized.add(rel);
      else {
        const data = await readRegularFile(abs);
        // Grown past the limit since the lstat: never into the store.
        if (data.length > MAX_SNAPSHOT_FILE_BYTES) oversized.add(rel);
        else out.set(rel, { mode, oid: await writeLooseBlob(gitDir, data) });
      }
    }
  }
  return out;
}

/** Puts `entries` into the index (git update-index --index-info; an absent path is removed). */
export async function applyEntries(git: Git, entries: ReadonlyMap<string, Entry>): Promise<void> {
  if (entries.size === 0) return;
  const lines = [...entries].map(([rel, e]) => (e ? `${e.mode} ${e.oid}\t${rel}` : `0 ${ZERO_OID}\t${rel}`));
  await git(["update-index", "-z", "--index-info"], `${lines.join("\0")}\0`);
}

/**
 * Once the first snapshot is in the index: first every pending path as its earliest snapshot
 * found it (the workspace before any of these steps changed it), then each pending snapshot's
 * paths in turn, each written as a tree and committed (`commit`), and its ref made. Returns
 * the last tree and commit, which the index now holds.
 */
export async function settlePending(
  git: Git,
  pending: readonly PendingSnapshot[],
  commit: (tree: string) => Promise<string>,
  last: { tree: string; commit: string } | undefined,
): Promise<{ tree: string; commit: string } | undefined> {
  const earliest = new Map<string, Entry>();
  for (const p of pending) for (const [rel, e] of await p.entries) if (!earliest.has(rel)) earliest.set(rel, e);
  await applyEntries(git, earliest);
  let at = last;
  for (const p of pending) {
    await applyEntries(git, await p.entries);
    const tree = (await git(["write-tree"])).trim();
    const id = at?.tree === tree ? at.commit : await commit(tree);
    at = { tree, commit: id };
    await git(["update-ref", p.id, id]);
    await git(["update-ref", "-d", PENDING_ENTRIES_PREFIX + p.id.slice(PENDING_PREFIX.length)]).catch(() => "");
  }
  return at;
}

/** What differs between two pending snapshots of this process (a step's before and after), path by path. */
export function pendingChanges(
  from: ReadonlyMap<string, Entry>,
  to: ReadonlyMap<string, Entry>,
): { path: string; status: "A" | "D" | "M" | "T"; fromMode: string; toMode: string }[] {
  const out: { path: string; status: "A" | "D" | "M" | "T"; fromMode: string; toMode: string }[] = [];
  for (const rel of [...new Set([...from.keys(), ...to.keys()])].sort()) {
    if (!from.has(rel) || !to.has(rel)) continue; // not recorded on one side (over the limit)
    const a = from.get(rel)!;
    const b = to.get(rel)!;
    if (a?.oid === b?.oid && a?.mode === b?.mode) continue;
    const status = !a ? "A" : !b ? "D" : a.mode !== b.mode ? "T" : "M";
    out.push({ path: rel, status, fromMode: a?.mode ?? "000000", toMode: b?.mode ?? "000000" });
  }
  return out;
}
