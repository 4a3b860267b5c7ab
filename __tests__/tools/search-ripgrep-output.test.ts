import { closeSync, mkdirSync, openSync, writeFileSync } from "node:fs";
import path from "node:path";
import { createTools } from "../../src/tools/index.js";
import { bundledRipgrep, newOutcome, ripgrepDescriptor, ripgrepSearch } from "../../src/tools/search-files.js";
import { makeTempDir } from "../helpers/tmp.js";

/**
 * What the bundled ripgrep prints is read as untrusted (issue 30): a matching line too long for
 * its --json output to be read whole sends the file to the built-in search (no crash, bounded
 * memory), text and names that are not UTF-8 are decoded as the built-in search decodes them, and
 * a NUL byte past the first BINARY_SNIFF_BYTES does not hide a file from ripgrep that the
 * built-in search reads. Each result is the same with ripgrep and with the built-in search.
 */

const BUILT_IN = { MINI_CURSOR_RIPGREP: "off" };
const rg = bundledRipgrep();

let tmp: ReturnType<typeof makeTempDir>;
beforeEach(() => {
  tmp = makeTempDir();
});
afterEach(() => tmp.cleanup());

function put(rel: string, content: string | Buffer): string {
  const abs = path.join(tmp.dir, rel);
  mkdirSync(path.dirname(abs), { recursive: true });
  writeFileSync(abs, content);
  return abs;
}

const search = async (env: NodeJS.ProcessEnv, args: Record<string, unknown>) =>
  String(await createTools({ workspace: tmp.dir, env }).search_files.invoke(args as never));

/** The probe's file: one JSON line of escaped quotes, the needle at its end (ripgrep escapes each byte again). */
const oneLine = (quotes: number) => `["${'\\\\"'.repeat(quotes)}probeNeedleXyz"]`;

(rg ? describe : describe.skip)("with the bundled ripgrep", () => {
  test("a matching line whose --json line is over the limit: ripgrep is stopped and the file searched by the built-in search", async () => {
    const line = oneLine(700_000); // 2.1 MB: a big file; ripgrep's line for it is 4.2 MB
    const big = put("one.json", line);
    const re = /probeNeedleXyz/i;
    const limit = 1024 * 1024;
    const fd = openSync(big, "r");
    try {
      const outcome = newOutcome("ripgrep");
      expect(await ripgrepDescriptor(rg!, tmp.dir, re, 0, undefined, limit)(fd, "one.json", outcome)).toBe(false);
      expect(outcome).toEqual(newOutcome("ripgrep"));
      const whole = newOutcome("ripgrep");
      expect(await ripgrepDescriptor(rg!, tmp.dir, re, 0)(fd, "one.json", whole)).toBe(true);
      expect(whole.total).toBe(1);
    } finally {
      closeSync(fd);
    }
    // Picking files (an rg from PATH, or none skipped for size): the file of a cut line is picked
    // and named as cut, and ripgrep goes on to the other files.
    put("small.txt", "probeNeedleXyz small\n");
    const cutFiles = new Set<string>();
    const picked = await ripgrepSearch(rg!, tmp.dir, ".", { pattern: re.source }, re, 0, true, {
      maxLineBytes: limit,
      cutFiles,
      sorted: true,
    });
    expect(picked?.hits.map((h) => h.path)).toEqual(["one.json", "small.txt"]);
    expect([...cutFiles]).toEqual(["one.json"]);
    expect(picked?.total).toBe(2);
    const expected = `one.json:1: …${line.slice(-116)}… [line has ${line.length} characters]\nsmall.txt:1: probeNeedleXyz small\n\n[2 matching lines in 2 files under the workspace.]`;
    expect(await search({}, { pattern: "probeNeedleXyz" })).toBe(expected);
    expect(await search(BUILT_IN, { pattern: "probeNeedleXyz" })).toBe(expected);
    const one = `one.json:1: …${line.slice(-116)}… [line has ${line.length} characters]\n\n[1 matching line in 1 file under one.json.]`;
    expect(await search({}, { pattern: "probeNeedleXyz", path: "one.json" })).toBe(one);
    expect(await search(BUILT_IN, { pattern: "probeNeedleXyz", path: "one.json" })).toBe(one);
  });

  test("a line that is not UTF-8 is shown with replacement characters, as by the built-in search", async () => {
    const filler = Buffer.from(`${"x".repeat(99)}\n`.repeat(11_000)); // 1.1 MB: a big file
    put("latin.log", Buffer.concat([filler, Buffer.from("caf\xe9 needle\n", "latin1")]));
    put("small.log", Buffer.from("na\xefve needle\n", "latin1"));
    const expected =
      "latin.log:11001: caf\uFFFD needle\nsmall.log:1: na\uFFFDve needle\n\n[2 matching lines in 2 files under the workspace.]";
    expect(await search({}, { pattern: "needle" })).toBe(expected);
    expect(await search(BUILT_IN, { pattern: "needle" })).toBe(expected);
  });

  test("a file whose name is not UTF-8 is named as not searched, not dropped", async () => {
    put("ok.txt", "needle ok\n");
    writeFileSync(Buffer.concat([Buffer.from(`${tmp.dir}/bad`), Buffer.from([0xff]), Buffer.from(".txt")]), "needle\n");
    const expected =
      "ok.txt:1: needle ok\n\n[1 matching line in 1 file under the workspace. 1 file could not be searched: bad\uFFFD.txt (name is not valid UTF-8).]";
    expect(await search({}, { pattern: "needle" })).toBe(expected);
    expect(await search(BUILT_IN, { pattern: "needle" })).toBe(expected);
  });

  test("a NUL byte past the first 8 KB does not hide a text file; one in them skips it, small or big, with both", async () => {
    const text = Buffer.from("a line of text\n".repeat(7_000)); // 105 KB
    put(
      "nul.txt",
      Buffer.concat([
        text,
        Buffer.from("\0stray\n"),
        Buffer.from("more text\n".repeat(6_000)),
        Buffer.from("the needle here\n"),
      ]),
    );
    put("early.txt", "ab\0cd\nthe needle early\n");
    put(
      "early-big.txt",
      Buffer.concat([
        Buffer.from("ab\0cd\n"),
        Buffer.from(`${"x".repeat(99)}\n`.repeat(11_000)),
        Buffer.from("the needle big\n"),
      ]),
    );
    const expected = "nul.txt:13002: the needle here\n\n[1 matching line in 1 file under the workspace.]";
    expect(await search({}, { pattern: "needle" })).toBe(expected);
    expect(await search(BUILT_IN, { pattern: "needle" })).toBe(expected);
    const none =
      "No matches for /needle/i in early-big.txt (files ignored by .gitignore and binary files are skipped).";
    expect(await search({}, { pattern: "needle", path: "early-big.txt" })).toBe(none);
    expect(await search(BUILT_IN, { pattern: "needle", path: "early-big.txt" })).toBe(none);
  });
});
