import { spawnSync } from "node:child_process";
import { expect, test } from "@jest/globals";
import { orphanedPending, PENDING_ENTRIES_PREFIX } from "../../src/snapshots/store.js";
import type { Git } from "../../src/snapshots/git.js";
import { snapshotGitDir, snapshotStore } from "../../src/snapshots/store.js";
import { holdSnapshotBranch } from "../helpers/snapshot-lock.js";
import { putIn, useSnapshotWorkspace } from "../helpers/snapshot-workspace.js";

/**
 * Orphans are the pending snapshots a dead process left: a live process's own (this one's, while
 * its first snapshot runs) are not, or they were settled twice, and the eager reads of their
 * entries rejected unhandled when the workspace went meanwhile.
 */

let dir: string;
let ws: string;
useSnapshotWorkspace((made) => ({ dir, ws } = made));

test("a live process's pending snapshots are not orphans; a dead process's are", async () => {
  putIn(ws, "a.txt", "a\n");
  const gitDir = snapshotGitDir(ws);
  const holder = await holdSnapshotBranch(gitDir, dir);
  const env = { PATH: process.env.PATH, GIT_DIR: gitDir, GIT_CONFIG_NOSYSTEM: "1", HOME: dir };
  const git: Git = async (args) => spawnSync("git", args, { env }).stdout.toString();
  try {
    const store = snapshotStore(ws);
    store.startFirst();
    const mine = await store.take(["a.txt"]);
    expect(mine).toMatch(/^refs\/pending\//);
    expect(await orphanedPending(git)).toEqual([]);
    // The same entries left by a process that is gone (pid 2^22 + 1 is above any pid Linux gives).
    const dead = `${PENDING_ENTRIES_PREFIX}4194305-1-deadbeef`;
    const blob = spawnSync("git", ["rev-parse", `${PENDING_ENTRIES_PREFIX}${mine.slice("refs/pending/".length)}`], {
      env,
    })
      .stdout.toString()
      .trim();
    spawnSync("git", ["update-ref", dead, blob], { env });
    const orphans = await orphanedPending(git);
    expect(orphans.map((o) => o.id)).toEqual(["refs/pending/4194305-1-deadbeef"]);
    expect([...(await orphans[0]!.entries).keys()]).toEqual(["a.txt"]);
    spawnSync("git", ["update-ref", "-d", dead], { env });
  } finally {
    holder.kill("SIGKILL");
  }
});
