import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { createReadStream, promises as fsp, writeFileSync } from "node:fs";
import path from "node:path";
import { createTools } from "../../src/tools/index.js";
import { formatSize } from "../../src/workspace/files.js";
import { applyHunks } from "../../src/workspace/patch-apply.js";
import { parsePatch } from "../../src/workspace/patch-parse.js";
import { makeTempDir } from "../helpers/tmp.js";

/**
 * apply_patch on files over the 10 MB in-memory limit (issue 30): streamed, the same bytes as the
 * in-memory rules give, refused without a write when a hunk does not apply, memory bounded, and
 * atomic: killed while it writes the copy, the file is as it was. Timing is the bench's.
 */

let tmp: ReturnType<typeof makeTempDir>;
beforeEach(() => {
  tmp = makeTempDir();
});
afterEach(() => tmp.cleanup());

const config = { configurable: { thread_id: "t1" } };
const P = (...lines: string[]) => ["*** Begin Patch", "*** Update File: big.txt", ...lines, "*** End Patch"].join("\n");

async function sha256(p: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(p)) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

/** `lines` CRLF lines of 64 bytes, numbered, and a last line without a line end. */
function bigText(lines: number): string {
  const out: string[] = [];
  for (let i = 1; i <= lines; i++) out.push(`row ${String(i).padStart(8, "0")} ${"-".repeat(47)}\r\n`);
  return `${out.join("")}the last line`;
}
const row = (i: number) => `row ${String(i).padStart(8, "0")} ${"-".repeat(47)}`;

test("a 12 MB CRLF file without a final newline: hunks at start, middle and end, streamed, the in-memory rules' bytes", async () => {
  const lines = 200_000;
  const content = bigText(lines);
  const file = path.join(tmp.dir, "big.txt");
  writeFileSync(file, content);
  const patch = P(
    "@@",
    `-${row(1)}`,
    "+the first row",
    ` ${row(2)}`,
    "@@",
    ` ${row(100_000)}`,
    `-${row(100_001)}`,
    "+a middle row",
    "+and another",
    ` ${row(100_002)}`,
    "@@",
    ` ${row(lines)}`,
    "-the last line",
    "+the new last line",
  );
  const [op] = parsePatch(patch);
  const expected = await applyHunks(content, op?.kind === "update" ? op.hunks : [], "big.txt");
  const tools = createTools({ workspace: tmp.dir, editTool: "both", env: { PATH: "/nonexistent" } });
  await tools.read_file.invoke({ filePath: "big.txt", limit: 1 }, config);
  expect(await tools.apply_patch.invoke({ input: patch }, config)).toBe(
    `Applied the patch to 1 file:\nM big.txt (3 hunks; ${formatSize(Buffer.byteLength(content))}, streamed)`,
  );
  expect(expected.ok && (await fsp.readFile(file, "utf8")) === expected.text).toBe(true);
  const after = await fsp.readFile(file, "utf8");
  expect(after.startsWith(`the first row\r\n${row(2)}\r\n`)).toBe(true);
  expect(after.includes(`${row(100_000)}\r\na middle row\r\nand another\r\n${row(100_002)}\r\n`)).toBe(true);
  expect(after.endsWith(`${row(lines)}\r\nthe new last line`)).toBe(true);
  expect((await fsp.readdir(tmp.dir)).sort()).toEqual(["big.txt"]);

  // Context that is not in the file: refused with a sentence, nothing written.
  const before = await sha256(file);
  expect(await tools.apply_patch.invoke({ input: P("@@", ` ${row(5)}`, `-${row(7)}`, "+x") }, config)).toBe(
    "Error: hunk 1 of big.txt (patch line 3): its context and removed lines were not found. Read the file again and copy the context lines exactly. Nothing was written.",
  );
  expect(await sha256(file)).toBe(before);
  // Deleting or moving a big file is left to a command.
  expect(
    await tools.apply_patch.invoke({ input: "*** Begin Patch\n*** Delete File: big.txt\n*** End Patch" }, config),
  ).toBe(
    `Error: big.txt is ${formatSize(Buffer.byteLength(content))}: apply_patch only updates a file over 10 MB in place (patch line 2). Delete or move it with a command (rm, mv). Nothing was written.`,
  );
}, 120_000);

/** A file of about `mb` MB with a line to patch near its end, and the patch file. */
async function bigFixture(mb: number): Promise<{ file: string; patchFile: string; size: number }> {
  const file = path.join(tmp.dir, "big.txt");
  const block = Buffer.from(`${"0123456789".repeat(6)}abc\n`.repeat(16_384)); // 1 MiB
  const handle = await fsp.open(file, "w");
  for (let i = 0; i < mb; i++) await handle.write(block);
  await handle.write("tail one\nERROR needle here\ntail three\n");
  await handle.close();
  const patchFile = path.join(tmp.dir, "patch.txt");
  writeFileSync(patchFile, P("@@", " tail one", "-ERROR needle here", "+ERROR needle patched", " tail three"));
  return { file, patchFile, size: (await fsp.stat(file)).size };
}

const runner = () => [
  path.join(process.cwd(), "node_modules", ".bin", "tsx"),
  path.join(process.cwd(), "__tests__", "helpers", "patch-big-run.ts"),
];

test("a patch near the end of a 200 MB file is streamed with memory bounded", async () => {
  const { file, patchFile, size } = await bigFixture(200);
  const [tsx, script] = runner();
  const run = spawnSync(tsx!, [script!, tmp.dir, "big.txt", patchFile], { encoding: "utf8", timeout: 110_000 });
  const out = JSON.parse(run.stdout) as { result: string; rssGrowthBytes: number };
  expect(out.result).toBe(`Applied the patch to 1 file:\nM big.txt (1 hunk; ${formatSize(size)}, streamed)`);
  // A chunk, the checkpoints and the copy's buffer: far below the file's size.
  expect(out.rssGrowthBytes).toBeLessThan(64 * 1024 * 1024);
  const handle = await fsp.open(file, "r");
  const tail = Buffer.alloc(45);
  await handle.read(tail, 0, tail.length, size + 3 - tail.length);
  await handle.close();
  expect(tail.toString()).toBe("abc\ntail one\nERROR needle patched\ntail three\n");
}, 120_000);

test("killed (SIGKILL) while it writes the patched copy, the big file is exactly as it was", async () => {
  const { file, patchFile } = await bigFixture(200);
  const before = await sha256(file);
  const [tsx, script] = runner();
  const child = spawn(tsx!, [script!, tmp.dir, "big.txt", patchFile], { stdio: "ignore" });
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
  // Wait until the copy is being written (a temp file beside it with some MB in it), then kill.
  const deadline = Date.now() + 100_000;
  let killedMidWrite = false;
  while (Date.now() < deadline && child.exitCode === null) {
    const temps = (await fsp.readdir(tmp.dir)).filter((n) => n.endsWith(".tmp"));
    const sizes = await Promise.all(
      temps.map((n) =>
        fsp.stat(path.join(tmp.dir, n)).then(
          (s) => s.size,
          () => 0,
        ),
      ),
    );
    if (sizes.some((s) => s > 8 * 1024 * 1024)) {
      child.kill("SIGKILL");
      killedMidWrite = true;
      break;
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  await exited;
  expect(killedMidWrite).toBe(true);
  expect(await sha256(file)).toBe(before);
}, 120_000);
