import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import path from "node:path";
import { waitFor } from "./tmp.js";

/**
 * A real git holding the snapshot branch's lock in the shadow repository `dir` (made here when
 * missing, with one commit): `update-ref --stdin` with a prepared transaction keeps
 * `refs/heads/snapshots.lock` until it is killed. A first whole snapshot then cannot finish
 * (its commit waits for the lock), which is how tests keep one running for as long as they need.
 */
export async function holdSnapshotBranch(dir: string, home: string): Promise<ChildProcess> {
  const env = { PATH: process.env.PATH, GIT_DIR: dir, GIT_CONFIG_NOSYSTEM: "1", HOME: home };
  mkdirSync(path.dirname(dir), { recursive: true });
  if (!existsSync(path.join(dir, "HEAD"))) spawnSync("git", ["init", "--quiet", "--initial-branch=snapshots"], { env });
  const empty = spawnSync("git", ["hash-object", "-t", "tree", "-w", "--stdin"], { env, input: "" })
    .stdout.toString()
    .trim();
  const root = spawnSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", "commit-tree", empty, "-m", "root"], {
    env,
  })
    .stdout.toString()
    .trim();
  spawnSync("git", ["update-ref", "refs/heads/snapshots", root], { env });
  return holdRef(dir, "refs/heads/snapshots", root, home);
}

/**
 * A real git holding the lock of `ref` in the existing repository `dir` (a prepared
 * `update-ref --stdin` transaction to `value`) until it is killed: a git call of the store
 * that moves `ref` waits for it, as for any live process's lock.
 */
export async function holdRef(dir: string, ref: string, value: string, home: string): Promise<ChildProcess> {
  const env = { PATH: process.env.PATH, GIT_DIR: dir, GIT_CONFIG_NOSYSTEM: "1", HOME: home };
  const child = spawn("git", ["update-ref", "--stdin"], { env, stdio: ["pipe", "ignore", "ignore"] });
  child.stdin!.write(`start\nupdate ${ref} ${value}\nprepare\n`);
  await waitFor(() => existsSync(path.join(dir, `${ref}.lock`)), 30_000);
  return child;
}
