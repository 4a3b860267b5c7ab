/**
 * The scale section's shared parts (issue 30): the generated fixtures, the row every measurement
 * returns (goal, measured, raw tool, ratio, verdict) and timing helpers. Measurements live in
 * their own files (bench-scale-files.ts, …) and are listed in bench-scale.ts's registry.
 */
import { spawn } from "node:child_process";
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from "node:fs";
import os from "node:os";
import path from "node:path";

export interface ScaleSize {
  /** Source files in the generated monorepo. */
  files: number;
  /** Files in its ignored node_modules, which every tool must skip. */
  ignoredFiles: number;
  /** Bytes of the big file (a log with a findable line near its end). */
  bigFileBytes: number;
}

/** Issue 30's sizes: a 100k-file monorepo, 50k ignored files and a 200 MB file. */
export const SCALE_FULL: ScaleSize = { files: 100_000, ignoredFiles: 50_000, bigFileBytes: 200 * 1024 * 1024 };
/** --quick: the same shapes, small enough for a few seconds. */
export const SCALE_QUICK: ScaleSize = { files: 5_000, ignoredFiles: 2_500, bigFileBytes: 20 * 1024 * 1024 };

/** Files per folder and folders per package, so the tree looks like a monorepo rather than one huge folder. */
const FILES_PER_DIR = 50;
const DIRS_PER_PACKAGE = 20;
/** One source file in this many holds NEEDLE, so a search finds a handful, as a real one does. */
const NEEDLE_EVERY = 997;
/** The word a search looks for: rare in the monorepo, once near the end of the big file. */
export const NEEDLE = "scaleNeedleToken";

export interface ScaleFixture {
  size: ScaleSize;
  /** The temp dir holding everything; removed by `removeScaleFixture`. */
  dir: string;
  /** The monorepo's root: packages/pkgN/src/dirM/fileK.ts, a .gitignore, node_modules/. */
  repo: string;
  /** A folder of FILES_PER_DIR files inside the monorepo, relative to `repo`. */
  sampleDir: string;
  /** Files holding NEEDLE in the monorepo. */
  needleFiles: number;
  /** A workspace of its own holding the big file and a 2 KB one. */
  bigDir: string;
  /** Names inside `bigDir`. */
  bigFile: string;
  smallFile: string;
  /** Lines of the big file; NEEDLE is on line `needleLine`, a few lines before the end. */
  bigFileLines: number;
  needleLine: number;
}

function sourceFile(i: number): string {
  const needle = i % NEEDLE_EVERY === 0 ? `\n// ${NEEDLE}: ${i}` : "";
  return `import { helper${i % 97} } from "../shared/helper${i % 97}.js";

/** Module ${i} of the generated monorepo. */
export function value${i}(input: number): number {
  const doubled = helper${i % 97}(input) * 2;
  return doubled + ${i};${needle}
}

export const label${i} = "module-${i}";
`;
}

function generateRepo(repo: string, size: ScaleSize): { sampleDir: string; needleFiles: number } {
  writeFileSync(path.join(repo, ".gitignore"), "node_modules/\ndist/\n");
  writeFileSync(path.join(repo, "package.json"), '{ "name": "scale-monorepo", "private": true }\n');
  let needleFiles = 0;
  let sampleDir = "";
  for (let i = 0; i < size.files; i++) {
    const dirIndex = Math.floor(i / FILES_PER_DIR);
    const rel = path.join("packages", `pkg${Math.floor(dirIndex / DIRS_PER_PACKAGE)}`, "src", `dir${dirIndex}`);
    if (i % FILES_PER_DIR === 0) {
      mkdirSync(path.join(repo, rel), { recursive: true });
      sampleDir ||= rel;
    }
    if (i % NEEDLE_EVERY === 0) needleFiles++;
    writeFileSync(path.join(repo, rel, `file${i}.ts`), sourceFile(i));
  }
  for (let i = 0; i < size.ignoredFiles; i++) {
    const dir = path.join(repo, "node_modules", `dep${Math.floor(i / 500)}`, "lib");
    if (i % 500 === 0) mkdirSync(dir, { recursive: true });
    // The needle in ignored files too: a search that reads node_modules finds too much.
    writeFileSync(path.join(dir, `f${i}.js`), `module.exports = ${i}; // ${NEEDLE}\n`);
  }
  return { sampleDir, needleFiles };
}

/** A log of `bytes` bytes, written in big chunks; NEEDLE sits `tailLines` lines before the end. */
function generateBigFile(file: string, bytes: number, tailLines = 5): { lines: number; needleLine: number } {
  const line = "2026-12-01T12:00:00Z INFO request served path=/api/items status=200 duration_ms=12\n";
  const perChunk = Math.floor((4 * 1024 * 1024) / line.length);
  const chunk = line.repeat(perChunk);
  const total = Math.floor(bytes / line.length);
  const needleLine = total - tailLines;
  const fd = openSync(file, "w");
  try {
    let written = 0;
    while (written + perChunk < needleLine - 1) {
      writeSync(fd, chunk);
      written += perChunk;
    }
    while (written < total) {
      written++;
      writeSync(fd, written === needleLine ? `2026-12-01T12:00:00Z ERROR ${NEEDLE} reached\n` : line);
    }
  } finally {
    closeSync(fd);
  }
  return { lines: total, needleLine };
}

