import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach } from "@jest/globals";
import { snapshotGitDir } from "../../src/snapshots/store.js";
import { makeTempDir } from "./tmp.js";

/**
 * The snapshot tests' set-up: a workspace `ws` inside a temp folder `dir`, made before each test
 * (handed to `made`) and removed after it, and what those tests ask of it and of its store.
 */
export function useSnapshotWorkspace(made: (space: { dir: string; ws: string }) => void): void {
  let tmp: ReturnType<typeof makeTempDir> | undefined;
  beforeEach(() => {
    tmp = makeTempDir();
    const ws = path.join(tmp.dir, "ws");
    mkdirSync(ws);
    made({ dir: tmp.dir, ws });
  });
  afterEach(() => tmp?.cleanup());
}

/** Writes `rel` in the workspace `ws`, making its folders. */
export function putIn(ws: string, rel: string, text: string | Buffer): void {
  mkdirSync(path.dirname(path.join(ws, rel)), { recursive: true });
  writeFileSync(path.join(ws, rel), text);
}

export const statusOf = (changes: { status: string; path: string }[]) => changes.map((c) => [c.status, c.path]);

/** Whether the snapshot store of `ws` holds the blob of these bytes (hashed without writing it). */
export function storeHolds(ws: string, bytes: Buffer | string): boolean {
  const oid = spawnSync("git", ["hash-object", "--stdin"], { input: bytes }).stdout.toString().trim();
  const env = { PATH: process.env.PATH, GIT_DIR: snapshotGitDir(ws), HOME: path.dirname(ws), GIT_CONFIG_NOSYSTEM: "1" };
  return spawnSync("git", ["cat-file", "-e", oid], { env }).status === 0;
}
