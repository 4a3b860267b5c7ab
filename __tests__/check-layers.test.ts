import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { checkLayers, importsOf, type LayerConfig } from "../scripts/check-layers.js";
import { PROJECT_ROOT } from "./helpers/cli.js";
import { makeTempDir } from "./helpers/tmp.js";

let tmp: ReturnType<typeof makeTempDir>;
beforeEach(() => (tmp = makeTempDir()));
afterEach(() => tmp.cleanup());

function tree(files: Record<string, string>): string {
  const src = path.join(tmp.dir, "src");
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(src, name)), { recursive: true });
    writeFileSync(path.join(src, name), text);
  }
  return src;
}

const LAYERS: LayerConfig = { layers: [["settings"], ["low"], ["high"]] };

test("imports downward and within a folder pass", () => {
  const src = tree({
    "settings.ts": "export const A = 1;\n",
    "low/a.ts": 'import { A } from "../settings.js";\nimport { b } from "./b.js";\nexport const a = A + b;\n',
    "low/b.ts": "export const b = 2;\n",
    "high/c.ts": 'export { a } from "../low/a.js";\n',
  });
  expect(checkLayers(src, LAYERS)).toEqual([]);
});

test("an import of a layer above fails, and two folders importing each other are a cycle", () => {
  const src = tree({
    "low/a.ts":
      '// import { x } from "../high/c.js" is only a comment\nimport { c } from "../high/c.js";\nexport const a = c;\n',
    "high/c.ts": 'import { b } from "../low/b.js";\nexport const c = b;\n',
    "low/b.ts": "export const b = 2;\n",
  });
  expect(checkLayers(src, LAYERS)).toEqual([
    { kind: "upward", message: "low/a.ts:2 imports ../high/c.js: low/ may not import high/, a layer above it" },
    { kind: "cycle", message: "folders import each other: high <-> low" },
  ]);
});

test("a cycle inside one layer fails; a type-only import and an allowed import do not count", () => {
  const config: LayerConfig = { layers: [["one", "two"]], allow: { "two/y.ts -> one/x.ts": "why" } };
  const base = { "one/x.ts": 'import { y } from "../two/y.js";\nexport const x = y;\n' };
  expect(
    checkLayers(tree({ ...base, "two/y.ts": 'const m = await import("../one/x.js");\nexport const y = 1;\n' }), {
      layers: config.layers,
    }),
  ).toEqual([{ kind: "cycle", message: "folders import each other: one <-> two" }]);
  expect(
    checkLayers(tree({ ...base, "two/y.ts": 'import type { X } from "../one/x.js";\nexport const y = 1;\n' }), {
      layers: config.layers,
    }),
  ).toEqual([]);
  expect(
    checkLayers(tree({ ...base, "two/y.ts": 'import { x } from "../one/x.js";\nexport const y = 1;\n' }), config),
  ).toEqual([]);
});

test("a folder in no layer fails", () => {
  expect(checkLayers(tree({ "misc/z.ts": "export const z = 1;\n" }), LAYERS)).toEqual([
    { kind: "unlisted", message: "src/misc is in no layer: add it to scripts/layers.json" },
  ]);
});

test("importsOf reads static, multi-line, re-export and dynamic imports", () => {
  const text =
    'import {\n  a,\n  type B,\n} from "./a.js";\nimport { type C } from "./c.js";\nexport * from "./d.js";\nawait import("./e.js");\n';
  expect(importsOf(text)).toEqual([
    { specifier: "./a.js", line: 4, typeOnly: false },
    { specifier: "./c.js", line: 5, typeOnly: true },
    { specifier: "./d.js", line: 6, typeOnly: false },
    { specifier: "./e.js", line: 7, typeOnly: false },
  ]);
});

test("the project's own layers hold (the check npm run lint runs)", () => {
  const run = spawnSync(process.execPath, ["--import", "tsx", "scripts/check-layers.ts"], {
    cwd: PROJECT_ROOT,
    encoding: "utf8",
  });
  expect(run.stderr).toBe("");
  expect(run.status).toBe(0);
});
