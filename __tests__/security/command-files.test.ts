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

test("subfolders are namespaces (a/b.md is a:b), read 3 deep; a symlinked or badly named subfolder is not read", () => {
  mkdirSync(path.join(dir, "frontend", "forms"), { recursive: true });
  writeFileSync(path.join(dir, "frontend", "component.md"), "c");
  writeFileSync(path.join(dir, "frontend", "forms", "field.md"), "f");
  mkdirSync(path.join(dir, "a", "b", "c", "d"), { recursive: true });
  writeFileSync(path.join(dir, "a", "b", "c", "three.md"), "3");
  writeFileSync(path.join(dir, "a", "b", "c", "d", "four.md"), "4");
  mkdirSync(path.join(dir, "has space"));
  writeFileSync(path.join(dir, "has space", "x.md"), "x");
  const outside = path.join(tmp.dir, "outside");
  mkdirSync(outside);
  writeFileSync(path.join(outside, "secret.md"), "secret");
  symlinkSync(outside, path.join(dir, "linked"));
  const r = readCommandFolder(dir, "cmds");
  expect(r.files.map((f) => [f.name, f.relative, f.text])).toEqual([
    ["a:b:c:three", "a/b/c/three.md", "3"],
    ["frontend:component", "frontend/component.md", "c"],
    ["frontend:forms:field", "frontend/forms/field.md", "f"],
  ]);
  expect(r.problems).toEqual([
    "cmds/a/b/c/d is not read: subfolders are read 3 deep at most.",
    "cmds/has space is not read: a subfolder's name is a command name's first part (letters, digits, - and _).",
    "cmds/linked is a symlink to a folder; a subfolder of commands must be a plain folder, so it is not read.",
  ]);
});

test("a symlink inside a subfolder may point within the commands folder, not out of it", () => {
  mkdirSync(path.join(dir, "ns"));
  writeFileSync(path.join(dir, "top.md"), "top");
  symlinkSync(path.join(dir, "top.md"), path.join(dir, "ns", "alias.md"));
  symlinkSync("/etc/hostname", path.join(dir, "ns", "host.md"));
  const r = readCommandFolder(dir, "cmds");
  expect(r.files.map((f) => [f.name, f.text])).toEqual([
    ["ns:alias", "top"],
    ["top", "top"],
  ]);
  expect(r.problems).toEqual(["cmds/ns/host.md is a symlink out of the folder (to /etc/hostname); it is not read."]);
});

test("a project's .claude that is a symlink is not read at all", () => {
  const ws = path.join(tmp.dir, "ws");
  const elsewhere = path.join(tmp.dir, "elsewhere");
  mkdirSync(path.join(elsewhere, "commands"), { recursive: true });
  writeFileSync(path.join(elsewhere, "commands", "x.md"), "x");
  mkdirSync(ws);
  symlinkSync(elsewhere, path.join(ws, ".claude"));
  const r = readCommandFolder(path.join(ws, ".claude", "commands"), ".claude/commands", [
    path.join(ws, ".claude"),
    path.join(ws, ".claude", "commands"),
  ]);
  expect(r).toEqual({
    files: [],
    problems: [`.claude/commands is not read: ${path.join(ws, ".claude")} is a symlink, and must be a plain folder.`],
  });
});
