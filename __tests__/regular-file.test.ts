import { spawnSync } from "node:child_process";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { afterEach, beforeEach, expect, test } from "@jest/globals";
import {
  FileTooLargeError,
  NotRegularFileError,
  onSkippedFiles,
  readRegularFile,
  readRegularFileStartSync,
  readRegularFileSync,
  readRegularTextSync,
  reportSkippedFile,
} from "../src/regular-file.js";
import { makeTempDir } from "./helpers/tmp.js";

/**
 * Issue 42.7: every file mini-cursor reads for itself is opened without blocking and checked on
 * the descriptor to be a regular file within a bound. A FIFO (nobody ever writes: a plain open
 * would wait for good), a device, a socket or a folder is refused at once; a symlink is refused
 * unless the caller follows links.
 */

let tmp: ReturnType<typeof makeTempDir>;
beforeEach(() => {
  tmp = makeTempDir();
});
afterEach(() => tmp.cleanup());

const at = (name: string) => path.join(tmp.dir, name);

function fifo(name: string): string {
  expect(spawnSync("mkfifo", [at(name)]).status).toBe(0);
  return at(name);
}

test("a regular file's bytes, sync and async, the same", async () => {
  writeFileSync(at("a.txt"), "bytes\n");
  expect(readRegularTextSync(at("a.txt"))).toBe("bytes\n");
  expect((await readRegularFile(at("a.txt"))).toString()).toBe("bytes\n");
  const big = Buffer.alloc(300_000, 7);
  writeFileSync(at("big"), big);
  expect(readRegularFileSync(at("big")).equals(big)).toBe(true);
  expect((await readRegularFile(at("big"))).equals(big)).toBe(true);
});

test("a FIFO is refused at once, sync and async, with what it is", async () => {
  const pipe = fifo("AGENTS.md");
  expect(() => readRegularFileSync(pipe)).toThrow(new NotRegularFileError(pipe, "a named pipe (FIFO)"));
  expect(() => readRegularFileSync(pipe, { follow: true })).toThrow(
    `${pipe} is a named pipe (FIFO), not a regular file`,
  );
  await expect(readRegularFile(pipe)).rejects.toThrow(`${pipe} is a named pipe (FIFO), not a regular file`);
  expect(() => readRegularFileStartSync(pipe, 10)).toThrow(NotRegularFileError);
});

test("a device, a socket and a folder are refused; a link only unless followed", async () => {
  expect(() => readRegularFileSync("/dev/zero", { follow: true })).toThrow(
    "/dev/zero is a character device, not a regular file",
  );
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(at("sock"), resolve));
  try {
    expect(() => readRegularFileSync(at("sock"))).toThrow(`${at("sock")} is a socket, not a regular file`);
  } finally {
    server.close();
  }
  mkdirSync(at("dir"));
  expect(() => readRegularFileSync(at("dir"))).toThrow(`${at("dir")} is a folder, not a regular file`);
  writeFileSync(at("real"), "real\n");
  symlinkSync(at("real"), at("link"));
  expect(() => readRegularFileSync(at("link"))).toThrow(`${at("link")} is a symlink, not a regular file`);
  await expect(readRegularFile(at("link"))).rejects.toThrow(NotRegularFileError);
  expect(readRegularTextSync(at("link"), { follow: true })).toBe("real\n");
  symlinkSync(fifo("pipe"), at("to-pipe"));
  expect(() => readRegularFileSync(at("to-pipe"), { follow: true })).toThrow("is a named pipe (FIFO)");
  expect(() => readRegularFileSync(at("missing"))).toThrow(expect.objectContaining({ code: "ENOENT" }));
});

test("the size bound: over it is refused, sync and async; the start of a file reads only what is asked", async () => {
  writeFileSync(at("f"), "0123456789");
  expect(readRegularTextSync(at("f"), { maxBytes: 10 })).toBe("0123456789");
  expect(() => readRegularFileSync(at("f"), { maxBytes: 9 })).toThrow(new FileTooLargeError(at("f"), 9));
  await expect(readRegularFile(at("f"), { maxBytes: 9 })).rejects.toThrow(`${at("f")} is larger than 9 bytes`);
  const start = readRegularFileStartSync(at("f"), 4);
  expect([start.data.toString(), start.size]).toEqual(["0123", 10]);
});

test("a skipped file is said once, to the listener once there is one", () => {
  const said: string[] = [];
  const err = new NotRegularFileError("/w/AGENTS.md", "a named pipe (FIFO)");
  reportSkippedFile("/w/AGENTS.md", err);
  reportSkippedFile("/w/AGENTS.md", err);
  onSkippedFiles((t) => said.push(t));
  reportSkippedFile("/w/AGENTS.md", err);
  reportSkippedFile("/w/big.json", new FileTooLargeError("/w/big.json", 5));
  onSkippedFiles(undefined);
  expect(said).toEqual([
    "/w/AGENTS.md was not read: it is a named pipe (FIFO), not a regular file. Replace it with a regular file to use it.",
    "/w/big.json was not read: it is larger than 5 bytes.",
  ]);
});
