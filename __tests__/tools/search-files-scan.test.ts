import { compilePattern } from "../../src/tools/search-files.js";
import {
  literalOf,
  type Matcher,
  requiredLiteral,
  searchStream,
  searchText,
  wholeTextPattern,
} from "../../src/tools/search-files-scan.js";

/**
 * The streamed search of big files (issue 30) against the whole-text search of small ones: the
 * same lines, numbers and context, whatever the chunking, with and without a literal prefilter.
 */

test("requiredLiteral finds a run every match must contain, or gives up when none is certain", () => {
  const cases: Array<[string, string | undefined]> = [
    ["scaleNeedleToken", "scaleNeedleToken"],
    ["function\\s+handle\\w+", "function"],
    ["createTools\\(", "createTools("],
    ["^import .* from", "import "],
    ["colou?r", "colo"],
    ["ab*cde", "cde"],
    ["ab+cd", "ab"],
    ["a(b|c)defg", "defg"],
    ["[abc]hello[xyz]", "hello"],
    ["x{0,2}yz", "yz"],
    ["TODO|FIXME", undefined],
    ["foo\\x41barbaz", undefined],
    ["\\d+\\.\\d+", "."],
    ["(unclosed", undefined],
    [".*", undefined],
  ];
  expect(cases.map(([source]) => [source, requiredLiteral(source)])).toEqual(cases);
});

test("literalOf: bytes when case matters, a folded ASCII regex when not, none for short or non-ASCII folding", () => {
  expect(literalOf(/needle/)).toEqual({ bytes: Buffer.from("needle") });
  expect(literalOf(/néedle/)).toEqual({ bytes: Buffer.from("néedle") });
  expect(literalOf(/ne.dl/i)).toBeUndefined();
  expect(literalOf(/néedle/i)).toBeUndefined();
  const folded = literalOf(/needle\(/i);
  expect(folded && "folded" in folded ? folded.folded.source : "").toBe("needle\\(");
});

/** A deterministic pseudo-random text with the words the patterns look for, CRLF and non-ASCII lines among them. */
function sampleText(seed: number, lines: number): string {
  let x = seed;
  const rand = (n: number) => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return x % n;
  };
  const words = ["needle", "Needle", "NEEDLE", "neeedle", "hay", "stack", "é", "naïve", "other", "", "  "];
  const out: string[] = [];
  for (let i = 0; i < lines; i++) {
    const n = rand(6);
    const line = Array.from({ length: n }, () => words[rand(words.length)]).join(" ");
    out.push(line + (rand(5) === 0 ? "\r\n" : "\n"));
  }
  return out.join("") + (seed % 2 === 0 ? "last needle without newline" : "");
}

function readerOf(data: Buffer) {
  return async (buf: Buffer, position: number) =>
    data.copy(buf, 0, position, Math.min(data.length, position + buf.length));
}

test("the streamed search finds exactly what the whole-text search finds, at any chunk size", async () => {
  const patterns = [
    "needle",
    "ne+dle",
    "n.edle",
    "needle$",
    "^needle",
    "\\bneedle\\b",
    "naïve",
    "needle|other",
    "hay stack",
  ];
  for (const seed of [1, 2]) {
    const text = sampleText(seed, 250);
    const data = Buffer.from(text, "utf8");
    for (const pattern of patterns)
      for (const caseSensitive of [false, true])
        for (const context of [0, 2]) {
          const re = compilePattern(pattern, caseSensitive);
          const expected = searchText(text, re, context);
          for (const withLiteral of [true, false])
            for (const chunk of [96, 4096]) {
              const literal = withLiteral ? literalOf(re) : undefined;
              const m: Matcher = { re, whole: wholeTextPattern(re), context, ...(literal ? { literal } : {}) };
              const got = await searchStream(readerOf(data), m, 1_000_000, chunk);
              const label = `${pattern} /${re.flags}, context ${context}, chunk ${chunk}, literal ${withLiteral}, seed ${seed}`;
              expect([label, got.lines && [...got.lines.entries()].sort((a, b) => a[0] - b[0])]).toEqual([
                label,
                expected && [...expected.entries()].sort((a, b) => a[0] - b[0]),
              ]);
              expect([label, got.matches]).toEqual([
                label,
                expected ? [...expected.values()].filter((l) => l.match).length : 0,
              ]);
            }
        }
  }
});

test("the streamed search stops at its budget and skips binary content", async () => {
  const text = "a needle\n".repeat(50);
  const re = compilePattern("needle", false);
  const m: Matcher = { re, whole: wholeTextPattern(re), context: 0, literal: literalOf(re)! };
  const got = await searchStream(readerOf(Buffer.from(text)), m, 7, 64);
  expect(got.stoppedEarly).toBe(true);
  expect(got.matches).toBe(7);
  expect([...got.lines!.keys()]).toEqual([1, 2, 3, 4, 5, 6, 7]);
  const binary = Buffer.concat([Buffer.from("needle\n"), Buffer.from([0, 1, 2]), Buffer.from("\nneedle\n")]);
  expect(await searchStream(readerOf(binary), m, 100, 64)).toEqual({
    lines: undefined,
    matches: 0,
    stoppedEarly: false,
  });
});

test("a line longer than a chunk is one matching line, shown with the whole line's length and its own context", async () => {
  const x = (n: number) => "x".repeat(n);
  // Chunks of 64 bytes: line 2 (306 bytes) is searched in five pieces, two of them matching.
  const text = `short\n${x(150)}needle${"y".repeat(44)}needle${"z".repeat(100)}\nafter\nnext\n`;
  const shownPiece = `…${x(22)}needle${"y".repeat(36)}`;
  for (const withLiteral of [true, false]) {
    const re = compilePattern("needle", false);
    const literal = withLiteral ? literalOf(re) : undefined;
    const m = (context: number): Matcher => ({
      re,
      whole: wholeTextPattern(re),
      context,
      ...(literal ? { literal } : {}),
    });
    expect(await searchStream(readerOf(Buffer.from(text)), m(1), 100, 64)).toEqual({
      lines: new Map([
        [1, { text: "short", match: false }],
        [2, { text: `${shownPiece}… [line has 306 bytes]`, match: true }],
        [3, { text: "after", match: false }],
      ]),
      matches: 1,
      stoppedEarly: false,
    });
    // The line's last piece matching: nothing after it; the budget ending inside the line: "over".
    const tail = `short\n${x(150)}needle${x(6)}\n`;
    expect((await searchStream(readerOf(Buffer.from(tail)), m(0), 100, 64)).lines).toEqual(
      new Map([[2, { text: `…${x(22)}needle${x(6)} [line has 162 bytes]`, match: true }]]),
    );
    const stopped = await searchStream(readerOf(Buffer.from(`needle ${x(400)}\n`)), m(0), 1, 64);
    expect(stopped).toEqual({
      lines: new Map([[1, { text: `needle ${x(57)}… [line has over 64 bytes]`, match: true }]]),
      matches: 1,
      stoppedEarly: true,
    });
  }
});
