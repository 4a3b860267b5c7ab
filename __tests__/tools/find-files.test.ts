import { mkdirSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import path from "node:path";
import { MAX_FOUND_FILES, MAX_TIME_SORTED_FILES } from "../../src/tools/find-files.js";
import { createTools, type Toolset } from "../../src/tools/index.js";
import { makeTempDir } from "../helpers/tmp.js";

let tmp: ReturnType<typeof makeTempDir>;
let tools: Toolset;

/** Writes a file with a modification time `age` seconds in the past. */
function put(rel: string, age = 0, content = "x"): void {
  const abs = path.join(tmp.dir, rel);
  mkdirSync(path.dirname(abs), { recursive: true });
  writeFileSync(abs, content);
  const when = new Date(Date.now() - age * 1000);
  utimesSync(abs, when, when);
}

const find = async (pattern: string) => (await tools.find_files.invoke({ pattern })) as string;

beforeEach(() => {
  tmp = makeTempDir();
  tools = createTools({ workspace: tmp.dir });
  put(".gitignore", 100, "node_modules\nbuild/\n");
  put("src/old.ts", 300);
  put("src/new.ts", 10);
  put("src/deep/mid.ts", 200);
  put("src/view.tsx", 50);
  put("node_modules/pkg/index.ts", 1);
  put("build/out.ts", 1);
  put(".git/hooks/x.ts", 1);
});
afterEach(() => tmp.cleanup());

test("finds files by glob, newest first, skipping what .gitignore ignores", async () => {
  expect(await find("**/*.ts")).toBe(
    ["src/new.ts", "src/deep/mid.ts", "src/old.ts", "", "[3 files, most recently modified first.]"].join("\n"),
  );
});

test("a pattern without / matches at any depth; braces and directories work", async () => {
  expect(await find("*.ts")).toBe(await find("**/*.ts"));
  expect(await find("src/*.{ts,tsx}")).toBe(
    ["src/new.ts", "src/view.tsx", "src/old.ts", "", "[3 files, most recently modified first.]"].join("\n"),
  );
  expect(await find("src/deep/**")).toBe(["src/deep/mid.ts", "", "[1 file, most recently modified first.]"].join("\n"));
  expect(await find("src/deep/")).toBe(await find("src/deep/**"));
});

test("dot files are found; symlinks are not followed", async () => {
  const outside = makeTempDir();
  try {
    writeFileSync(path.join(outside.dir, "secret.ts"), "x");
    symlinkSync(outside.dir, path.join(tmp.dir, "src/linked"));
    put(".eslintrc.json", 5);
    expect(await find("**/*.json")).toBe([".eslintrc.json", "", "[1 file, most recently modified first.]"].join("\n"));
    expect(await find("**/secret.ts")).toMatch(/^No files match/);
  } finally {
    outside.cleanup();
  }
});

test("caps the list and says how many matched", async () => {
  for (let i = 0; i < MAX_FOUND_FILES + 20; i++) put(`many/f${String(i).padStart(3, "0")}.txt`, i);
  const lines = (await find("many/*.txt")).split("\n");
  expect(lines.slice(0, 2)).toEqual(["many/f000.txt", "many/f001.txt"]);
  expect(lines.filter((l) => l.startsWith("many/"))).toHaveLength(MAX_FOUND_FILES);
  expect(lines[lines.length - 1]).toBe(
    '[120 files match; showing the 100 most recently modified. Narrow the pattern (e.g. a directory such as "src/**/...") to see the rest.]',
  );
});

test("more matches than are sorted by time are listed by path, and the result says so", async () => {
  const count = MAX_TIME_SORTED_FILES + 1;
  mkdirSync(path.join(tmp.dir, "lots/b"), { recursive: true });
  for (let i = 0; i < count - 1; i++)
    writeFileSync(path.join(tmp.dir, `lots/b/f${String(i).padStart(4, "0")}.md`), "x");
  // Newest, but last by path: a time sort would list it first.
  put("lots/z.md", 0);
  const lines = (await find("lots/**/*.md")).split("\n");
  expect(lines.slice(0, 2)).toEqual(["lots/b/f0000.md", "lots/b/f0001.md"]);
  expect(lines.filter((l) => l.startsWith("lots/"))).toEqual(
    Array.from({ length: MAX_FOUND_FILES }, (_, i) => `lots/b/f${String(i).padStart(4, "0")}.md`),
  );
  expect(lines[lines.length - 1]).toBe(
    `[${count} files match, more than 1,000, so they are sorted by path, not by modification time; showing the first ${MAX_FOUND_FILES}. Narrow the pattern (e.g. a directory such as "src/**/...") to see the rest.]`,
  );
});

test("nothing found, and patterns that leave the workspace, get plain messages", async () => {
  expect(await find("**/*.py")).toBe(
    'No files match "**/*.py" (patterns are case-sensitive; files ignored by .gitignore are skipped).',
  );
  expect(await find("../**/*.ts")).toBe(
    'Refused: "../**/*.ts" goes outside the workspace (".."). Patterns are relative to the workspace root.',
  );
  expect(await find("/etc/*")).toBe(
    'Refused: "/etc/*" is not relative to the workspace root. Patterns are relative, e.g. "src/**/*.ts".',
  );
});
