import {
  formatGoalSummary,
  HISTORY_HEADING,
  historyLines,
  historyOf,
  PROFILE_HEADING,
  sectionOf,
  withHistory,
  withSection,
} from "../scripts/bench-history.js";

/**
 * The bench's regression guard (scripts/bench-history.ts): each goal printed met or not, and one
 * dated line per goal appended to BENCHMARKS.md's History, kept across rewrites of the rest.
 */

const goals = [
  { name: "client time per step ≤ 5 ms", measured: "3.2 ms", ratio: 0.64, met: true },
  { name: "launch ≤ 0.8× Codex CLI", measured: "1.10×", ratio: 1.375, met: false },
];
const day = new Date("2026-12-07T06:00:00Z");

test("the summary names every goal, met or NOT MET, with its figure and ratio", () => {
  expect(formatGoalSummary(goals)).toEqual([
    "Goals: 1 of 2 met",
    "  met      client time per step ≤ 5 ms: 3.2 ms (0.64 × target)",
    "  NOT MET  launch ≤ 0.8× Codex CLI: 1.10× (1.38 × target)",
  ]);
});

test("a run's lines go after the History's earlier lines; the sections around it stay", () => {
  const before = [
    "# Benchmarks",
    "",
    "## Launch",
    "",
    "| a | b |",
    "",
    HISTORY_HEADING,
    "",
    "intro",
    "",
    "- 2026-12-01 · full · load 3.0 · old goal: 1 ms · 0.20 × target · met",
    "",
    "## Later",
    "",
    "text",
    "",
  ].join("\n");
  const after = withHistory(before, historyLines(day, 7.24, goals, "quick"));
  expect(historyOf(after)).toEqual([
    "- 2026-12-01 · full · load 3.0 · old goal: 1 ms · 0.20 × target · met",
    "- 2026-12-07 · quick · load 7.2 · client time per step ≤ 5 ms: 3.2 ms · 0.64 × target · met",
    "- 2026-12-07 · quick · load 7.2 · launch ≤ 0.8× Codex CLI: 1.10× · 1.38 × target · not met",
  ]);
  expect(sectionOf(after, "## Launch")).toBe("## Launch\n\n| a | b |\n");
  expect(sectionOf(after, "## Later")).toBe("## Later\n\ntext\n");
  expect(after.startsWith("# Benchmarks\n\n## Launch\n")).toBe(true);
  // A second run appends again: nothing is lost or doubled.
  const again = withHistory(after, historyLines(day, 1, goals.slice(0, 1), "full"));
  expect(historyOf(again)).toHaveLength(4);
  expect(again.split(HISTORY_HEADING)).toHaveLength(2);
});

test("a file with no History gets one at the end; a kept section moves into a rewrite unchanged", () => {
  const fresh = withHistory("# Benchmarks\n\ntext\n", historyLines(day, 2, goals, "full"));
  expect(fresh.startsWith("# Benchmarks\n\ntext\n\n## History\n")).toBe(true);
  expect(historyOf(fresh)).toHaveLength(2);
  const profile = `${PROFILE_HEADING}\n\n| where | ms |\n| a | 1 |\n`;
  const rewritten = withSection("# Benchmarks\n\nnew figures\n", PROFILE_HEADING, profile);
  expect(sectionOf(rewritten, PROFILE_HEADING)).toBe(profile);
  expect(sectionOf("# B\n\n## Other\n", PROFILE_HEADING)).toBeUndefined();
});
