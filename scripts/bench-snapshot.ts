import { configureParts } from "../src/app/configure.js";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { snapshotStore } from "../src/snapshots/store.js";

// As the CLI does at start: each part of mini-cursor this script uses gets its slice of the settings.
configureParts();

/**
 * What a workspace snapshot (issue 21) costs: a generated project of FILES source files (plus an
 * ignored node_modules that must cost nothing), snapshotted first from scratch, then unchanged,
 * then after one file changed. `measureSnapshotCost` is what `npm run bench` can call;
 * `npm run bench:snapshot` runs it alone and prints the figures as JSON.
 */

/** Files in the generated project. */
export const BENCH_SNAPSHOT_FILES = 10_000;
/** Files per folder, so the tree looks like a project rather than one huge folder. */
const FILES_PER_DIR = 100;
/** Files in the ignored node_modules, which a snapshot must skip. */
const IGNORED_FILES = 2_000;
/** Incremental snapshots averaged over. */
const REPEATS = 5;

export interface SnapshotCost {
  files: number;
  /** The first snapshot: the shadow repository created and every file hashed. */
  firstMs: number;
  /** Median of REPEATS snapshots of the unchanged project. */
  unchangedMs: number;
  /** Median of REPEATS snapshots after one file changed each time. */
  oneChangedMs: number;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function generate(root: string, files: number): void {
  writeFileSync(path.join(root, ".gitignore"), "node_modules/\n");
  for (let i = 0; i < files; i++) {
    const dir = path.join(root, "src", `mod${Math.floor(i / FILES_PER_DIR)}`);
    if (i % FILES_PER_DIR === 0) mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, `file${i}.ts`), `export const value${i} = ${i};\n// ${"x".repeat(200)}\n`);
  }
  mkdirSync(path.join(root, "node_modules", "dep"), { recursive: true });
  for (let i = 0; i < IGNORED_FILES; i++)
    writeFileSync(path.join(root, "node_modules", "dep", `f${i}.js`), `module.exports = ${i};\n`);
}

async function timed(work: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await work();
  return Math.round(performance.now() - started);
}

export async function measureSnapshotCost(files = BENCH_SNAPSHOT_FILES): Promise<SnapshotCost> {
  const root = mkdtempSync(path.join(os.tmpdir(), "mini-cursor-bench-snapshot-"));
  try {
    generate(root, files);
    const store = snapshotStore(root);
    const firstMs = await timed(() => store.take());
    const unchanged: number[] = [];
    for (let i = 0; i < REPEATS; i++) unchanged.push(await timed(() => store.take()));
    const changed: number[] = [];
    for (let i = 0; i < REPEATS; i++) {
      writeFileSync(path.join(root, "src", "mod0", "file0.ts"), `export const changed = ${i};\n`);
      changed.push(await timed(() => store.take()));
    }
    return { files, firstMs, unchangedMs: median(unchanged), oneChangedMs: median(changed) };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const cost = await measureSnapshotCost();
  process.stdout.write(`${JSON.stringify(cost)}\n`);
}
