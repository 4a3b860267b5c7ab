import { linkSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, expect, test } from "@jest/globals";
import { withMentionedFiles } from "../../src/app/mentions.js";
import { makeTempDir } from "../helpers/tmp.js";

/** `@path` attaches a workspace file as read_file would read it: confined, no link out, no second hard link. */

let tmp: ReturnType<typeof makeTempDir>;
let ws: string;
beforeEach(() => {
  tmp = makeTempDir();
  ws = path.join(tmp.dir, "ws");
  mkdirSync(ws);
});
afterEach(() => tmp.cleanup());

test("a workspace file is attached; a hard link to a file outside and a link out are not", async () => {
  writeFileSync(path.join(ws, "a.txt"), "hello\n");
  writeFileSync(path.join(tmp.dir, "secret"), "outside\n");
  linkSync(path.join(tmp.dir, "secret"), path.join(ws, "hard"));
  symlinkSync(tmp.dir, path.join(ws, "out"));
  const { request, notes } = await withMentionedFiles("see @a.txt @hard @out/secret", ws);
  expect(request).toBe('see @a.txt @hard @out/secret\n\n<file path="a.txt">\nhello\n</file>');
  expect(notes).toEqual([
    "@a.txt: attached (6 B).",
    "@hard: a file with other hard links (one may be outside the workspace); sent as typed, not attached.",
    "@out/secret: not a path inside the workspace; sent as typed, not attached.",
  ]);
});
