import { promises as fsp } from "node:fs";
import path from "node:path";
import { createTools, type Toolset } from "../../src/tools/index.js";
import { MAX_EDIT_BYTES } from "../../src/tools/edit-target.js";
import { MAX_STREAM_EDIT_BYTES } from "../../src/tools/edit-big.js";
import { withThousands } from "../../src/thousands.js";
import { makeTempDir } from "../helpers/tmp.js";

/**
 * A file over MAX_EDIT_BYTES with "\r\n" line endings, edited streaming (tools/edit-big.ts):
 * read_file shows its lines without the "\r", so an oldString copied from it has "\n" endings;
 * it still matches, and newString's lines take the file's "\r\n" as in a small file, instead of
 * "not found" or a file with mixed endings.
 */

let dir: string;
let cleanup: () => void;
beforeEach(() => ({ dir, cleanup } = makeTempDir()));
afterEach(() => cleanup());

const call = async (tools: Toolset, name: "read_file" | "edit_file" | "apply_patch", args: object) =>
  String(await (tools[name] as { invoke(a: object): Promise<unknown> }).invoke(args));

/** Lines "row N" up to just over the streaming threshold, each ending with `eol`. */
function bigText(eol: string): string {
  const lines: string[] = [];
  let bytes = 0;
  for (let i = 1; bytes <= MAX_EDIT_BYTES; i++) {
    const line = `row ${i}${eol}`;
    lines.push(line);
    bytes += line.length;
  }
  return lines.join("");
}

test('a "\\n" oldString copied from read_file matches in a big "\\r\\n" file, and newString gets "\\r\\n"', async () => {
  const original = bigText("\r\n");
  await fsp.writeFile(path.join(dir, "big.txt"), original);
  const tools = createTools({ workspace: dir });
  expect(await call(tools, "read_file", { filePath: "big.txt", offset: 500, limit: 2 })).toContain("   500\trow 500\n");
  expect(
    await call(tools, "edit_file", {
      filePath: "big.txt",
      oldString: "row 500\nrow 501",
      newString: "new A\nnew B\nnew C",
    }),
  ).toBe(
    `Edited big.txt (${(original.length / 1024 / 1024).toFixed(0)} MB, streamed): replaced 1 occurrence (exact match) at line 500:\n   500\tnew A\n   501\tnew B\n   502\tnew C`,
  );
  expect(await fsp.readFile(path.join(dir, "big.txt"), "utf8")).toBe(
    original.replace("row 500\r\nrow 501\r\n", "new A\r\nnew B\r\nnew C\r\n"),
  );
});

test('in a big "\\n" file the text is matched as given, and a "\\r\\n" in newString becomes "\\n"', async () => {
  const original = bigText("\n");
  await fsp.writeFile(path.join(dir, "big.txt"), original);
  const tools = createTools({ workspace: dir });
  await call(tools, "read_file", { filePath: "big.txt", limit: 1 });
  expect(
    await call(tools, "edit_file", {
      filePath: "big.txt",
      oldString: "row 7\nrow 8\n",
      newString: "seven\r\neight\r\n",
    }),
  ).toMatch(/^Edited big\.txt \(\d+ MB, streamed\): replaced 1 occurrence \(exact match\) at line 7:/);
  expect(await fsp.readFile(path.join(dir, "big.txt"), "utf8")).toBe(
    original.replace("row 7\nrow 8\n", "seven\neight\n"),
  );
});

test("a file just over the streaming limit is refused with sizes that differ where they are read", async () => {
  // Sparse: no 1 GB is written.
  const handle = await fsp.open(path.join(dir, "huge.txt"), "w");
  await handle.truncate(MAX_STREAM_EDIT_BYTES + 1);
  await handle.close();
  const tools = createTools({ workspace: dir });
  const bytes = (n: number) => `${withThousands(n)} bytes`;
  const sizes = `huge.txt is ${bytes(MAX_STREAM_EDIT_BYTES + 1)}, larger than`;
  expect(await call(tools, "edit_file", { filePath: "huge.txt", oldString: "a", newString: "b" })).toBe(
    `Error: ${sizes} edit_file handles (${bytes(MAX_STREAM_EDIT_BYTES)}). Use a command (e.g. sed) instead.`,
  );
  const patch = "*** Begin Patch\n*** Update File: huge.txt\n@@\n-a\n+b\n*** End Patch";
  expect(await call(tools, "apply_patch", { patch })).toContain(
    `${sizes} apply_patch handles (${bytes(MAX_STREAM_EDIT_BYTES)}). Use a command (e.g. sed) instead.`,
  );
});
