/**
 * Issue 41's bound on src/snapshots/: the whole interface (take, changes, restore, the threads'
 * places, the watcher) in at most 1,500 lines and 5 files, no function over 80 lines. Counted with
 * TypeScript's own parser: every function declaration, method, accessor, constructor, function
 * expression and arrow function, from its first line to its last (comments inside count).
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import ts from "typescript";
import { PROJECT_ROOT } from "../helpers/cli.js";

const MAX_LINES = 1_500;
const MAX_FILES = 5;
const MAX_FUNCTION_LINES = 80;
const DIR = path.join(PROJECT_ROOT, "src", "snapshots");

/** Functions of `text` longer than `max` lines, as "<name> (<lines>)". */
function longFunctions(file: string, text: string, max: number): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const line = (pos: number) => source.getLineAndCharacterOfPosition(pos).line;
  const long: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && "body" in node && node.body) {
      const lines = line(node.getEnd()) - line(node.getStart(source)) + 1;
      const named = node.name ?? ((node.parent as ts.VariableDeclaration | ts.PropertyAssignment).name as ts.Node);
      const name = named?.getText(source) ?? `function at line ${line(node.getStart(source)) + 1}`;
      if (lines > max) long.push(`${path.basename(file)}: ${name} (${lines} lines)`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return long;
}

const files = readdirSync(DIR).map((name) => path.join(DIR, name));
const texts = files.map((file) => readFileSync(file, "utf8"));

test(`src/snapshots/ is at most ${MAX_FILES} files and ${MAX_LINES} lines`, () => {
  expect(files.length).toBeLessThanOrEqual(MAX_FILES);
  // As `wc -l` counts them: newlines.
  const lines = texts.reduce((sum, text) => sum + (text.match(/\n/g)?.length ?? 0), 0);
  expect(lines).toBeLessThanOrEqual(MAX_LINES);
});

test(`no function in src/snapshots/ is over ${MAX_FUNCTION_LINES} lines`, () => {
  expect(files.flatMap((file, i) => longFunctions(file, texts[i]!, MAX_FUNCTION_LINES))).toEqual([]);
});

test("the scan finds a long function of each kind, and not a short one", () => {
  const body = (n: number) => Array.from({ length: n }, (_, i) => `  x += ${i};`).join("\n");
  const text = [
    `function decl() {\n${body(80)}\n}`,
    `const arrow = () => {\n${body(80)}\n};`,
    `class C {\n  method() {\n${body(80)}\n  }\n  short() {\n${body(78)}\n  }\n}`,
    `const o = { inner: function () {\n${body(80)}\n} };`,
    `call(() => {\n${body(80)}\n});`,
  ].join("\n");
  expect(longFunctions("x.ts", text, MAX_FUNCTION_LINES)).toEqual([
    "x.ts: decl (82 lines)",
    "x.ts: arrow (82 lines)",
    "x.ts: method (82 lines)",
    "x.ts: inner (82 lines)",
    "x.ts: function at line 411 (82 lines)",
  ]);
});
