import { parseArgs } from "node:util";

/** `npm run bench` flags; the benchmark changes a tracked file (BENCHMARKS.md) only with --write. */
export interface BenchArgs {
  quick: boolean;
  write: boolean;
  build: boolean;
  codex?: string;
  help: boolean;
  /**
   * Run only this section: "scale" (--write then replaces only that section of BENCHMARKS.md), or
   * "steps", the 200 one-read steps through the CLI (graph + SQLite), printed and never written.
   */
  only?: "scale" | "steps";
  /** Files in the scale section's generated monorepo (default 100,000; --quick: 5,000). */
  scaleFiles?: number;
  /** Of the scale section, only the measurements whose name holds this word (implies --only scale). */
  scaleOnly?: string;
  /** With --only steps: another checkout whose built bundle runs in alternate rounds, for a before/after. */
  baseline?: string;
}

export const BENCH_USAGE = `Usage: npm run bench -- [options]

Measures mini-cursor end to end through the CLI against a scripted OpenAI-compatible server, then
in process, and prints each goal with its ratio and whether it is met. It runs for many minutes
(--quick: a few) and builds dist/ first unless --no-build.

Options:
  --quick         fewer repeats, no Studio and no 1 GB measurements
  --write         rewrite BENCHMARKS.md with this run's figures and append one dated line per goal
                  to its History; with --quick, only the History lines (marked quick)
  --codex <bin>   also launch Codex CLI (codex exec) against the server, interleaved with ours
  --only scale    run only the scale section (generated monorepo, big file); with --write it
                  replaces only that section of BENCHMARKS.md
  --only steps    run only the 200 one-read steps through the CLI (graph + SQLite), interleaved
                  rounds, and print each round's client time per step; cannot --write
  --baseline <dir>  with --only steps: alternate the rounds with another checkout's built
                  dist/cli.bundle.cjs (e.g. a git worktree of an older commit) and print both
  --scale-files <n>  files in the scale section's monorepo (default 100000; --quick: 5000)
  --scale-only <word>  of the scale section, only the measurements whose name holds <word>
                  (e.g. snapshots); implies --only scale, and cannot --write
  --no-build      use dist/ as it is
  -h, --help      print this and exit
`;

/** Thrown for flags the benchmark does not take; the message is one sentence for the user. */
export class BenchUsageError extends Error {}

export function parseBenchArgs(argv: readonly string[]): BenchArgs {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        quick: { type: "boolean" },
        write: { type: "boolean" },
        "no-build": { type: "boolean" },
        codex: { type: "string" },
        only: { type: "string" },
        "scale-files": { type: "string" },
        "scale-only": { type: "string" },
        baseline: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
    }));
  } catch (err) {
    throw new BenchUsageError(`${(err as Error).message.split("\n")[0]} (npm run bench -- --help lists the options)`);
  }
  const args: BenchArgs = {
    quick: values.quick === true,
    write: values.write === true,
    build: values["no-build"] !== true,
    help: values.help === true,
    ...(typeof values.codex === "string" ? { codex: values.codex } : {}),
  };
  if (values.only !== undefined) {
    if (values.only !== "scale" && values.only !== "steps")
      throw new BenchUsageError(`--only takes "scale" or "steps", not "${String(values.only)}"`);
    if (values.only === "steps" && args.write)
      throw new BenchUsageError("--only steps prints its figures: leave out --write");
    args.only = values.only;
  }
  if (values["scale-files"] !== undefined) {
    const n = Number(values["scale-files"]);
    if (!Number.isInteger(n) || n < 1)
      throw new BenchUsageError("--scale-files takes a whole number of files, 1 or more");
    args.scaleFiles = n;
  }
  if (typeof values["scale-only"] === "string") {
    if (args.write) throw new BenchUsageError("--write records the whole scale section: leave out --scale-only");
    args.only = "scale";
    args.scaleOnly = values["scale-only"];
  }
  if (typeof values.baseline === "string") {
    if (args.only !== "steps") throw new BenchUsageError("--baseline compares the step figure: add --only steps");
    args.baseline = values.baseline;
  }
  return args;
}
