import { chmodSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import {
  binaryKindFromContent,
  binaryKindFromExtension,
  countLines,
  countTextLines,
  detectBinary,
  formatSize,
  readLineWindow,
  writeFileAtomic,
  type LineWindowRequest,
} from "../../src/workspace/files.js";
import { makeTempDir } from "../helpers/tmp.js";

let dir: string;
let cleanup: () => void;
beforeEach(() => ({ dir, cleanup } = makeTempDir()));
afterEach(() => cleanup());

const file = (name: string, content: string | Buffer) => {
  const p = path.join(dir, name);
  writeFileSync(p, content);
  return p;
};

const request = (startLine: number, maxLines: number, extra: Partial<LineWindowRequest> = {}): LineWindowRequest => ({
  startLine,
  maxLines,
  maxLineChars: 2000,
  maxBytes: 1024 * 1024,
  ...extra,
});

describe("countTextLines / countLines", () => {
  it.each([
    ["", 0],
    ["a", 1],
    ["a\n", 1],
    ["a\nb", 2],
    ["a\nb\n", 2],
    ["\n", 1],
    ["a\n\n", 2],
    ["a\r\nb\r\n", 2],
  ])("%j has %i lines", async (text, lines) => {
    expect(countTextLines(text)).toBe(lines);
    expect(await countLines(file("f.txt", text))).toBe(lines);
  });
});

describe("readLineWindow", () => {
  // ~3.5 MB: several 1 MB read chunks, so lines straddle chunk boundaries both ways.
  const LINE_COUNT = 300_000;
  const lines = Array.from({ length: LINE_COUNT }, (_, i) => `line ${i + 1}${"-".repeat(i % 7)}`);

  it("returns exactly the requested lines for windows near the start, middle and end", async () => {
    const p = file("many.txt", lines.join("\n") + "\n");
    for (const start of [1, 2, 99_999, 149_999, 150_001, 200_000, 299_990, 300_000]) {
      const window = await readLineWindow(p, request(start, 20));
      expect(window.totalLines).toBe(LINE_COUNT);
      expect(window.lines.map((l) => l.text)).toEqual(lines.slice(start - 1, start - 1 + 20));
    }
  });

  it("handles a last line without a newline from both directions", async () => {
    const p = file("nonl.txt", "one\ntwo\nthree\nfour");
    expect((await readLineWindow(p, request(1, 2))).lines.map((l) => l.text)).toEqual(["one", "two"]);
    expect((await readLineWindow(p, request(3, 10))).lines.map((l) => l.text)).toEqual(["three", "four"]);
    expect((await readLineWindow(p, request(4, 10))).lines.map((l) => l.text)).toEqual(["four"]);
  });

  it("keeps empty lines and reports nothing past the end", async () => {
    const p = file("blank.txt", "a\n\n\nb\n");
    const all = await readLineWindow(p, request(1, 10));
    expect(all.lines.map((l) => l.text)).toEqual(["a", "", "", "b"]);
    expect(await readLineWindow(p, request(5, 10))).toEqual({ lines: [], totalLines: 4, size: 6 });
  });

  it("strips CR of CRLF endings and replaces invalid UTF-8", async () => {
    const p = file("mixed.txt", Buffer.concat([Buffer.from("a\r\nb\r\n"), Buffer.from([0x63, 0xff, 0x64, 0x0a])]));
    const window = await readLineWindow(p, request(1, 10));
    expect(window.lines).toEqual([
      { text: "a", chars: 1, truncated: false },
      { text: "b", chars: 1, truncated: false },
      { text: "c\uFFFDd", chars: 3, truncated: false },
    ]);
  });

  it("cuts long lines by characters, not bytes, and counts the whole line", async () => {
    const p = file("long.txt", `${"é".repeat(30)}\n${"😀".repeat(12)}\nshort\n`);
    const window = await readLineWindow(p, request(1, 3, { maxLineChars: 10 }));
    expect(window.lines).toEqual([
      { text: "é".repeat(10), chars: 30, truncated: true },
      { text: "😀".repeat(10), chars: 12, truncated: true },
      { text: "short", chars: 5, truncated: false },
    ]);
  });

  it("reads a single 5 MB line without keeping it", async () => {
    const p = file("giant.txt", `${"x".repeat(5_000_000)}\r\nafter\n`);
    const window = await readLineWindow(p, request(1, 2));
    expect(window.lines[0]).toEqual({ text: "x".repeat(2000), chars: 5_000_000, truncated: true });
    expect(window.lines[1]).toEqual({ text: "after", chars: 5, truncated: false });
  });

  it("stops collecting once the byte budget is passed", async () => {
    const p = file("budget.txt", "0123456789\n".repeat(100));
    const window = await readLineWindow(p, request(1, 100, { maxBytes: 50 }));
    // 11 bytes a line: the fifth line passes 50, and collecting stops there.
    expect(window.lines).toHaveLength(5);
  });
});

describe("binary detection", () => {
  it("knows binary extensions whatever the case", () => {
    expect(binaryKindFromExtension("a/b/logo.PNG")).toBe("PNG image");
    expect(binaryKindFromExtension("x.wasm")).toBe("WebAssembly module");
    expect(binaryKindFromExtension("x.sqlite")).toBe("SQLite database");
    expect(binaryKindFromExtension("x.ts")).toBeUndefined();
    expect(binaryKindFromExtension("Makefile")).toBeUndefined();
  });

  it("calls content with a NUL binary and names it by magic number", () => {
    expect(binaryKindFromContent(Buffer.from("plain text\n"))).toBeUndefined();
    expect(binaryKindFromContent(Buffer.from([0x61, 0x00, 0x62]))).toBe("binary data");
    expect(binaryKindFromContent(Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0x02, 0x01, 0x00]))).toBe("ELF executable");
  });

  it("sniffs only the first 8 KB", async () => {
    expect(
      await detectBinary(file("late-nul", Buffer.concat([Buffer.alloc(8192, 0x61), Buffer.from([0])]))),
    ).toBeUndefined();
    expect(await detectBinary(file("early-nul", Buffer.concat([Buffer.alloc(8191, 0x61), Buffer.from([0])])))).toBe(
      "binary data",
    );
    expect(await detectBinary(file("fake.png", "just text"))).toBe("PNG image");
  });
});

