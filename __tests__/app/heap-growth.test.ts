import { spawn } from "node:child_process";
import path from "node:path";
import { HEAP_GROWTH_PERCENT, heapGrowthFlag } from "../../src/app/heap-growth.js";
import { baseEnv, PROJECT_ROOT, TSX_LOADER } from "../helpers/cli.js";

/** A full collection as the process exits, so V8 sets (and traces) one more limit after main ran. */
const GC_AT_EXIT = "data:text/javascript,process.on('exit',()=>globalThis.gc())";
/** V8's trace of each limit it sets: `[HeapController] Limit: old size: … KB, new limit: … KB (1.5)`. */
const LIMIT_LINE = /\[HeapController\] Limit: .*\((\d+\.\d+)\)\s*$/;

/** The growth factor of the last heap limit V8 set in `mini-cursor --version` run with these Node flags. */
function lastGrowthFactor(nodeFlags: string[]): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        "--trace-gc-verbose",
        "--expose-gc",
        ...nodeFlags,
        "--import",
        TSX_LOADER,
        "--import",
        GC_AT_EXIT,
        path.join(PROJECT_ROOT, "src", "cli.ts"),
        "--version",
      ],
      { cwd: PROJECT_ROOT, env: baseEnv(), stdio: ["ignore", "pipe", "pipe"] },
    );
    let stdout = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.on("error", reject);
    child.on("close", (code) => {
      if (code !== 0) return reject(new Error(`mini-cursor --version exited ${code}`));
      const factors = stdout.split("\n").flatMap((line) => LIMIT_LINE.exec(line)?.[1] ?? []);
      resolve(factors.at(-1));
    });
  });
}

describe("heapGrowthFlag", () => {
  test("bounds the growth unless the person started Node with their own", () => {
    expect(heapGrowthFlag([])).toBe(`--heap-growing-percent=${HEAP_GROWTH_PERCENT}`);
    expect(heapGrowthFlag(["--max-old-space-size=4096", "--enable-source-maps"])).toBe("--heap-growing-percent=50");
    expect(heapGrowthFlag(["--heap-growing-percent=30"])).toBeUndefined();
    expect(heapGrowthFlag(["--heap_growing_percent=30"])).toBeUndefined();
  });
});

describe("the CLI's heap", () => {
  // What keeps a long session's peak memory flat (issue 30): V8's own choice is up to 4.0.
  test("grows by at most half of what survived the last full collection", async () => {
    expect(await lastGrowthFactor([])).toBe("1.5");
  }, 60_000);

  test("keeps a growth the person gave Node", async () => {
    expect(await lastGrowthFactor(["--heap-growing-percent=30"])).toBe("1.3");
  }, 60_000);
});
