/**
 * docs/ARCHITECTURE.md against the code, claim by claim where a test can check one: the layer
 * table against scripts/layers.json, each rule's exceptions, the event list against
 * src/contracts/events.ts, where tests live, that every file it names exists, and the folder map
 * of docs/development.md against src/ (scripts/folder-map.ts). The step path is
 * __tests__/step-path.test.ts's; what no test can check is dated and signed off in the page.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { type LayerConfig, runtimeImports } from "../scripts/check-layers.js";
import { folderLines, mapProblems, parseMap, PURPOSES } from "../scripts/folder-map.js";
import { PROJECT_ROOT } from "./helpers/cli.js";

const read = (rel: string) => readFileSync(path.join(PROJECT_ROOT, rel), "utf8");
const doc = read("docs/ARCHITECTURE.md");
const config = JSON.parse(read("scripts/layers.json")) as LayerConfig;

/** The text of one `## ` section (its heading's text given), up to the next heading of that level. */
function section(heading: string): string {
  const start = doc.indexOf(`\n## ${heading}\n`);
  expect(start).toBeGreaterThan(-1);
  const end = doc.indexOf("\n## ", start + 1);
  return doc.slice(start, end === -1 ? undefined : end);
}

/** The bullet of "What only some files may do" that starts with `**title**`. */
function ruleBullet(title: string): string {
  const text = section("What only some files may do");
  const start = text.indexOf(`- **${title}**`);
  expect(start).toBeGreaterThan(-1);
  const end = text.indexOf("\n- ", start + 1);
  return text.slice(start, end === -1 ? undefined : end).replace(/\s+/g, " ");
}

const NUMBER_WORDS = ["No", "One", "Two", "Three", "Four", "Five", "Six", "Seven", "Eight", "Nine", "Ten"];

test("the layer table lists scripts/layers.json's layers, bottom first, each folder and file once", () => {
  const rows = section("The folders")
    .split("\n")
    .filter((line) => /^\| [0-9]/.test(line))
    .map((line) =>
      [...line.split("|")[2]!.matchAll(/`([^`]+)`/g)].map((m) => m[1]!.replace(/\/$/, "").replace(/\.ts$/, "")),
    );
  expect(rows).toEqual(config.layers);
});

test("each rule's exceptions are the ones the page counts and names, and only its files are named", () => {
  const rules = config.rules!;
  const cases: [string, string][] = [
    ["The environment", "processEnv"],
    ["The terminal", "terminal"],
    ["Writing output", "output"],
    ["Child processes", "childProcesses"],
  ];
  for (const [title, name] of cases) {
    const bullet = ruleBullet(title);
    const exceptions = Object.keys(rules[name]!.exceptions ?? {});
    const count = bullet.match(/\b(No|One|Two|Three|Four|Five|Six|Seven|Eight|Nine|Ten) exceptions?\b/)?.[1];
    expect([title, count]).toEqual([title, NUMBER_WORDS[exceptions.length]]);
    for (const file of exceptions) expect([title, bullet.includes(file)]).toEqual([title, true]);
    for (const file of rules[name]!.only) expect([title, bullet.includes(path.basename(file))]).toEqual([title, true]);
  }
  // The environment: settings.ts alone, read once at start (see the settings tests for the rule itself).
  expect(rules.processEnv!.only).toEqual(["settings.ts"]);
  expect(ruleBullet("The environment")).toContain("only settings.ts");
});

test("the event contract names every event type and stop reason of src/contracts/events.ts, and no other", () => {
  const events = read("src/contracts/events.ts");
  const union = events.slice(events.indexOf("export type AgentEvent"));
  const types = [...union.matchAll(/type: "([a-z_]+)"/g)].map((m) => m[1]!);
  const reasons = [...events.match(/export type StopReason = ([^;]+);/)![1]!.matchAll(/"([a-z_]+)"/g)].map(
    (m) => m[1]!,
  );
  const text = section("The event contract");
  expect(text).toContain("src/contracts/events.ts");
  const named = new Set([...text.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]!));
  for (const name of [...types, ...reasons]) expect([name, named.has(name)]).toEqual([name, true]);
  // The text also names the tool whose list a `todos` event carries.
  const others = new Set(["write_todos"]);
  for (const name of named) {
    expect([name, types.includes(name) || reasons.includes(name) || others.has(name)]).toEqual([name, true]);
  }
});

test("tests live where the page says: every folder of __tests__/ is a folder of src/, or helpers, fixtures, faults, e2e", () => {
  const testsDir = path.join(PROJECT_ROOT, "__tests__");
  const srcDir = path.join(PROJECT_ROOT, "src");
  const folders = readdirSync(testsDir).filter((f) => statSync(path.join(testsDir, f)).isDirectory());
  const stray = folders.filter(
    (f) => !["helpers", "fixtures", "faults", "e2e"].includes(f) && !existsSync(path.join(srcDir, f)),
  );
  expect(stray).toEqual([]);
  expect(doc).toContain("`__tests__/<folder>/x.test.ts`");
});

test("every source file the page names exists", () => {
  const names = new Set(
    [
      ...doc.matchAll(
        /(?<![\w./-])((?:src\/|scripts\/|__tests__\/)?[a-z0-9-]+\/[a-z0-9./-]*?[a-z0-9-]+\.(?:ts|mjs|json))\b/g,
      ),
    ].map((m) => m[1]!),
  );
  const missing = [...names].filter((name) =>
    [name, `src/${name}`, `__tests__/${name}`].every((candidate) => !existsSync(path.join(PROJECT_ROOT, candidate))),
  );
  expect(missing).toEqual([]);
  expect(names.size).toBeGreaterThan(50);
});

test("docs/development.md's folder map is the tree's (folders and purposes exact, lines within 100)", () => {
  const rows = folderLines(path.join(PROJECT_ROOT, "src"));
  expect(mapProblems(read("docs/development.md"), rows)).toEqual([]);
  // Every folder of src/ has a purpose, and the table names no folder that is gone.
  expect(Object.keys(PURPOSES).sort()).toEqual(rows.map((r) => r.unit).sort());
});

test("a map that drifted is found: a folder missing, a purpose changed, a count off by 100", () => {
  const rows = folderLines(path.join(PROJECT_ROOT, "src"));
  const text = read("docs/development.md");
  const first = rows.find((r) => r.unit === "memory")!;
  expect(
    mapProblems(
      text,
      rows.filter((r) => r !== first),
    )[0],
  ).toMatch(/^folders: /);
  expect(mapProblems(text.replace(PURPOSES.memory!, "something else"), rows)).toEqual([
    "memory: the map's purpose differs from scripts/folder-map.ts",
  ]);
  const shown = parseMap(text).find((r) => r.unit === "memory")!.lines;
  const off = rows.map((r) => (r === first ? { ...r, lines: shown + 100 } : r));
  expect(mapProblems(text, off)).toContain(`memory: the map says ${shown} lines, src/ has ${shown + 100}`);
});

test("settings.ts is imported at run time by the composition only, at most 5 files, the ones the page names", () => {
  const importers = [...runtimeImports(path.join(PROJECT_ROOT, "src")).entries()]
    .filter(([, targets]) => targets.has("settings.ts"))
    .map(([file]) => file)
    .sort();
  expect(importers).toEqual(["app/agent.ts", "app/configure.ts", "cli.ts", "studio/http-guard.ts", "studio/studio.ts"]);
  expect(importers.length).toBeLessThanOrEqual(5);
  const rule = section("What only some files may do");
  for (const file of importers) expect(rule).toContain(file);
});
