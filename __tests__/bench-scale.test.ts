import { parseBenchArgs } from "../scripts/bench-args.js";
import { renderScale, SCALE_BEGIN, SCALE_END, scaleSize, withScaleSection } from "../scripts/bench-scale.js";
import { SCALE_QUICK, vsRaw, within } from "../scripts/bench-scale-lib.js";

/** The scale section's plumbing (issue 30): its flags, its rows and where --write puts it. */

test("--only scale and --scale-files are parsed, and anything else is refused in one sentence", () => {
  expect(parseBenchArgs(["--only", "scale", "--scale-files", "2000"])).toEqual({
    quick: false,
    write: false,
    build: true,
    help: false,
    only: "scale",
    scaleFiles: 2000,
  });
  expect(() => parseBenchArgs(["--only", "e2e"])).toThrow('--only takes "scale" or "steps", not "e2e"');
  expect(parseBenchArgs(["--only", "steps", "--quick"])).toMatchObject({ only: "steps", quick: true });
  expect(() => parseBenchArgs(["--only", "steps", "--write"])).toThrow(
    "--only steps prints its figures: leave out --write",
  );
  expect(() => parseBenchArgs(["--scale-files", "many"])).toThrow(
    "--scale-files takes a whole number of files, 1 or more",
  );
  expect(parseBenchArgs(["--only", "steps", "--baseline", "../base"])).toMatchObject({
    only: "steps",
    baseline: "../base",
  });
  expect(() => parseBenchArgs(["--baseline", "../base"])).toThrow(
    "--baseline compares the step figure: add --only steps",
  );
  expect(parseBenchArgs(["--scale-only", "snapshots"])).toMatchObject({ only: "scale", scaleOnly: "snapshots" });
  expect(() => parseBenchArgs(["--scale-only", "snapshots", "--write"])).toThrow(
    "--write records the whole scale section: leave out --scale-only",
  );
  expect(scaleSize(true)).toEqual(SCALE_QUICK);
  expect(scaleSize(false, 1000)).toMatchObject({ files: 1000, ignoredFiles: 500 });
});

test("a row compares ours with the raw tool, or with an absolute limit", () => {
  expect(vsRaw("g", 300, "rg", 200, 2)).toEqual({
    goal: "g",
    measured: "300 ms",
    raw: "rg: 200 ms",
    ratio: 1.5,
    met: true,
  });
  expect(within("g", 60, 50)).toEqual({ goal: "g", measured: "60 ms", raw: "", ratio: 1.2, met: false });
  expect(within("g", 12, 64, "sed", " MB")).toEqual({
    goal: "g",
    measured: "12 MB",
    raw: "sed",
    ratio: 0.1875,
    met: true,
  });
});

test("--write replaces only the scale section of BENCHMARKS.md, or appends it when there is none", () => {
  const before = `# Benchmarks\n\nintro\n\n${SCALE_BEGIN}\nold\n${SCALE_END}\n\n## after\n`;
  expect(withScaleSection(before, "new")).toBe(
    `# Benchmarks\n\nintro\n\n${SCALE_BEGIN}\nnew\n${SCALE_END}\n\n## after\n`,
  );
  expect(withScaleSection("# Benchmarks\n", "new")).toBe(`# Benchmarks\n\n${SCALE_BEGIN}\nnew\n${SCALE_END}\n`);
});

test("an informational row (the built-in search beside the bundled ripgrep) has no verdict", () => {
  const row = { ...vsRaw("built-in fallback", 900, "rg", 300, 1), informational: true };
  const text = renderScale({ size: SCALE_QUICK, rows: [row], failures: [], generateMs: 1000, load: "1.0" });
  expect(text.split("\n").at(-1)).toBe("| built-in fallback | 900 ms | rg: 300 ms | 3.00 | – |");
});
