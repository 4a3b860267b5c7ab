import { promises as fsp } from "node:fs";
import path from "node:path";
import { applyHunks } from "../../src/workspace/patch-apply.js";
import { parsePatch } from "../../src/workspace/patch-parse.js";
import { applyHunksStreamed, type ByteSplice } from "../../src/workspace/patch-stream.js";
import { makeTempDir } from "../helpers/tmp.js";

/**
 * apply_patch on a file too big for memory (issue 30) follows the in-memory rules exactly: each
 * case is applied both ways, with chunks and checkpoints small enough to cross every boundary,
 * and the streamed splices must give the same bytes (or the same refusal).
 */

let tmp: ReturnType<typeof makeTempDir>;
beforeAll(() => {
  tmp = makeTempDir();
});
afterAll(() => tmp.cleanup());

function spliced(original: Buffer, splices: readonly ByteSplice[]): Buffer {
  const parts: Buffer[] = [];
  let from = 0;
  for (const s of splices) {
    parts.push(original.subarray(from, s.offset), s.bytes);
    from = s.offset + s.length;
  }
  parts.push(original.subarray(from));
  return Buffer.concat(parts);
}

const numbered = (n: number, eol = "\n") => Array.from({ length: n }, (_, i) => `line ${i + 1}${eol}`).join("");
const P = (...lines: string[]) => ["*** Begin Patch", "*** Update File: f.txt", ...lines, "*** End Patch"].join("\n");

const cases: Array<[string, string, string]> = [
  ["start", numbered(50), P("@@", " line 1", "-line 2", "+line two", " line 3")],
  ["middle", numbered(50), P("@@", " line 24", "-line 25", "+line 25a", "+line 25b", " line 26")],
  ["end", numbered(50), P("@@", " line 48", " line 49", "-line 50", "+line fifty")],
  ["end, CRLF", numbered(50, "\r\n"), P("@@", " line 49", "-line 50", "+line fifty", "+line fifty-one")],
  [
    "mixed endings",
    numbered(10, "\r\n") + numbered(10) + "tail\r",
    P("@@", " line 10", "+inserted", "-tail", "+new tail"),
  ],
  ["no final newline", `${numbered(20)}last`, P("@@", " line 20", "-last", "+last changed")],
  [
    "delete the last lines of a file without a final newline",
    `${numbered(20)}last`,
    P("@@", " line 19", "-line 20", "-last"),
  ],
  ["append after an unterminated last line", `${numbered(20)}last`, P("@@", "+appended", "*** End of File")],
  ["appended with no context", numbered(20), P("@@", "+appended")],
  [
    "two hunks, an anchor",
    numbered(40),
    P("@@ line 10", " line 11", "-line 12", "+twelve", "@@", " line 30", "-line 31", "+thirty-one"),
  ],
  ["end of file anchor", `${numbered(5)}${numbered(5)}`, P("@@", " line 4", "-line 5", "+five", "*** End of File")],
  ["BOM", `\uFEFF${numbered(30)}`, P("@@", "-line 1", "+first", " line 2")],
  ["trailing whitespace", numbered(30).replace("line 7\n", "line 7   \n"), P("@@", " line 7", "-line 8", "+eight")],
  [
    "indentation",
    numbered(30).replace(/line (1[0-2])\n/g, "    line $1\n"),
    P("@@", " line 10", "-line 11", "+line eleven", " line 12"),
  ],
  ["twice without an anchor: refused", `${numbered(5)}${numbered(5)}`, P("@@", " line 2", "-line 3", "+three")],
  ["not there: refused", numbered(30), P("@@", " line 3", "-line 99", "+x")],
  [
    "an exact match later wins over a looser one earlier",
    numbered(12).replace("line 3\n", "   line 9 \n"),
    P("@@", "-line 9", "+nine"),
  ],
  [
    "an anchor matched exactly later wins over a looser match earlier",
    numbered(12).replace("line 2\n", "  line 7\n"),
    P("@@ line 7", "-line 8", "+eight"),
  ],
  ["an anchor not there: refused", numbered(30), P("@@ nowhere", " line 3", "-line 4", "+x")],
  [
    "a long line across chunks",
    `${numbered(10)}${"x".repeat(300)}\n${numbered(3)}`,
    P("@@", ` ${"x".repeat(300)}`, "-line 1", "+one"),
  ],
];

test.each(cases)("%s: streamed gives what the in-memory patch gives", async (name, content, patch) => {
  const [op] = parsePatch(patch);
  if (op?.kind !== "update") throw new Error("not an update");
  const expected = await applyHunks(content, op.hunks, "f.txt");
  const file = path.join(tmp.dir, `${name.replace(/\W+/g, "-")}.txt`);
  await fsp.writeFile(file, content);
  for (const tuning of [
    { chunkBytes: 16, checkpointLines: 1 },
    { chunkBytes: 64, checkpointLines: 3 },
    { chunkBytes: 1 << 20, checkpointLines: 4096 },
  ]) {
    const fh = await fsp.open(file, "r");
    try {
      const got = await applyHunksStreamed(fh, Buffer.byteLength(content), op.hunks, "f.txt", tuning);
      if (!expected.ok) {
        expect(got.ok).toBe(false);
        // The in-memory refusal may also quote the closest lines; the streamed one does not read for that.
        const message = got.ok ? "" : got.message;
        expect(
          expected.message.startsWith(
            message.replace(/ Read the file again and copy the context lines exactly\.$/, ""),
          ),
        ).toBe(true);
        continue;
      }
      expect(got.ok && { text: spliced(Buffer.from(content), got.splices).toString(), matches: got.matches }).toEqual({
        text: expected.text,
        matches: expected.matches,
      });
    } finally {
      await fh.close();
    }
  }
});

test("a hunk found nowhere reads the file three times (its lines, exactly, then every looser level at once), not once per level", async () => {
  const content = numbered(5_000);
  const file = path.join(tmp.dir, "read-count.txt");
  await fsp.writeFile(file, content);
  for (const patch of [P("@@", " line 3", "-line 99999", "+x"), P("@@ nowhere at all", "-line 4", "+x")]) {
    const [op] = parsePatch(patch);
    if (op?.kind !== "update") throw new Error("not an update");
    const fh = await fsp.open(file, "r");
    let bytesRead = 0;
    const counting = new Proxy(fh, {
      get(target, key) {
        if (key !== "read") return Reflect.get(target, key, target);
        return async (...args: Parameters<typeof fh.read>) => {
          const result = await (target.read as (...a: unknown[]) => ReturnType<typeof fh.read>)(...args);
          bytesRead += result.bytesRead;
          return result;
        };
      },
    });
    try {
      const got = await applyHunksStreamed(counting, content.length, op.hunks, "f.txt");
      expect(got.ok).toBe(false);
      // The scan of line ends, the exact search, the looser levels' search (five reads before).
      expect(bytesRead).toBeGreaterThanOrEqual(3 * content.length);
      expect(bytesRead).toBeLessThan(4 * content.length);
    } finally {
      await fh.close();
    }
  }
});
