import { spawnSync } from "node:child_process";
import { symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, expect, test } from "@jest/globals";
import { readRegularFile } from "../../src/workspace/snapshot-direct.js";
import { makeTempDir } from "../helpers/tmp.js";

/**
 * What the snapshots read of a workspace file after its lstat: a command may have swapped it for a
 * FIFO (nobody ever writes: a plain read would wait for good) or for a link to outside meanwhile.
 */

let tmp: ReturnType<typeof makeTempDir>;
beforeEach(() => {
  tmp = makeTempDir();
});
afterEach(() => tmp.cleanup());

test("a regular file's bytes; a FIFO refused at once instead of waited on; a link refused, not followed", async () => {
  const file = path.join(tmp.dir, "a.txt");
  writeFileSync(file, "bytes\n");
  expect((await readRegularFile(file)).toString()).toBe("bytes\n");
  const fifo = path.join(tmp.dir, "fifo");
  expect(spawnSync("mkfifo", [fifo]).status).toBe(0);
  await expect(readRegularFile(fifo)).rejects.toThrow("is no longer a regular file");
  const link = path.join(tmp.dir, "link");
  symlinkSync(file, link);
  await expect(readRegularFile(link)).rejects.toThrow("ELOOP");
});
