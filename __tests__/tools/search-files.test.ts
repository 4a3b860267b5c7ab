import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { createTools, type Toolset } from "../../src/tools/index.js";
import {
  compilePattern,
  findRipgrep,
  formatHits,
  MAX_SEARCH_MATCHES,
  ripgrepSearch,
  searchText,
} from "../../src/tools/search-files.js";
import { makeTempDir } from "../helpers/tmp.js";

let tmp: ReturnType<typeof makeTempDir>;
let outside: ReturnType<typeof makeTempDir>;

function put(rel: string, content: string | Buffer): void {
  const abs = path.join(tmp.dir, rel);
  mkdirSync(path.dirname(abs), { recursive: true });
  writeFileSync(abs, content);
}

/** The toolset with ripgrep off (MINI_CURSOR_RIPGREP=off), so the built-in search runs. */
function builtIn(): Toolset {
  return createTools({ workspace: tmp.dir, env: { PATH: "", MINI_CURSOR_RIPGREP: "off" } });
}

async function search(tools: Toolset, args: Record<string, unknown>): Promise<string> {
  return (await tools.search_files.invoke(args as never)) as string;
}

beforeEach(() => {
  tmp = makeTempDir();
  outside = makeTempDir();
  put(".gitignore", "node_modules/\ndist\n*.log\n");
  put("src/app.ts", "import { serve } from './server';\n\nserve(3000);\n// TODO: config\n");
  put("src/server.ts", "export function serve(port: number) {\n  console.log('listening', port);\n}\n");
  put("src/deep/util.js", "export const todo = 'todo later';\n");
  put("README.md", "# App\nTODO: write docs\n");
  put("node_modules/lib/index.js", "// TODO: in a dependency\n");
  put("dist/app.js", "serve(3000); // TODO built\n");
  put("debug.log", "TODO in a log\n");
  put("image.png", Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0x54, 0x4f, 0x44, 0x4f]));
  put(".git/config", "TODO in git\n");
  writeFileSync(path.join(outside.dir, "secret.txt"), "TODO outside\n");
  symlinkSync(path.join(outside.dir, "secret.txt"), path.join(tmp.dir, "src/link.txt"));
});
afterEach(() => {
  tmp.cleanup();
  outside.cleanup();
});