describe("formatSize", () => {
  it.each([
    [0, "0 B"],
    [1023, "1023 B"],
    [1024, "1.0 KB"],
    [1234, "1.2 KB"],
    [20 * 1024, "20 KB"],
    [5 * 1024 * 1024, "5.0 MB"],
    [3 * 1024 ** 3, "3.0 GB"],
  ])("%i -> %s", (bytes, text) => expect(formatSize(bytes)).toBe(text));
});

describe("writeFileAtomic", () => {
  const leftovers = () => readdirSync(dir).filter((n) => n.endsWith(".tmp"));

  it("creates, then replaces, keeping the mode, with no temp file left", async () => {
    const p = path.join(dir, "a.sh");
    expect(await writeFileAtomic(p, "echo 1\n")).toEqual({ created: true, bytes: 7 });
    chmodSync(p, 0o751);
    expect(await writeFileAtomic(p, "echo é\n")).toEqual({ created: false, bytes: 8 });
    expect(readFileSync(p, "utf8")).toBe("echo é\n");
    expect(statSync(p).mode & 0o777).toBe(0o751);
    expect(leftovers()).toEqual([]);
  });

  it("leaves the original intact and removes the temp file when the rename fails", async () => {
    const p = file("keep.txt", "original\n");
    let tempSeen = "";
    const failingRename = async (from: string) => {
      tempSeen = from;
      throw Object.assign(new Error("simulated crash"), { code: "EIO" });
    };
    await expect(writeFileAtomic(p, "new content\n", { rename: failingRename })).rejects.toThrow("simulated crash");
    expect(path.dirname(tempSeen)).toBe(dir); // same directory, so the real rename is atomic
    expect(readFileSync(p, "utf8")).toBe("original\n");
    expect(readdirSync(dir)).toEqual(["keep.txt"]);
  });

  it("refuses a directory", async () => {
    mkdirSync(path.join(dir, "d"));
    await expect(writeFileAtomic(path.join(dir, "d"), "x")).rejects.toMatchObject({ code: "EISDIR" });
    expect(leftovers()).toEqual([]);
  });
});
