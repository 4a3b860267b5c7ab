/**
 * The scale section of `npm run bench` (issue 30): generates a monorepo, its ignored
 * node_modules and a big file in a temp dir, runs every registered measurement against them,
 * each beside its raw tool in the same run, and prints goal, measured, raw, ratio and verdict.
 * A measurement is a ScaleMeasurement (bench-scale-lib.ts) in its own file, listed below.
 */
import { readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import {
  generateScaleFixture,
  removeScaleFixture,
  SCALE_FULL,
  SCALE_QUICK,
  type ScaleContext,
  type ScaleMeasurement,
  type ScaleRow,
  type ScaleSize,
} from "./bench-scale-lib.js";
import { FILE_MEASUREMENTS } from "./bench-scale-files.js";
import { SNAPSHOT_MEASUREMENTS } from "./bench-scale-snapshots.js";
import { STEP_MEASUREMENTS } from "./bench-scale-steps.js";

/** The registry: one line per file of measurements. */
export const SCALE_MEASUREMENTS: readonly ScaleMeasurement[] = [
  ...FILE_MEASUREMENTS,
  ...SNAPSHOT_MEASUREMENTS,
  ...STEP_MEASUREMENTS,
];

/** BENCHMARKS.md keeps the scale section between these, so `--only scale --write` replaces just it. */
export const SCALE_BEGIN = "<!-- scale section: npm run bench -- --only scale --write -->";
export const SCALE_END = "<!-- end of scale section -->";

export interface ScaleReport {
  size: ScaleSize;
  rows: ScaleRow[];
  /** Measurements that failed, with why; the section still prints the others. */
  failures: string[];
  generateMs: number;
  load: string;
}

const load = () =>
  os
    .loadavg()
    .map((n) => n.toFixed(1))
    .join(", ");

export function scaleSize(quick: boolean, files?: number): ScaleSize {
  const base = quick ? SCALE_QUICK : SCALE_FULL;
  return files === undefined ? base : { ...base, files, ignoredFiles: Math.round(files / 2) };
}

export async function runScale(size: ScaleSize, ctx: ScaleContext, only?: string): Promise<ScaleReport> {
  ctx.log(
    `scale: generating ${size.files.toLocaleString("en-US")} files, ${size.ignoredFiles.toLocaleString("en-US")} ignored, a ${size.bigFileBytes / 1024 / 1024} MB file…`,
  );
  const started = performance.now();
  const fixture = generateScaleFixture(size);
  const generateMs = performance.now() - started;
  const before = load();
  const rows: ScaleRow[] = [];
  const failures: string[] = [];
  try {
    for (const m of SCALE_MEASUREMENTS.filter((x) => only === undefined || x.name.includes(only))) {
      ctx.log(`scale: ${m.name}…`);
      try {
        rows.push(...(await m.run(fixture, ctx)));
      } catch (err) {
        failures.push(`${m.name}: ${(err as Error).message.split("\n")[0]}`);
      }
    }
  } finally {
    removeScaleFixture(fixture);
  }
  return { size, rows, failures, generateMs, load: `${before} before, ${load()} after` };
}

export function renderScale(r: ScaleReport): string {
  const n = (x: number) => x.toLocaleString("en-US");
  const lines = [
    `## Scale: a ${n(r.size.files)}-file monorepo, ${n(r.size.ignoredFiles)} ignored files, a ${r.size.bigFileBytes / 1024 / 1024} MB file`,
    "",
    `Generated in a temp dir (${(r.generateMs / 1000).toFixed(0)} s) and removed after; each goal is measured beside its raw tool in the same run`,
    `(medians; the raw tools are timed from spawn to exit, as at a shell). Load average (1, 5, 15 min): ${r.load}.`,
    "",
    "| goal | measured | raw | ratio | met |",
    "|---|---:|---:|---:|:---:|",
    ...r.rows.map(
      (row) =>
        `| ${row.goal} | ${row.measured} | ${row.raw || "–"} | ${row.ratio.toFixed(2)} | ${row.informational ? "–" : row.met ? "yes" : "no"} |`,
    ),
  ];
  if (r.failures.length > 0) lines.push("", "Not measured:", ...r.failures.map((f) => `- ${f}`));
  return lines.join("\n");
}

/** Replaces the scale section of a BENCHMARKS.md text (or appends it when there is none yet). */
export function withScaleSection(markdown: string, section: string): string {
  const block = `${SCALE_BEGIN}\n${section}\n${SCALE_END}`;
  const start = markdown.indexOf(SCALE_BEGIN);
  const end = markdown.indexOf(SCALE_END);
  if (start === -1 || end === -1 || end < start) return `${markdown.trimEnd()}\n\n${block}\n`;
  return `${markdown.slice(0, start)}${block}${markdown.slice(end + SCALE_END.length)}`;
}

export function writeScaleSection(file: string, section: string): void {
  writeFileSync(file, withScaleSection(readFileSync(file, "utf8"), section));
}
