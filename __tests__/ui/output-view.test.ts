import { expect, test } from "@jest/globals";
import { PassThrough } from "node:stream";
import { createPrettyRenderer } from "../../src/ui/render.js";
import { createOutputView, TRACE_HEAD_CHARS, TRACE_HEAD_LINES, TRACE_TAIL_LINES } from "../../src/ui/output-view.js";

/**
 * The trace's view of a call's live output: the first lines as they come, then only a count and
 * the last lines at the end, with where the whole is; a small output is shown whole.
 */

const numbered = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => `line ${from + i}\n`).join("");

test("a small output is shown whole, nothing hidden", () => {
  const view = createOutputView();
  expect(view.take("one\ntwo\n")).toEqual({ show: "one\ntwo\n", filled: false });
  expect(view.take("three")).toEqual({ show: "three", filled: false });
  expect(view.hidden()).toBeUndefined();
});

test("past the line budget: the head is cut at a line end, the rest counted, its last lines kept", () => {
  const view = createOutputView();
  const first = view.take(numbered(1, 30));
  expect(first).toEqual({ show: numbered(1, 30), filled: false });
  const second = view.take(numbered(31, 100));
  expect(second).toEqual({ show: numbered(31, TRACE_HEAD_LINES), filled: true });
  expect(view.take(numbered(101, 5000))).toEqual({ show: "", filled: false });
  expect(view.hidden()).toEqual({
    lines: 5000 - TRACE_HEAD_LINES,
    chars: numbered(TRACE_HEAD_LINES + 1, 5000).length,
    tail: Array.from({ length: TRACE_TAIL_LINES }, (_, i) => `line ${5000 - TRACE_TAIL_LINES + 1 + i}`),
  });
});

test("one huge line is cut by the character budget; an unfinished last line is kept as it is", () => {
  const view = createOutputView();
  const { show, filled } = view.take("x".repeat(TRACE_HEAD_CHARS * 3));
  expect(show).toBe("x".repeat(TRACE_HEAD_CHARS));
  expect(filled).toBe(true);
  view.take("\nlast words");
  const hidden = view.hidden()!;
  expect(hidden.chars).toBe(TRACE_HEAD_CHARS * 2 + "\nlast words".length);
  expect(hidden.tail.at(-1)).toBe("last words");
});

test("the trace of a 50 MB output is a few kilobytes: head, a cut line, the count, the last lines, where the whole is", () => {
  const out = new PassThrough();
  let written = "";
  out.on("data", (d: Buffer) => (written += d.toString()));
  const r = createPrettyRenderer({ color: false, spinner: false, verbose: false, out });
  r.event({ type: "tool_call", step: 1, id: "c1", name: "execute_command", args: { command: "big" } });
  const chunk = "0123456789".repeat(6_553) + "\n";
  for (let i = 0; i < 800; i++) r.event({ type: "tool_output", id: "c1", stream: "stdout", text: chunk });
  r.event({ type: "tool_output", id: "c1", stream: "stdout", text: "THE-END\n" });
  const saved = "/state/output/command-1.log";
  r.event({
    type: "tool_result",
    step: 1,
    id: "c1",
    name: "execute_command",
    status: "success",
    durationMs: 5,
    content: `Exit code: 0\nhead\n[... 790 lines (52,000,000 characters) omitted. Full output (801 lines) saved to ${saved}; page through it with read_file.]\ntail\n`,
  });
  expect(written.length).toBeLessThan(20_000);
  const lines = written.split("\n");
  expect(lines).toContain("  │ … more output, not shown here: its last lines follow when the call ends");
  expect(lines.filter((l) => l.startsWith("  │ 0123456789")).length).toBeLessThanOrEqual(
    TRACE_HEAD_LINES + TRACE_TAIL_LINES,
  );
  // The last 2,000 characters: the end of the last long line, and the final one.
  expect(written).toContain("  │ … 801 more lines (50.0 MB) not shown; the last 2:\n");
  expect(written).toContain(
    "  │ THE-END\n  │ … the whole output is saved in /state/output/command-1.log\n  ✓ execute_command",
  );
});

test("a cut-off output whose result holds all of it, or only part of it, says so", () => {
  const run = (content: string) => {
    const out = new PassThrough();
    let written = "";
    out.on("data", (d: Buffer) => (written += d.toString()));
    const r = createPrettyRenderer({ color: false, spinner: false, verbose: false, out });
    r.event({ type: "tool_output", id: "c1", stream: "stdout", text: numbered(1, 100) });
    r.event({
      type: "tool_result",
      step: 1,
      id: "c1",
      name: "execute_command",
      status: "success",
      durationMs: 5,
      content,
    });
    return written;
  };
  expect(run(numbered(1, 100))).toContain(
    "  │ … the whole output is in the call's result, which the model reads (--json shows every line)\n",
  );
  expect(
    run(
      "[... 5 lines (9 characters) omitted. Full output (9 lines) saved to /s/out 1.log (only its first 1,073,741,824 characters); page through it with read_file.]",
    ),
  ).toContain("  │ … its first 1,073,741,824 characters are saved in /s/out 1.log\n");
});
