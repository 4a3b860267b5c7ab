import { execFileSync } from "node:child_process";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { MAX_COMMAND_FILE_BYTES, readCommandFolder } from "../../src/security/command-files.js";
import { makeTempDir } from "../helpers/tmp.js";

/** Attacks on a commands folder with real files: what is read, what is refused, and the sentence saying so. */

let tmp: ReturnType<typeof makeTempDir>;
let dir: string;
beforeEach(() => {
  tmp = makeTempDir();
  dir = path.join(tmp.dir, "commands");
  mkdirSync(dir);
});
afterEach(() => tmp.cleanup());

const names = (r: ReturnType<typeof readCommandFolder>) => r.files.map((f) => f.name);

test("plain files are read by name; bad names, symlinks out, oversized files, folders and FIFOs are refused", () => {
  writeFileSync(path.join(dir, "ok.md"), "fine");
  writeFileSync(path.join(dir, "notes.txt"), "not a command");
  writeFileSync(path.join(dir, "..md"), "dots");
  writeFileSync(path.join(dir, "has space.md"), "space");
  writeFileSync(path.join(dir, "big.md"), "x".repeat(MAX_COMMAND_FILE_BYTES + 1));
  writeFileSync(path.join(tmp.dir, "outside.md"), "secret");
  symlinkSync(path.join(tmp.dir, "outside.md"), path.join(dir, "out.md"));
  symlinkSync("/etc/passwd", path.join(dir, "passwd.md"));
  symlinkSync(path.join(dir, "ok.md"), path.join(dir, "alias.md"));
  mkdirSync(path.join(dir, "folder.md"));
  execFileSync("mkfifo", [path.join(dir, "fifo.md")]);
  const r = readCommandFolder(dir, "cmds");
  expect(names(r)).toEqual(["alias", "ok"]);
  expect(r.files.map((f) => f.text)).toEqual(["fine", "fine"]);
  expect(r.problems).toEqual([
    "cmds/..md is not a command: a name is letters, digits, - and _ (at most 64, starting with a letter or digit).",
    `cmds/big.md is larger than ${MAX_COMMAND_FILE_BYTES / 1024} KiB; it is not read.`,
    "cmds/fifo.md is not a regular file; it is not read.",
    "cmds/folder.md is not a regular file; it is not read.",
    "cmds/has space.md is not a command: a name is letters, digits, - and _ (at most 64, starting with a letter or digit).",
    `cmds/out.md is a symlink out of the folder (to ${path.join(tmp.dir, "outside.md")}); it is not read.`,
    "cmds/passwd.md is a symlink out of the folder (to /etc/passwd); it is not read.",
  ]);
});

test("a project folder that is a symlink, or under a symlinked .mini-cursor, is not read at all", () => {
  const elsewhere = path.join(tmp.dir, "elsewhere");
  mkdirSync(elsewhere);
  writeFileSync(path.join(elsewhere, "x.md"), "x");
  const ws = path.join(tmp.dir, "ws");
  mkdirSync(ws);
  symlinkSync(tmp.dir, path.join(ws, ".mini-cursor"));
  const r = readCommandFolder(path.join(ws, ".mini-cursor", "elsewhere"), ".mini-cursor/commands", [
    path.join(ws, ".mini-cursor"),
    path.join(ws, ".mini-cursor", "elsewhere"),
  ]);
  expect(r).toEqual({
    files: [],
    problems: [
      `.mini-cursor/commands is not read: ${path.join(ws, ".mini-cursor")} is a symlink, and must be a plain folder.`,
    ],
  });
});

test("a missing folder is no commands and no problem", () => {
  expect(readCommandFolder(path.join(tmp.dir, "none"), "x")).toEqual({ files: [], problems: [] });
});
