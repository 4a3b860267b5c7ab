import { spawnSync } from "node:child_process";
import {
  chmodSync,
  closeSync,
  existsSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  rmSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { createTools } from "../../src/tools/index.js";
import {
  bundledRipgrep,
  bundledRipgrepIn,
  findRipgrep,
  newOutcome,
  ripgrepDescriptor,
} from "../../src/tools/search-files.js";
import { NOBODY, PROJECT_ROOT } from "../helpers/cli.js";
import { asUser, skipUnlessReachable } from "../helpers/as-user.js";
import { makeTempDir } from "../helpers/tmp.js";

/**
 * search_files' ripgrep (issue 30): the binary bundled through @vscode/ripgrep's platform package
 * is found in mini-cursor's own install and nowhere else, a PATH rg only outside the workspace,
 * MINI_CURSOR_RIPGREP=off forces the built-in search; ripgrep reads no config, follows no
 * symlink out, searches big files, and names the files it could not read, as root and as nobody.
 */

const PLATFORM_PACKAGE = `ripgrep-${process.platform}-${process.arch}`;
const RG = process.platform === "win32" ? "rg.exe" : "rg";
const BUILT_IN = { MINI_CURSOR_RIPGREP: "off" };

let tmp: ReturnType<typeof makeTempDir>;
let outside: ReturnType<typeof makeTempDir>;

function put(root: string, rel: string, content: string | Buffer = "", mode = 0o644): string {
  const abs = path.join(root, rel);
  mkdirSync(path.dirname(abs), { recursive: true });
  writeFileSync(abs, content, { mode });
  return abs;
}

/** An executable `rg` that only leaves a mark that it ran. */
function fakeRg(dir: string, mark: string): string {
  return put(dir, RG, `#!/bin/sh\necho ran > '${mark}'\nexit 1\n`, 0o755);
}

const search = async (env: NodeJS.ProcessEnv, args: Record<string, unknown>) =>
  String(await createTools({ workspace: tmp.dir, env }).search_files.invoke(args as never));

beforeEach(() => {
  tmp = makeTempDir();
  outside = makeTempDir();
});
afterEach(() => {
  tmp.cleanup();
  outside.cleanup();
});

describe("which ripgrep", () => {
  test("the bundled binary is ripgrep 15 from this install's node_modules, and runs", () => {
    const rg = bundledRipgrep();
    expect(rg).toBe(bundledRipgrepIn(PROJECT_ROOT));
    expect(rg).toMatch(new RegExp(`node_modules/@vscode/${PLATFORM_PACKAGE}/bin/${RG}$`));
    const version = spawnSync(rg!, ["--version"], { encoding: "utf8", env: {} });
    expect(version.stdout).toMatch(/^ripgrep 15\./);
    expect(findRipgrep({})).toBe(rg);
    // The bundled one comes first, whatever PATH holds.
    const mark = path.join(outside.dir, "ran");
    expect(findRipgrep({ PATH: path.dirname(fakeRg(path.join(outside.dir, "bin"), mark)) })).toBe(rg);
  });

  test("MINI_CURSOR_RIPGREP=off: none, so the built-in search runs", () => {
    for (const off of ["off", "0", "false", "no", "OFF"])
      expect(findRipgrep({ MINI_CURSOR_RIPGREP: off })).toBe(undefined);
    expect(findRipgrep({ MINI_CURSOR_RIPGREP: "on" })).toBe(bundledRipgrep());
  });

  test("without a bundled binary: rg in an absolute PATH folder outside the workspace, never a relative or workspace one", () => {
    const mark = path.join(outside.dir, "ran");
    const own = fakeRg(path.join(outside.dir, "bin"), mark);
    const planted = fakeRg(path.join(tmp.dir, "node_modules", ".bin"), mark);
    const linkedIn = path.join(outside.dir, "to-ws-bin");
    symlinkSync(path.dirname(planted), linkedIn);
    const none = { bundled: undefined, workspace: tmp.dir };
    expect(findRipgrep({ PATH: path.dirname(own) }, none)).toBe(own);
    expect(findRipgrep({ PATH: [path.dirname(planted), path.dirname(own)].join(path.delimiter) }, none)).toBe(own);
    expect(findRipgrep({ PATH: path.dirname(planted) }, none)).toBe(undefined);
    expect(findRipgrep({ PATH: linkedIn }, none)).toBe(undefined);
    expect(findRipgrep({ PATH: path.relative(process.cwd(), path.dirname(own)) }, none)).toBe(undefined);
    expect(findRipgrep({ PATH: "" }, none)).toBe(undefined);
    // Not the workspace's: the same folder is used when no workspace is given (the check is what refuses it).
    expect(findRipgrep({ PATH: path.dirname(planted) }, { bundled: undefined })).toBe(planted);
    expect(existsSync(mark)).toBe(false);
  });

  test("found where npm and pnpm put it for a clone or a dependency, never in a parent folder's node_modules", () => {
    const binIn = (pkgDir: string) => put(pkgDir, path.join("bin", RG), "#!/bin/sh\n", 0o755);
    const d = outside.dir;
    // A clone after npm ci: hoisted into its own node_modules.
    put(d, "clone/package.json", "{}");
    const hoisted = binIn(path.join(d, "clone/node_modules/@vscode", PLATFORM_PACKAGE));
    expect(bundledRipgrepIn(path.join(d, "clone"))).toBe(hoisted);
    // Installed as a dependency: beside it in the enclosing node_modules.
    put(d, "app/node_modules/mini-cursor/package.json", "{}");
    const sibling = binIn(path.join(d, "app/node_modules/@vscode", PLATFORM_PACKAGE));
    expect(bundledRipgrepIn(path.join(d, "app/node_modules/mini-cursor"))).toBe(sibling);
    // pnpm: @vscode/ripgrep is a symlink into .pnpm, its platform package a sibling there.
    const store = path.join(d, "pn/node_modules/.pnpm/@vscode+ripgrep@1.18.0/node_modules/@vscode");
    mkdirSync(path.join(store, "ripgrep"), { recursive: true });
    const pnpm = binIn(path.join(store, PLATFORM_PACKAGE));
    put(d, "pn/package.json", "{}");
    mkdirSync(path.join(d, "pn/node_modules/@vscode"), { recursive: true });
    symlinkSync(path.join(store, "ripgrep"), path.join(d, "pn/node_modules/@vscode/ripgrep"));
    expect(bundledRipgrepIn(path.join(d, "pn"))).toBe(pnpm);
    // Attack: an install without the package, inside a workspace whose node_modules has one.
    put(d, "ws/tools/mini-cursor/package.json", "{}");
    binIn(path.join(d, "ws/node_modules/@vscode", PLATFORM_PACKAGE));
    binIn(path.join(d, "ws/tools/node_modules/@vscode", PLATFORM_PACKAGE));
    expect(bundledRipgrepIn(path.join(d, "ws/tools/mini-cursor"))).toBe(undefined);
    // Not executable, or not a file: not used.
    put(d, "bad/package.json", "{}");
    put(d, path.join("bad/node_modules/@vscode", PLATFORM_PACKAGE, "bin", RG), "", 0o644);
    expect(bundledRipgrepIn(path.join(d, "bad"))).toBe(undefined);
    expect(bundledRipgrepIn(undefined)).toBe(undefined);
  });
});

describe("search_files with the bundled ripgrep", () => {
  test("a workspace's rg on the tools' PATH never runs", async () => {
    const mark = path.join(outside.dir, "ran");
    const planted = fakeRg(path.join(tmp.dir, "node_modules", ".bin"), mark);
    put(tmp.dir, "a.txt", "needle\n");
    expect(await search({ PATH: path.dirname(planted) }, { pattern: "needle" })).toBe(
      "a.txt:1: needle\n\n[1 matching line in 1 file under the workspace.]",
    );
    expect(existsSync(mark)).toBe(false);
  });

  test("reads no config: RIPGREP_CONFIG_PATH (the tools' environment or the process's) and .ignore/.rgignore change nothing", async () => {
    const mark = path.join(outside.dir, "pre-ran");
    const pre = put(outside.dir, "pre.sh", `#!/bin/sh\necho ran > '${mark}'\ncat "$1"\n`, 0o755);
    const config = put(tmp.dir, ".ripgreprc", `--pre=${pre}\n--no-ignore\n--follow\n--max-filesize=1\n`);
    put(tmp.dir, ".gitignore", "ignored.txt\n");
    put(tmp.dir, ".ignore", "hidden-by-dot-ignore.txt\n");
    put(tmp.dir, ".rgignore", "hidden-by-rgignore.txt\n");
    for (const name of ["a.txt", "ignored.txt", "hidden-by-dot-ignore.txt", "hidden-by-rgignore.txt"])
      put(tmp.dir, name, "needle here\n");
    put(outside.dir, "secret.txt", "needle outside\n");
    symlinkSync(outside.dir, path.join(tmp.dir, "out"));
    const expected = [
      "a.txt:1: needle here",
      "hidden-by-dot-ignore.txt:1: needle here",
      "hidden-by-rgignore.txt:1: needle here",
      "",
      "[3 matching lines in 3 files under the workspace.]",
    ].join("\n");
    expect(await search({ RIPGREP_CONFIG_PATH: config }, { pattern: "needle" })).toBe(expected);
    // The process's own environment (jest's process.env is a copy, so a process of its own).
    const run = spawnSync(
      path.join(PROJECT_ROOT, "node_modules", ".bin", "tsx"),
      [path.join(PROJECT_ROOT, "__tests__", "helpers", "search-run.ts"), tmp.dir, "needle"],
      {
        encoding: "utf8",
        env: { PATH: process.env.PATH, HOME: outside.dir, RIPGREP_CONFIG_PATH: config },
        timeout: 60_000,
      },
    );
    expect(run.stderr).toBe("");
    expect(JSON.parse(run.stdout)).toEqual({ uid: process.getuid?.(), ripgrep: expected, builtIn: expected });
    expect(await search(BUILT_IN, { pattern: "needle" })).toBe(expected);
    expect(existsSync(mark)).toBe(false);
  });

  test("follows no symlink out of the workspace, named in a glob or as the path's folder", async () => {
    put(outside.dir, "secret.txt", "needle outside\n");
    symlinkSync(outside.dir, path.join(tmp.dir, "out"));
    symlinkSync(path.join(outside.dir, "secret.txt"), path.join(tmp.dir, "link.txt"));
    put(tmp.dir, "in.txt", "needle in\n");
    for (const env of [{}, BUILT_IN]) {
      expect(await search(env, { pattern: "needle" })).toBe(
        "in.txt:1: needle in\n\n[1 matching line in 1 file under the workspace.]",
      );
      for (const glob of ["out/*", "link.txt", "out/**"])
        expect(await search(env, { pattern: "needle", glob })).toMatch(/^No matches for \/needle\/i in the workspace/);
    }
  });

  test("a hard-linked file is named, not shown, as by the built-in search", async () => {
    const secret = put(outside.dir, "secret.txt", "needle outside\n");
    linkSync(secret, path.join(tmp.dir, "hard.txt"));
    put(tmp.dir, "in.txt", "needle in\n");
    const expected =
      "in.txt:1: needle in\n\n[1 matching line in 1 file under the workspace. 1 file could not be searched: hard.txt (2 hard links).]";
    expect(await search({}, { pattern: "needle" })).toBe(expected);
    expect(await search(BUILT_IN, { pattern: "needle" })).toBe(expected);
  });

  test("a big file is searched again by ripgrep through its opened descriptor: a name swapped for a symlink to outside afterwards changes nothing", async () => {
    const big = put(tmp.dir, "big.log", `${"y".repeat(99)}\n`.repeat(20_000) + "needle inside\n"); // 2 MB
    put(outside.dir, "secret.log", "needle outside\n");
    const fd = openSync(big, "r");
    try {
      rmSync(big);
      symlinkSync(path.join(outside.dir, "secret.log"), big);
      const outcome = newOutcome("ripgrep");
      const search = ripgrepDescriptor(bundledRipgrep()!, tmp.dir, /needle/i, 0);
      expect(await search(fd, "big.log", outcome)).toBe(true);
      expect(outcome.hits).toEqual([
        { path: "big.log", lines: new Map([[20_001, { text: "needle inside", match: true }]]) },
      ]);
      expect(outcome.total).toBe(1);
    } finally {
      closeSync(fd);
    }
  });

  test("past 10,000 matching lines the same ones are counted and shown each time, as by the built-in search", async () => {
    const lines = Array.from({ length: 500 }, (_, i) => `hit ${i}`).join("\n");
    for (let f = 0; f < 30; f++) put(tmp.dir, `f${String(f).padStart(2, "0")}.txt`, lines);
    const first = await search({}, { pattern: "hit" });
    expect(first).toMatch(/\[Showing the first 100 of more than 10,000 matching lines in 20\+ files\./);
    expect(await search({}, { pattern: "hit" })).toBe(first);
    expect(await search(BUILT_IN, { pattern: "hit" })).toBe(first);
  });

  test("a file over 10 MB is searched whole: the line near its end is found", async () => {
    const line = `${"x".repeat(99)}\n`;
    const big = put(tmp.dir, "big.log", line.repeat(110_000)); // 11 MB
    writeFileSync(big, "before\nthe needle line\nafter\n", { flag: "a" });
    const expected = "big.log:110002: the needle line\n\n[1 matching line in 1 file under the workspace.]";
    expect(await search({}, { pattern: "needle" })).toBe(expected);
    expect(await search(BUILT_IN, { pattern: "needle" })).toBe(expected);
    // Big files that .gitignore ignores or a glob leaves out stay out (ripgrep leaves big files to
    // a verified descriptor, after its ignore rules).
    put(tmp.dir, ".gitignore", "skipped/\n*.old\n");
    put(tmp.dir, "skipped/big.txt", `${line.repeat(20_000)}needle skipped\n`);
    put(tmp.dir, "big.old", `${line.repeat(20_000)}needle old\n`);
    for (const env of [{}, BUILT_IN]) {
      expect(await search(env, { pattern: "needle" })).toBe(expected);
      expect(await search(env, { pattern: "needle", glob: "*.txt" })).toMatch(
        /^No matches for \/needle\/i in the workspace matching "\*\.txt"/,
      );
      expect(await search(env, { pattern: "needle", glob: "*.log" })).toBe(expected);
    }
    // A sparse 64 MB file of zeros is binary: skipped by both without a word.
    truncateSync(put(tmp.dir, "sparse.bin.txt"), 64 * 1024 * 1024);
    expect(await search({}, { pattern: "needle" })).toBe(expected);
  });
});

describe("as an ordinary user (nobody)", () => {
  const nobody =
    process.getuid?.() === 0 && !skipUnlessReachable(NOBODY, "search-ripgrep as nobody") ? test : test.skip;
  nobody(
    "files ripgrep cannot read are named, as the built-in search names them",
    () => {
      const base = mkdtempSync("/var/tmp/mini-cursor-search-");
      try {
        chmodSync(base, 0o755);
        const ws = path.join(base, "ws");
        put(ws, "ok.txt", "needle ok\n");
        put(ws, "locked.txt", "needle locked\n", 0o600);
        put(ws, "odd: name.txt", "needle odd\n", 0o600);
        put(ws, "closed/inner.txt", "needle inner\n");
        spawnSync("chown", ["-R", "65534:65534", ws]);
        spawnSync("chown", ["0:0", path.join(ws, "locked.txt"), path.join(ws, "odd: name.txt")]);
        chmodSync(path.join(ws, "closed"), 0o700);
        spawnSync("chown", ["0:0", path.join(ws, "closed")]);
        // The project's tsx and sources, as nobody, wherever the clone lives (helpers/as-user.ts).
        const run = spawnSync(
          ...asUser(NOBODY, [
            path.join(PROJECT_ROOT, "node_modules", ".bin", "tsx"),
            path.join(PROJECT_ROOT, "__tests__", "helpers", "search-run.ts"),
            ws,
            "needle",
          ]),
          { encoding: "utf8", env: { PATH: process.env.PATH, HOME: base }, timeout: 60_000 },
        );
        expect(run.stderr).toBe("");
        const expected =
          "ok.txt:1: needle ok\n\n[1 matching line in 1 file under the workspace. 2 files could not be searched: locked.txt (permission denied), odd: name.txt (permission denied).]";
        expect(JSON.parse(run.stdout)).toEqual({ uid: 65534, ripgrep: expected, builtIn: expected });
      } finally {
        rmSync(base, { recursive: true, force: true });
      }
    },
    90_000,
  );
});
