import { execFileSync, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { appendFileSync, mkdirSync, readdirSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, expect, test } from "@jest/globals";
import { writeLooseBlob, writeLooseRef } from "../../src/snapshots/git.js";
import { makeTempDir } from "../helpers/tmp.js";

/** Blobs and refs this process writes into a store must be what git itself reads and checks. */

let tmp: ReturnType<typeof makeTempDir>;
let gitDir: string;
const git = (...args: string[]) =>
  // stderr kept: fsck's notices about a store without a branch are not the test's output.
  execFileSync("git", args, { env: { PATH: process.env.PATH, GIT_DIR: gitDir, HOME: tmp.dir }, stdio: "pipe" });

beforeEach(() => {
  tmp = makeTempDir();
  gitDir = path.join(tmp.dir, "store");
  execFileSync("git", ["init", "--quiet", "--bare", gitDir]);
});
afterEach(() => tmp.cleanup());

test("blobs are git's own: the same ids as hash-object, the exact bytes back, and fsck finds nothing wrong", async () => {
  const samples = [Buffer.alloc(0), Buffer.from("text\r\nwith endings\n"), Buffer.from([0, 255, 10, 13, 0x80])];
  for (const data of samples) {
    const oid = await writeLooseBlob(gitDir, data);
    expect(oid).toBe(execFileSync("git", ["hash-object", "--stdin"], { input: data }).toString().trim());
    expect(git("cat-file", "blob", oid).equals(data)).toBe(true);
    expect(statSync(path.join(gitDir, "objects", oid.slice(0, 2), oid.slice(2))).mode & 0o777).toBe(0o444);
    // Again: already there, left as it is, no temporary file stays.
    expect(await writeLooseBlob(gitDir, data)).toBe(oid);
    expect(readdirSync(path.join(gitDir, "objects", oid.slice(0, 2)))).toEqual([oid.slice(2)]);
  }
  expect(git("fsck", "--strict", "--no-dangling").toString()).toBe("");
});

test("a ref is made where git finds it, and one whose lock is held is refused", async () => {
  const oid = await writeLooseBlob(gitDir, Buffer.from("entries\n"));
  writeLooseRef(gitDir, "refs/pending-entries/store/1-1-ab", oid);
  expect(git("for-each-ref", "--format=%(refname) %(objectname)").toString()).toBe(
    `refs/pending-entries/store/1-1-ab ${oid}\n`,
  );
  // git's protocol: a `.lock` beside the ref means another writer holds it.
  writeFileSync(path.join(gitDir, "refs/pending-entries/store/1-2-cd.lock"), "");
  expect(() => writeLooseRef(gitDir, "refs/pending-entries/store/1-2-cd", oid)).toThrow("EEXIST");
});

const asRoot = process.getuid?.() === 0;

(asRoot ? test : test.skip)(
  "on a full disk the write fails as such and leaves neither the object nor a temporary file",
  async () => {
    const disk = path.join(tmp.dir, "disk");
    mkdirSync(disk);
    expect(spawnSync("mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", disk]).status).toBe(0);
    try {
      const store = path.join(disk, "store");
      execFileSync("git", ["init", "--quiet", "--bare", store]);
      try {
        for (;;) appendFileSync(path.join(disk, "filler"), Buffer.alloc(16 * 1024));
      } catch {
        // full
      }
      // Random bytes do not compress: the object needs about as much room as they take.
      const data = randomBytes(200 * 1024);
      await expect(writeLooseBlob(store, data)).rejects.toThrow("ENOSPC");
      const objects = path.join(store, "objects");
      const left = readdirSync(objects, { recursive: true })
        .map(String)
        .filter((n) => /[0-9a-f]{2}\//.test(n));
      expect(left).toEqual([]);
    } finally {
      spawnSync("umount", ["-l", disk]);
    }
  },
);
