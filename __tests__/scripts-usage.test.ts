import { spawnSync } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import path from "node:path";
import { BENCH_USAGE, parseBenchArgs } from "../scripts/bench-args.js";
import { baseEnv, PROJECT_ROOT, TSX_LOADER } from "./helpers/cli.js";
import { makeTempDir } from "./helpers/tmp.js";

/** `npm run bench` and `npm run compare` tell the truth about themselves (issue 31, item 5). */

const script = (name: string, args: string[], env: NodeJS.ProcessEnv = {}) =>
  spawnSync(process.execPath, ["--import", TSX_LOADER, path.join(PROJECT_ROOT, "scripts", name), ...args], {
    cwd: PROJECT_ROOT,
    env: baseEnv(env),
    encoding: "utf8",
    timeout: 60_000,
  });

test("bench --help prints the help and does nothing else: no build, no benchmark, BENCHMARKS.md untouched", () => {
  const before = statSync(path.join(PROJECT_ROOT, "BENCHMARKS.md")).mtimeMs;
  const r = script("bench.ts", ["--help"]);
  expect([r.status, r.stdout, r.stderr]).toEqual([0, BENCH_USAGE, ""]);
  expect(statSync(path.join(PROJECT_ROOT, "BENCHMARKS.md")).mtimeMs).toBe(before);
});

test("bench refuses flags it does not take, and changes BENCHMARKS.md only with --write", () => {
  const r = script("bench.ts", ["--qiuck"]);
  expect([r.status, r.stdout]).toEqual([2, ""]);
  expect(r.stderr).toBe("bench: Unknown option '--qiuck' (npm run bench -- --help lists the options)\n");
  expect(parseBenchArgs([])).toEqual({ quick: false, write: false, build: true, help: false });
  expect(parseBenchArgs(["--write", "--no-build", "--codex", "/bin/codex"])).toEqual({
    quick: false,
    write: true,
    build: false,
    help: false,
    codex: "/bin/codex",
  });
  expect(parseBenchArgs(["--quick", "--write"])).toMatchObject({ quick: true, write: true });
});

test("compare with a missing workspace: one sentence, exit 2, no temp folder left", () => {
  const tmp = makeTempDir();
  try {
    const missing = path.join(tmp.dir, "no-such-dir");
    const r = script("compare.ts", ["--workspace", missing, "list the files"], { TMPDIR: tmp.dir });
    expect([r.status, r.stdout]).toEqual([2, ""]);
    expect(r.stderr).toBe(
      `compare: the workspace ${missing} is not a directory that exists; pass one with --workspace <dir>.\n`,
    );
    // tsx keeps its compile cache there too; no copy of a workspace is left.
    expect(readdirSync(tmp.dir).filter((name) => name.startsWith("mini-cursor-compare-"))).toEqual([]);
  } finally {
    tmp.cleanup();
  }
});
