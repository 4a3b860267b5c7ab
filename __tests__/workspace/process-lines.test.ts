import { Readable } from "node:stream";
import { boundedLines, CUT_LINE_HEAD_BYTES, type CutLine, programLines } from "../../src/workspace/process-lines.js";

/**
 * A helper program's output is read line by line with a bound on a line's length: a longer line
 * comes cut, as soon as it passes the bound, and the rest of it is skipped, so whatever the
 * program prints the memory it takes stays bounded and nothing is thrown out of an event handler.
 */

async function all(lines: AsyncIterable<string | CutLine>): Promise<Array<string | CutLine>> {
  const out: Array<string | CutLine> = [];
  for await (const line of lines) out.push(line);
  return out;
}

const chunks = (...parts: string[]) => Readable.from(parts.map((p) => Buffer.from(p)));

test("lines up to the bound come whole, across chunks; a longer one comes cut and its rest is skipped", async () => {
  expect(await all(boundedLines(chunks("one\ntw", "o\n", "0123456789abcdef", "ghij\nafter\nlast"), 10))).toEqual([
    "one",
    "two",
    { head: "0123456789abcdef" },
    "after",
    "last",
  ]);
  // Exactly the bound is whole; one byte more is cut.
  expect(await all(boundedLines(chunks("0123456789\n01234567890\nx\n"), 10))).toEqual([
    "0123456789",
    { head: "01234567890" },
    "x",
  ]);
  // The head kept of a cut line is at most CUT_LINE_HEAD_BYTES.
  const long = "y".repeat(CUT_LINE_HEAD_BYTES * 3);
  expect(await all(boundedLines(chunks(`${long}\nz\n`), 1000))).toEqual([
    { head: "y".repeat(CUT_LINE_HEAD_BYTES) },
    "z",
  ]);
});

test("a program's line over the bound: the reader keeps going, and leaving early stops the program", async () => {
  const script = `process.stdout.write("a\\n" + "x".repeat(5_000_000) + "\\nb\\n");`;
  const run = programLines(process.execPath, ["-e", script], { cwd: process.cwd(), maxLineBytes: 1000 });
  const got = await all(run.lines);
  expect(got[0]).toBe("a");
  expect(typeof got[1]).toBe("object");
  expect((got[1] as CutLine).head).toMatch(/^x{1000,}$/);
  expect(got[2]).toBe("b");
  expect(got).toHaveLength(3);
  expect(await run.exited).toBe(0);

  // A program that never ends: leaving the loop at the cut line ends it.
  const endless = programLines(process.execPath, ["-e", `for (;;) process.stdout.write("z".repeat(65536));`], {
    cwd: process.cwd(),
    maxLineBytes: 100_000,
  });
  for await (const line of endless.lines) {
    expect(typeof line).toBe("object");
    break;
  }
  expect(await endless.exited).toBe(null);
});

test("a program that cannot start: no lines, exit null, nothing thrown", async () => {
  const run = programLines("/nonexistent/program", [], { cwd: process.cwd(), onStderrLine: () => undefined });
  expect(await all(run.lines)).toEqual([]);
  expect(await run.exited).toBe(null);
});
