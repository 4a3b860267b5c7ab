import { createHash } from "node:crypto";
import { createReadStream, promises as fsp } from "node:fs";
import path from "node:path";
import { createTools, type Toolset } from "../../src/tools/index.js";
import { closeSync, openSync } from "node:fs";
import { MAX_LINE_BYTES } from "../../src/tools/search-files-scan.js";
import {
  bundledRipgrep,
  findRipgrep,
  MAX_RG_JSON_LINE_BYTES,
  newOutcome,
  ripgrepDescriptor,
} from "../../src/tools/search-files.js";
import { makeTempDir } from "../helpers/tmp.js";

/**
 * Big files are worked on, not skipped (issue 30): a 300 MB file where search_files (built-in
 * and ripgrep) finds a line near the end, read_file's first page says how far it knows, and
 * edit_file changes a line near the end leaving every other byte as it was. Timing and memory
 * are the bench's (scripts/bench-scale-files.ts).
 */

const BLOCK_LINE = `${"0123456789".repeat(6)}abc\n`; // 64 bytes
const BLOCK = Buffer.from(BLOCK_LINE.repeat(16_384)); // 1 MiB
const BLOCKS = 300;
const TAIL = "tail one\nERROR needle here\ntail three\n";
const NEEDLE_LINE = BLOCKS * 16_384 + 2;

let dir: string;
let cleanup: () => void;
const file = () => path.join(dir, "big.log");
const noRg = { ...process.env, PATH: "/nonexistent", MINI_CURSOR_RIPGREP: "off" };

beforeAll(async () => {
  ({ dir, cleanup } = makeTempDir());
  const handle = await fsp.open(file(), "w");
  for (let i = 0; i < BLOCKS; i++) await handle.write(BLOCK);
  await handle.write(TAIL);
  await handle.close();
}, 120_000);
afterAll(() => cleanup());

const call = async (tools: Toolset, name: "search_files" | "read_file" | "edit_file", args: object) =>
  String(await (tools[name] as { invoke(a: object): Promise<unknown> }).invoke(args));

async function sha256(p: string, end?: number): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(p, end === undefined ? {} : { end: end - 1 }))
    hash.update(chunk as Buffer);
  return hash.digest("hex");
}

const found = `big.log:${NEEDLE_LINE}: ERROR needle here\n\n[1 matching line in 1 file under the workspace.]`;

test("the built-in search finds a line near the end of a 300 MB file", async () => {
  expect(await call(createTools({ workspace: dir, env: noRg }), "search_files", { pattern: "needle" })).toBe(found);
}, 120_000);

(findRipgrep() ? test : test.skip)(
  "with ripgrep the same line is found: no size limit skips it",
  async () => {
    expect(await call(createTools({ workspace: dir }), "search_files", { pattern: "needle" })).toBe(found);
  },
  120_000,
);

test("read_file's first page of a 300 MB file says how far it knows, without counting the rest", async () => {
  const tools = createTools({ workspace: dir, env: noRg });
  const lines = Array.from({ length: 3 }, (_, i) => `${String(i + 1).padStart(6)}\t${BLOCK_LINE.trimEnd()}`);
  expect(await call(tools, "read_file", { filePath: "big.log", limit: 3 })).toBe(
    `${lines.join("\n")}\n\n[Lines 1-3 of at least 4 (a 300 MB file; lines past this page are not counted). Continue with offset 4.]`,
  );
}, 120_000);

test("edit_file changes a line near the end of a 300 MB file; every other byte stays as it was", async () => {
  const tools = createTools({ workspace: dir, env: noRg });
  const before = (await fsp.stat(file())).size;
  const prefix = before - TAIL.length;
  const prefixHash = await sha256(file(), prefix);
  await call(tools, "read_file", { filePath: "big.log", limit: 1 });
  expect(
    await call(tools, "edit_file", { filePath: "big.log", oldString: "needle here", newString: "needle edited" }),
  ).toBe(
    `Edited big.log (300 MB, streamed): replaced 1 occurrence (exact match) at line ${NEEDLE_LINE}:\n${String(NEEDLE_LINE).padStart(6)}\tneedle edited`,
  );
  expect((await fsp.stat(file())).size).toBe(before + 2);
  expect(await sha256(file(), prefix)).toBe(prefixHash);
  const handle = await fsp.open(file(), "r");
  const tail = Buffer.alloc(TAIL.length + 2);
  await handle.read(tail, 0, tail.length, prefix);
  await handle.close();
  expect(tail.toString()).toBe("tail one\nERROR needle edited\ntail three\n");
  expect((await fsp.readdir(dir)).sort()).toEqual(["big.log"]);
  // Twice the same place, or a text that is not there: refused with a sentence, nothing written.
  expect(await call(tools, "edit_file", { filePath: "big.log", oldString: "0123456789", newString: "x" })).toMatch(
    /^Error: oldString matches more than 5 places in big\.log \(lines 1, 1, 1, 1, 1 and more\)/,
  );
  expect(await call(tools, "edit_file", { filePath: "big.log", oldString: "needle here", newString: "x" })).toMatch(
    /^Error: oldString was not found in big\.log\. In a file over 10 MB \(this one is 300 MB\) it must match exactly/,
  );
  expect((await fsp.stat(file())).size).toBe(before + 2);
}, 240_000);

(bundledRipgrep() ? test : test.skip)(
  "a line whose ripgrep --json line is just over the limit: the real ripgrep gives up on it, and the match is shown as the built-in search shows it",
  async () => {
    const own = makeTempDir();
    try {
      // ripgrep's JSON line adds its path, numbers and submatches (over 16 bytes) to the line.
      const over = `${"x".repeat(MAX_RG_JSON_LINE_BYTES - 16 - "needle".length)}needle`;
      const under = `${"x".repeat(MAX_RG_JSON_LINE_BYTES - 1024 - "needle".length)}needle`;
      await fsp.writeFile(path.join(own.dir, "over.txt"), `first\n${over}\nlast\n`);
      await fsp.writeFile(path.join(own.dir, "under.txt"), `first\n${under}\nlast\n`);
      // Longer than the built-in search's chunk: searched in pieces, shown with the whole line's length.
      const pieces = `${"x".repeat(MAX_LINE_BYTES + 50)}needle`;
      await fsp.writeFile(path.join(own.dir, "pieces.txt"), `first\n${pieces}\nlast\n`);
      const descriptor = ripgrepDescriptor(bundledRipgrep()!, own.dir, /needle/i, 0);
      for (const [name, whole] of [
        ["over.txt", false],
        ["under.txt", true],
      ] as const) {
        const fd = openSync(path.join(own.dir, name), "r");
        try {
          expect(await descriptor(fd, name, newOutcome("ripgrep"))).toBe(whole);
        } finally {
          closeSync(fd);
        }
      }
      const shown = (name: string, line: string) =>
        `${name}:2: …${line.slice(-106)}… [line has ${line.length} characters]`;
      const expected = [
        shown("over.txt", over),
        `pieces.txt:2: …${"x".repeat(50)}needle [line has ${pieces.length} bytes]`,
        shown("under.txt", under),
        "",
        "[3 matching lines in 3 files under the workspace.]",
      ].join("\n");
      for (const tools of [createTools({ workspace: own.dir }), createTools({ workspace: own.dir, env: noRg })])
        expect(await call(tools, "search_files", { pattern: "needle" })).toBe(expected);
    } finally {
      own.cleanup();
    }
  },
  120_000,
);
