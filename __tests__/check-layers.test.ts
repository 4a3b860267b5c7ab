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

test("a cycle inside one layer fails, an allowed import's too; a type-only import makes a folder cycle, not a file cycle", () => {
  const config: LayerConfig = { layers: [["one", "two"]], allow: { "two/y.ts -> one/x.ts": "why" } };
  const base = { "one/x.ts": 'import { y } from "../two/y.js";\nexport const x = y;\n' };
  const cycle = { kind: "cycle", message: "folders import each other: one <-> two" };
  const files = { kind: "cycle", message: "files import each other at run time: one/x.ts <-> two/y.ts" };
  expect(
    checkLayers(tree({ ...base, "two/y.ts": 'const m = await import("../one/x.js");\nexport const y = 1;\n' }), {
      layers: config.layers,
    }),
  ).toEqual([cycle, files]);
  expect(
    checkLayers(tree({ ...base, "two/y.ts": 'import type { X } from "../one/x.js";\nexport const y = 1;\n' }), {
      layers: config.layers,
    }),
  ).toEqual([cycle]);
  // An allowed import may cross the layers, but it is no less a cycle at run time.
  expect(
    checkLayers(tree({ ...base, "two/y.ts": 'import { x } from "../one/x.js";\nexport const y = 1;\n' }), config),
  ).toEqual([cycle, files]);
});

test("a type-only import of a layer above fails like any other: the type belongs in a layer below both", () => {
  const src = tree({
    "low/a.ts": 'import type { C } from "../high/c.js";\nexport type A = C;\n',
    "high/c.ts": "export type C = number;\n",
  });
  expect(checkLayers(src, LAYERS)).toEqual([
    { kind: "upward", message: "low/a.ts:1 imports ../high/c.js: low/ may not import high/, a layer above it" },
  ]);
});

test("a planted cycle between two files of one folder fails; a type-only one does not", () => {
  const a = 'import { b } from "./b.js";\nexport const a = () => b;\n';
  expect(
    checkLayers(tree({ "low/a.ts": a, "low/b.ts": 'import { a } from "./a.js";\nexport const b = 1;\n' }), LAYERS),
  ).toEqual([{ kind: "cycle", message: "files import each other at run time: low/a.ts <-> low/b.ts" }]);
  expect(
    checkLayers(tree({ "low/a.ts": a, "low/b.ts": 'import type { a } from "./a.js";\nexport const b = 1;\n' }), LAYERS),
  ).toEqual([]);
});

test("a rule's pattern outside the files it names fails, unless the file is an exception with its reason", () => {
  const rules: LayerConfig["rules"] = {
    processEnv: { what: "reads the environment", pattern: "\\bprocess\\.env\\b", only: ["settings.ts"] },
  };
  const src = tree({
    "settings.ts": "export const home = process.env.HOME;\n",
    "low/a.ts": "// process.env in a comment is fine\nexport const path = process.env.PATH;\n",
  });
  expect(checkLayers(src, { ...LAYERS, rules })).toEqual([
    {
      kind: "rule",
      message:
        'low/a.ts:2 reads the environment (`process.env`): only settings.ts may (rule "processEnv"); move it there, or list the file under rules.processEnv.exceptions with its reason',
    },
  ]);
  const excepted = { processEnv: { ...rules.processEnv!, exceptions: { "low/a.ts": "why" } } };
  expect(checkLayers(src, { ...LAYERS, rules: excepted })).toEqual([]);
});

test("`within`: in its own file, the environment may be read only inside the start function; a read elsewhere, a default parameter's included, fails", () => {
  const within = {
    "settings.ts": { functions: ["captureEnvironment"], why: "the environment is read once, at start" },
  };
  const rules: LayerConfig["rules"] = {
    processEnv: { what: "reads the environment", pattern: "\\bprocess\\.env\\b", only: ["settings.ts"], within },
  };
  const start =
    "let started = {};\nexport function captureEnvironment() {\n  if (true) { started = { ...process.env }; }\n}\n";
  expect(checkLayers(tree({ "settings.ts": start }), { ...LAYERS, rules })).toEqual([]);
  const late = `${start}export function stateHome(env = process.env) {\n  return env.HOME;\n}\nexport const path = () => process.env.PATH;\n`;
  const why = 'outside captureEnvironment (rule "processEnv"): the environment is read once, at start';
  expect(checkLayers(tree({ "settings.ts": late }), { ...LAYERS, rules })).toEqual([
    { kind: "rule", message: `settings.ts:5 reads the environment (\`process.env\`) ${why}` },
    { kind: "rule", message: `settings.ts:8 reads the environment (\`process.env\`) ${why}` },
  ]);
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
