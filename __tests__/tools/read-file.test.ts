import { promises as fsp, linkSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { inToolset } from "../../src/tools/index.js";

type AgentTool = StructuredToolInterface;
import path from "node:path";
import { createToolContext } from "../../src/tools/context.js";
import { readFileTool, MAX_READ_BYTES } from "../../src/tools/read-file.js";
import { makeTempDir } from "../helpers/tmp.js";

let dir: string;
let cleanup: () => void;
let readFile: AgentTool;

beforeEach(() => {
  ({ dir, cleanup } = makeTempDir());
  // The read tool never touches processes; an empty registry stands in for it.
  readFile = inToolset(readFileTool(createToolContext({ workspace: dir }, {} as never)));
});
afterEach(() => cleanup());

const write = (name: string, content: string | Buffer) => {
  mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
  writeFileSync(path.join(dir, name), content);
};
const read = async (args: { filePath: string; offset?: number; limit?: number }) =>
  (await readFile.invoke(args)) as string;
const numbered = (from: number, texts: string[]) =>
  texts.map((t, i) => `${String(from + i).padStart(6)}\t${t}`).join("\n");
const lineList = (count: number, from = 1) => Array.from({ length: count }, (_, i) => `line ${from + i}`);

describe("read_file output", () => {
  it("numbers lines like cat -n and ends with a footer", async () => {
    write("a.txt", "alpha\nbeta\ngamma\n");
    expect(await read({ filePath: "a.txt" })).toBe(
      "     1\talpha\n     2\tbeta\n     3\tgamma\n\n[Lines 1-3 of 3, end of file.]",
    );
  });

  it("reads a last line without a final newline", async () => {
    write("a.txt", "one\ntwo");
    expect(await read({ filePath: "a.txt" })).toBe("     1\tone\n     2\ttwo\n\n[Lines 1-2 of 2, end of file.]");
  });

  it("shows 2000 lines by default and says where to continue", async () => {
    write("big.txt", lineList(2500).join("\n") + "\n");
    const first = await read({ filePath: "big.txt" });
    expect(first).toBe(`${numbered(1, lineList(2000))}\n\n[Lines 1-2000 of 2500. Continue with offset 2001.]`);
    const second = await read({ filePath: "big.txt", offset: 2001 });
    expect(second).toBe(`${numbered(2001, lineList(500, 2001))}\n\n[Lines 2001-2500 of 2500, end of file.]`);
  });

  it("honours offset and limit, and lowers a limit above the maximum", async () => {
    write("ten.txt", lineList(10).join("\n"));
    expect(await read({ filePath: "ten.txt", offset: 5, limit: 3 })).toBe(
      `${numbered(5, ["line 5", "line 6", "line 7"])}\n\n[Lines 5-7 of 10. Continue with offset 8.]`,
    );
    expect(await read({ filePath: "ten.txt", offset: 9, limit: 3 })).toBe(
      `${numbered(9, ["line 9", "line 10"])}\n\n[Lines 9-10 of 10, end of file.]`,
    );
    write("many.txt", lineList(3000).join("\n"));
    expect(await read({ filePath: "many.txt", limit: 100_000 })).toMatch(
      /\[Lines 1-2000 of 3000\. Continue with offset 2001\.\]$/,
    );
  });

  it("explains an offset past the end", async () => {
    write("ten.txt", lineList(10).join("\n"));
    expect(await read({ filePath: "ten.txt", offset: 11 })).toBe(
      'Offset 11 is past the end of "ten.txt", which has 10 lines. Use an offset from 1 to 10.',
    );
    write("one.txt", "x\n");
    expect(await read({ filePath: "one.txt", offset: 3 })).toBe(
      'Offset 3 is past the end of "one.txt", which has 1 line. Use an offset from 1 to 1.',
    );
  });

  it("answers offsets and limits below 1 with a sentence, and rejects fractions", async () => {
    write("a.txt", "a\n");
    const refused = (line: string) =>
      `Error: read_file got invalid arguments:\n- ${line}.\nThe call was not run: call it again with valid arguments.`;
    expect(await read({ filePath: "a.txt", offset: 0 })).toBe(
      refused("offset: offset must be a whole line number, 1 or more"),
    );
    expect(await read({ filePath: "a.txt", offset: 1.5 })).toBe(
      refused("offset: offset must be a whole line number, 1 or more"),
    );
    expect(await read({ filePath: "a.txt", limit: -1 })).toBe(
      refused("limit: limit must be a whole number of lines, 1 or more"),
    );
  });

  it("cuts lines longer than 2000 characters with a marker", async () => {
    write("min.js", `${"a".repeat(12_345)}\nnext\n`);
    expect(await read({ filePath: "min.js" })).toBe(
      `     1\t${"a".repeat(2000)}… [line truncated, 12345 characters]\n     2\tnext\n\n[Lines 1-2 of 2, end of file.]`,
    );
  });

  it("counts the characters of a long line mixing ASCII and multi-byte text", async () => {
    write("mixed.js", `${"é".repeat(5000)}${"a".repeat(200_000)}${"€".repeat(3000)}\nnext\n`);
    expect(await read({ filePath: "mixed.js" })).toBe(
      `     1\t${"é".repeat(2000)}… [line truncated, 208000 characters]\n     2\tnext\n\n[Lines 1-2 of 2, end of file.]`,
    );
  });

  it("caps the output near 50 KB at the last whole line and says so", async () => {
    write(
      "wide.txt",
      lineList(2000)
        .map((l) => l.padEnd(100, "."))
        .join("\n"),
    );
    const out = await read({ filePath: "wide.txt" });
    // Each numbered line is 6 + 1 + 100 bytes plus its newline: 474 of them fit in 51200 bytes.
    const body = out.slice(0, out.lastIndexOf("\n\n"));
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(MAX_READ_BYTES);
    expect(body.split("\n")).toHaveLength(474);
    expect(body.split("\n")[473]).toBe(`   474\t${"line 474".padEnd(100, ".")}`);
    expect(out.slice(out.lastIndexOf("\n\n") + 2)).toBe(
      "[Lines 1-474 of 2000; output capped at 50 KB. Continue with offset 475.]",
    );
  });

  it("strips CR from CRLF lines and survives invalid UTF-8", async () => {
    write("dos.txt", Buffer.concat([Buffer.from("one\r\ntwo\r\n"), Buffer.from([0x62, 0xe9, 0x65, 0x0d, 0x0a])]));
    expect(await read({ filePath: "dos.txt" })).toBe(
      "     1\tone\n     2\ttwo\n     3\tb\uFFFDe\n\n[Lines 1-3 of 3, end of file.]",
    );
  });

  it("reads the last lines of a 200 MB file exactly", async () => {
    // 200 blocks of 1 MiB of identical 64-byte lines, then a distinct tail.
    const filler = `${"0123456789".repeat(6)}abc`;
    const block = Buffer.from(`${filler}\n`.repeat(16_384));
    expect(block.length).toBe(1024 * 1024);
    const handle = await fsp.open(path.join(dir, "huge.log"), "w");
    for (let i = 0; i < 200; i++) await handle.write(block);
    await handle.write("tail one\ntail two\ntail three\n");
    await handle.close();
    const total = 200 * 16_384 + 3;
    expect(await read({ filePath: "huge.log", offset: total - 1 })).toBe(
      `${numbered(total - 1, ["tail two", "tail three"])}\n\n[Lines ${total - 1}-${total} of ${total}, end of file.]`,
    );
    expect(await read({ filePath: "huge.log", offset: total - 3, limit: 2 })).toBe(
      `${numbered(total - 3, [filler, "tail one"])}\n\n[Lines ${total - 3}-${total - 2} of ${total}. Continue with offset ${total - 1}.]`,
    );
  });
});

describe("read_file refusals and special files", () => {
  it("describes binary files by NUL byte, magic number and extension", async () => {
    write("data.txt", Buffer.from("abc\0def"));
    expect(await read({ filePath: "data.txt" })).toBe(
      '"data.txt" is a binary file (binary data, 7 B); read_file shows text only.',
    );
    write(
      "blob",
      Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0]), Buffer.alloc(2048)]),
    );
    expect(await read({ filePath: "blob" })).toBe(
      '"blob" is a binary file (PNG image, 2.0 KB); read_file shows text only.',
    );
    write("assets/font.woff2", "wOF2 looks like text");
    expect(await read({ filePath: "assets/font.woff2" })).toBe(
      '"assets/font.woff2" is a binary file (web font, 20 B); read_file shows text only.',
    );
  });

  it("says when a file is missing, a directory or empty", async () => {
    expect(await read({ filePath: "nope.txt" })).toBe(
      '"nope.txt" does not exist. List the parent directory to see what is there.',
    );
    mkdirSync(path.join(dir, "src"));
    expect(await read({ filePath: "src" })).toBe('"src" is a directory, use list_directory to see what it contains.');
    write("empty.txt", "");
    expect(await read({ filePath: "empty.txt" })).toBe('"empty.txt" is empty (0 bytes).');
  });

  it("refuses a file with several hard links", async () => {
    write("a.txt", "secret\n");
    linkSync(path.join(dir, "a.txt"), path.join(dir, "b.txt"));
    expect(await read({ filePath: "a.txt" })).toMatch(/^Refused: "a\.txt" has 2 hard links/);
  });

  it("reads through a symlink inside the workspace", async () => {
    write("real.txt", "hello\n");
    symlinkSync("real.txt", path.join(dir, "alias.txt"));
    expect(await read({ filePath: "alias.txt" })).toBe("     1\thello\n\n[Lines 1-1 of 1, end of file.]");
  });

  it.each(["../x", "/etc/passwd", "link-to-etc/passwd", "~/.bashrc"])(
    "refuses %s as outside the workspace",
    async (p) => {
      symlinkSync("/etc", path.join(dir, "link-to-etc"));
      expect(await read({ filePath: p })).toBe(
        `Refused: "${p}" is outside the workspace. Use a path inside the workspace (relative paths are resolved against its root).`,
      );
    },
  );
});