describe("search_files (built-in search)", () => {
  test("finds matches with file and line, skipping ignored folders, .git, binaries and symlinks", async () => {
    const result = await search(builtIn(), { pattern: "todo" });
    expect(result).toBe(
      [
        "README.md:2: TODO: write docs",
        "src/app.ts:4: // TODO: config",
        "src/deep/util.js:1: export const todo = 'todo later';",
        "",
        "[3 matching lines in 3 files under the workspace.]",
      ].join("\n"),
    );
  });

  test("caseSensitive, path and glob narrow the search", async () => {
    const tools = builtIn();
    expect(await search(tools, { pattern: "TODO", caseSensitive: true, path: "src" })).toBe(
      ["src/app.ts:4: // TODO: config", "", "[1 matching line in 1 file under src.]"].join("\n"),
    );
    expect(await search(tools, { pattern: "serve\\(\\d", glob: "*.ts" })).toBe(
      ["src/app.ts:3: serve(3000);", "", "[1 matching line in 1 file under the workspace.]"].join("\n"),
    );
    expect(await search(tools, { pattern: "todo", glob: "src/**/*.js" })).toBe(
      [
        "src/deep/util.js:1: export const todo = 'todo later';",
        "",
        "[1 matching line in 1 file under the workspace.]",
      ].join("\n"),
    );
    expect(await search(tools, { pattern: "todo", path: "src/deep/util.js" })).toContain("src/deep/util.js:1:");
  });

  test("an ignored folder named as the path is searched anyway", async () => {
    expect(await search(builtIn(), { pattern: "TODO", path: "node_modules" })).toBe(
      [
        "node_modules/lib/index.js:1: // TODO: in a dependency",
        "",
        "[1 matching line in 1 file under node_modules.]",
      ].join("\n"),
    );
  });

  test("context lines come as path-line- text with -- between places", async () => {
    expect(await search(builtIn(), { pattern: "listening", contextLines: 1 })).toBe(
      [
        "src/server.ts-1- export function serve(port: number) {",
        "src/server.ts:2:   console.log('listening', port);",
        "src/server.ts-3- }",
        "",
        "[1 matching line in 1 file under the workspace.]",
      ].join("\n"),
    );
  });

  test("caps the output at 100 matches and says how to narrow", async () => {
    put("big.txt", Array.from({ length: 150 }, (_, i) => `needle ${i}`).join("\n"));
    const result = await search(builtIn(), { pattern: "needle" });
    const lines = result.split("\n");
    expect(lines.filter((l) => l.startsWith("big.txt:"))).toHaveLength(MAX_SEARCH_MATCHES);
    expect(lines[lines.length - 1]).toBe(
      '[Showing the first 100 of 150 matching lines in 1 file. Narrow the search with a more specific pattern, a path such as "src" or a glob such as "*.ts".]',
    );
  });

  test("no match, a bad regular expression and a path outside the workspace get plain messages", async () => {
    const tools = builtIn();
    expect(await search(tools, { pattern: "nowhere-to-be-found" })).toBe(
      "No matches for /nowhere-to-be-found/i in the workspace (files ignored by .gitignore and binary files are skipped).",
    );
    expect(await search(tools, { pattern: "serve(" })).toMatch(/^Error: the pattern is not a valid regular expression/);
    expect(await search(tools, { pattern: "x", path: "../" })).toMatch(/^Refused: "..\/" is outside the workspace/);
    expect(await search(tools, { pattern: "x", path: "nope" })).toMatch(/"nope" does not exist/);
  });

  test("honours a nested .gitignore and a negation", async () => {
    put("src/.gitignore", "generated.ts\n");
    put("src/generated.ts", "const marker = 1;\n");
    put("keep.log", "marker in a kept log\n");
    put(".gitignore", "node_modules/\ndist\n*.log\n!keep.log\n");
    expect(await search(builtIn(), { pattern: "marker" })).toBe(
      ["keep.log:1: marker in a kept log", "", "[1 matching line in 1 file under the workspace.]"].join("\n"),
    );
  });
});

describe("search helpers", () => {
  test("(?i) is honoured and long lines are cut around the match", () => {
    expect(compilePattern("(?i)abc", true).flags).toBe("i");
    const long = `${"x".repeat(1000)}needle${"y".repeat(1000)}`;
    const found = searchText(long, /needle/, 0)!;
    const text = found.get(1)!.text;
    expect(text.startsWith("…")).toBe(true);
    expect(text).toContain("needle");
    expect(text.endsWith("[line has 2006 characters]")).toBe(true);
  });

  test("formatHits stops at the limit", () => {
    const lines = new Map([1, 2, 3].map((n) => [n, { text: `m${n}`, match: true }]));
    expect(formatHits([{ path: "a", lines }], 2)).toEqual({ lines: ["a:1: m1", "a:2: m2"], shown: 2 });
  });
});

const rg = findRipgrep();
(rg ? describe : describe.skip)("search_files with ripgrep", () => {
  test("runs, and gives the same results as the built-in search", async () => {
    const direct = await ripgrepSearch(rg!, tmp.dir, ".", { pattern: "todo" }, /todo/i, 0, true);
    expect(direct?.engine).toBe("ripgrep");
    // ripgrep only picks (binary files too, past their NUL bytes); what is shown is read again.
    expect(direct?.hits.map((h) => h.path)).toEqual(["README.md", "image.png", "src/app.ts", "src/deep/util.js"]);
    put("src/.gitignore", "generated.ts\n");
    put("src/generated.ts", "const todo = 1;\n");
    put("big.txt", Array.from({ length: 150 }, (_, i) => `needle ${i}`).join("\n"));
    const tools = createTools({ workspace: tmp.dir, env: process.env });
    const cases: Array<Record<string, unknown>> = [
      { pattern: "todo" },
      { pattern: "listening", contextLines: 1 },
      { pattern: "serve\\(", glob: "*.ts" },
      { pattern: "TODO", path: "node_modules" },
      { pattern: "TODO", caseSensitive: true, path: "src" },
      { pattern: "needle" },
    ];
    for (const args of cases) expect(await search(tools, args)).toBe(await search(builtIn(), args));
  });
});
