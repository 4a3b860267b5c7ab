/**
 * The regression guard of `npm run bench`: every goal of a run printed met or not, and with
 * --write one dated line per goal appended to the "History" section of BENCHMARKS.md, so a drift
 * (a launch 1.6× slower, a step twice as dear) shows in the week it happens, not a month later.
 * Pure text in, text out: tested without timing anything.
 */
import type { Goal } from "./bench-goals.js";

export const HISTORY_HEADING = "## History";
/** Written by hand from CPU profiles (issue 45): a rewrite of BENCHMARKS.md keeps it as it is. */
export const PROFILE_HEADING = "## Where the time goes (CPU profiles and a timestamp trace)";
const HISTORY_INTRO =
  "One line per goal per `npm run bench -- --write` (`--quick --write` adds only these lines, marked quick), oldest " +
  "first: the date, the run, the load average (1 min) when it began, the goal, what was measured, its ratio to the " +
  "target and whether it was met. On a shared machine a ratio moves with the load; a drift shows as the same goal " +
  "getting worse over runs at a similar load.";

/** The goals of a run as printed at its end: one line each, met or not, and a count. */
export function formatGoalSummary(goals: readonly Goal[]): string[] {
  const met = goals.filter((g) => g.met).length;
  return [
    `Goals: ${met} of ${goals.length} met`,
    ...goals.map(
      (g) => `  ${g.met ? "met    " : "NOT MET"}  ${g.name}: ${g.measured} (${g.ratio.toFixed(2)} × target)`,
    ),
  ];
}

/** One dated history line per goal. */
export function historyLines(date: Date, load: number, goals: readonly Goal[], run: "full" | "quick"): string[] {
  const day = date.toISOString().slice(0, 10);
  return goals.map(
    (g) =>
      `- ${day} · ${run} · load ${load.toFixed(1)} · ${g.name}: ${g.measured} · ${g.ratio.toFixed(2)} × target · ${g.met ? "met" : "not met"}`,
  );
}

/** The text of the section under `heading` (a "## " line) up to the next "## " heading, or undefined. */
export function sectionOf(markdown: string, heading: string): string | undefined {
  const start = `\n${markdown}`.indexOf(`\n${heading}\n`);
  if (start < 0) return undefined;
  const rest = markdown.slice(start);
  const end = rest.slice(heading.length).search(/\n## /);
  return (end < 0 ? rest : rest.slice(0, heading.length + end + 1)).replace(/\n*$/, "\n");
}

/** `markdown` with the section under `heading` replaced by `section` (put at the end when there is none). */
export function withSection(markdown: string, heading: string, section: string): string {
  const old = sectionOf(markdown, heading);
  const text = section.replace(/\n*$/, "\n");
  if (old === undefined) return `${markdown.replace(/\n*$/, "\n")}\n${text}`;
  const start = `\n${markdown}`.indexOf(`\n${heading}\n`);
  const after = markdown.slice(start + old.length).replace(/^\n*/, "");
  return `${markdown.slice(0, start)}${text}${after ? `\n${after}` : ""}`;
}

/** The dated lines of the History section in `markdown`, or none. */
export function historyOf(markdown: string): string[] {
  return (sectionOf(markdown, HISTORY_HEADING) ?? "").split("\n").filter((l) => l.startsWith("- "));
}

/** `markdown` with its History section holding the lines it had and then `added`. */
export function withHistory(markdown: string, added: readonly string[]): string {
  const lines = [...historyOf(markdown), ...added];
  return withSection(markdown, HISTORY_HEADING, [HISTORY_HEADING, "", HISTORY_INTRO, "", ...lines].join("\n"));
}