export function generateScaleFixture(size: ScaleSize): ScaleFixture {
  const dir = mkdtempSync(path.join(os.tmpdir(), "mini-cursor-bench-scale-"));
  try {
    const repo = path.join(dir, "repo");
    mkdirSync(repo);
    const { sampleDir, needleFiles } = generateRepo(repo, size);
    const bigDir = path.join(dir, "big");
    mkdirSync(bigDir);
    const { lines, needleLine } = generateBigFile(path.join(bigDir, "big.log"), size.bigFileBytes);
    writeFileSync(path.join(bigDir, "small.txt"), "a short line of notes\n".repeat(93));
    return {
      size,
      dir,
      repo,
      sampleDir,
      needleFiles,
      bigDir,
      bigFile: "big.log",
      smallFile: "small.txt",
      bigFileLines: lines,
      needleLine,
    };
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

export function removeScaleFixture(fixture: ScaleFixture): void {
  rmSync(fixture.dir, { recursive: true, force: true });
}

/** One line of the scale table. */
export interface ScaleRow {
  goal: string;
  /** Ours, as printed ("412 ms", "38 MB"). */
  measured: string;
  /** The raw tool beside it, as printed ("rg: 206 ms"), or "" when the goal is absolute. */
  raw: string;
  /** What the verdict compares: ours over the raw tool, or over the absolute limit. */
  ratio: number;
  met: boolean;
  /** Shown for comparison, with no goal of its own ("–" in the met column). */
  informational?: boolean;
}

export interface ScaleContext {
  quick: boolean;
  log(text: string): void;
}

/** A registered measurement: what it measures and how; it may return several rows. */
export interface ScaleMeasurement {
  name: string;
  run(fixture: ScaleFixture, ctx: ScaleContext): Promise<ScaleRow[]>;
}

const ms = (n: number) => `${n < 10 ? n.toFixed(1) : n.toFixed(0)} ms`;

/** "ours within `maxRatio`× of the raw tool". */
export function vsRaw(goal: string, oursMs: number, rawLabel: string, rawMs: number, maxRatio: number): ScaleRow {
  const ratio = oursMs / rawMs;
  return { goal, measured: ms(oursMs), raw: `${rawLabel}: ${ms(rawMs)}`, ratio, met: ratio <= maxRatio };
}

/** "ours at most `limit`" (ms unless another unit is given); `raw` shows a reference beside it. */
export function within(goal: string, value: number, limit: number, raw = "", unit = " ms"): ScaleRow {
  const measured = unit === " ms" ? ms(value) : `${value.toFixed(value < 10 ? 1 : 0)}${unit}`;
  return { goal, measured, raw, ratio: value / limit, met: value <= limit };
}

export function medianOf(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Median wall milliseconds of `runs` calls of `work` (after one unmeasured warm-up when `warm`). */
export async function timeMs(work: () => Promise<unknown>, runs: number, warm = true): Promise<number> {
  if (warm) await work();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    await work();
    times.push(performance.now() - started);
  }
  return medianOf(times);
}

/**
 * Medians of two works timed in turns (a, b, a, b, …) after one warm-up each, so that a change in
 * the machine's load falls on both alike: a ratio of two figures timed one after the other moves
 * with whatever else ran meanwhile.
 */
export async function timePairedMs(
  a: () => Promise<unknown>,
  b: () => Promise<unknown>,
  runs: number,
): Promise<[number, number]> {
  await a();
  await b();
  const times: [number[], number[]] = [[], []];
  for (let i = 0; i < runs; i++)
    for (const [k, work] of [a, b].entries()) {
      const started = performance.now();
      await work();
      times[k]!.push(performance.now() - started);
    }
  return [medianOf(times[0]), medianOf(times[1])];
}

/** Spawns a command to its exit, output discarded; rejects on a non-zero exit unless allowed. */
export function runCommand(
  cmd: string,
  args: string[],
  cwd: string,
  okCodes: number[] = [0],
  env: NodeJS.ProcessEnv = process.env,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, env, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("error", reject);
    child.on("close", (code) =>
      okCodes.includes(code ?? -1) ? resolve() : reject(new Error(`${cmd} ${args.join(" ")}: exit ${code}\n${stderr}`)),
    );
  });
}

/** Median milliseconds of a raw tool run from spawn to exit, as a user at a shell pays it. */
export function timeCommand(
  cmd: string,
  args: string[],
  cwd: string,
  runs: number,
  okCodes?: number[],
): Promise<number> {
  return timeMs(() => runCommand(cmd, args, cwd, okCodes), runs);
}

/** The executable `name` on PATH, if any. */
export function onPath(name: string, envPath = process.env.PATH ?? ""): string | undefined {
  for (const dir of envPath.split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    try {
      closeSync(openSync(candidate, "r"));
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}
