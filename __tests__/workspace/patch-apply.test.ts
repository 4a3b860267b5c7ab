import { promises as fsp, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { createTools } from "../../src/tools/index.js";
import { applyHunks } from "../../src/workspace/patch-apply.js";
import { parsePatch } from "../../src/workspace/patch-parse.js";
import { applyHunksStreamed, type ByteSplice } from "../../src/workspace/patch-stream.js";
import { makeTempDir } from "../helpers/tmp.js";

/**
 * Line endings kept per line (issue 44): a file with "\r\n", "\n" and lone "\r" ends keeps each
 * line's own ending, whatever order the patch lists a change's "-" and "+" lines in. Every case
 * is checked three ways with exact bytes: in memory, streamed (the path of files over 10 MB),
 * and through the apply_patch tool on a real file.
 */

let tmp: ReturnType<typeof makeTempDir>;
beforeAll(() => {
  tmp = makeTempDir();
});
afterAll(() => tmp.cleanup());

const P = (...lines: string[]) => ["*** Begin Patch", "*** Update File: f.txt", ...lines, "*** End Patch"].join("\n");

const cases: Array<{ name: string; file: string; patch: string; after: string }> = [
  {
    name: "a replaced CRLF line stays CRLF in a file with lone CRs, the '+' line written before the '-' line",
    file: "head\rone\r\ntwo\ntail\r",
    patch: P("@@", " head", "+ONE", "-one", " two"),
    after: "head\rONE\r\ntwo\ntail\r",
  },
  {
    name: "the same change written '-' first",
    file: "head\rone\r\ntwo\ntail\r",
    patch: P("@@", " head", "-one", "+ONE", " two"),
    after: "head\rONE\r\ntwo\ntail\r",
  },
  {
    name: "two lines replaced, '+' lines first: each takes the ending of the line in its place",
    file: "a\rb\r\nc\rd\n",
    patch: P("@@", " a", "+B", "+C", "-b", "-c", " d"),
    after: "a\rB\r\nC\rd\n",
  },
  {
    name: "more lines added than removed: the extra ones take the last removed line's ending",
    file: "x\ny\r\nz\r",
    patch: P("@@", " x", "+Y1", "+Y2", "+Y3", "-y", " z"),
    after: "x\nY1\r\nY2\r\nY3\r\nz\r",
  },
  {
    name: "an insertion with nothing removed takes the ending of the line before it",
    file: "p\r\nq\rr\n",
    patch: P("@@", " q", "+inserted", " r"),
    after: "p\r\nq\rinserted\rr\n",
  },
  {
    name: "a CRLF last line without a final newline replaced: still no final newline",
    file: "a\rb\r\nc",
    patch: P("@@", " b", "+C", "-c"),
    after: "a\rb\r\nC",
  },
];

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

const hunksOf = (patch: string) => {
  const op = parsePatch(patch)[0]!;
  if (op.kind !== "update") throw new Error("an update was expected");
  return op.hunks;
};

test.each(cases)("in memory: $name", async ({ file, patch, after }) => {
  const result = await applyHunks(file, hunksOf(patch), "f.txt");
  expect(result).toEqual({ ok: true, text: after, matches: ["exact"] });
});

test.each(cases)("streamed: $name", async ({ file, patch, after }) => {
  const abs = path.join(tmp.dir, "streamed.txt");
  writeFileSync(abs, file);
  const fh = await fsp.open(abs, "r");
  try {
    const result = await applyHunksStreamed(fh, Buffer.byteLength(file), hunksOf(patch), "f.txt", {
      chunkBytes: 3,
      checkpointLines: 2,
    });
    if (!result.ok) throw new Error(result.message);
    expect(spliced(Buffer.from(file), result.splices).toString("latin1")).toBe(after);
  } finally {
    await fh.close();
  }
});

test.each(cases)("apply_patch on disk: $name", async ({ file, patch, after }) => {
  const ws = path.join(tmp.dir, `ws-${cases.findIndex((c) => c.patch === patch && c.file === file)}`);
  await fsp.mkdir(ws, { recursive: true });
  writeFileSync(path.join(ws, "f.txt"), file);
  const tools = createTools({ workspace: ws, editTool: "both" });
  const config = { configurable: { thread_id: "t1" } };
  await tools.read_file.invoke({ filePath: "f.txt" }, config);
  const result = (await tools.apply_patch.invoke({ input: patch } as never, config)) as string;
  expect(result).toBe("Applied the patch to 1 file:\nM f.txt (1 hunk)");
  expect(readFileSync(path.join(ws, "f.txt"), "latin1")).toBe(after);
});
