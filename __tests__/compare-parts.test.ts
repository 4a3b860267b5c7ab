import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { expect, test } from "@jest/globals";
import { ENGINE_PARTS, engineFiles, formatEngineParts } from "../scripts/compare-lib.js";
import { PROJECT_ROOT } from "./helpers/cli.js";

const DOC = path.join(PROJECT_ROOT, "docs", "engines-and-compare.md");

test("docs/engines-and-compare.md shows the table npm run compare -- --parts prints, line counts included", () => {
  const doc = readFileSync(DOC, "utf8");
  const section = /<!-- engine parts: npm run compare -- --parts -->\n([\s\S]*?)<!-- end of engine parts -->/.exec(doc);
  expect(section?.[1]).toBe(`${formatEngineParts(PROJECT_ROOT)}\n`);
});

test("every file of both engine folders is in the table once, and what both share is in neither column", () => {
  const listed = ENGINE_PARTS.flatMap((part) => [...part.graph, ...part.loop]);
  expect(new Set(listed).size).toBe(listed.length);
  const inFolder = (folder: string) => listed.filter((file) => file.startsWith(`${folder}/`)).sort();
  const files = (folder: string) =>
    readdirSync(path.join(PROJECT_ROOT, "src", folder))
      .filter((name) => name.endsWith(".ts"))
      .map((name) => `${folder}/${name}`)
      .sort();
  expect(inFolder("loop")).toEqual(files("loop"));
  expect(inFolder("graph")).toEqual(files("graph"));
  expect(listed.filter((file) => /^(agent|guard|tools|policy)\//.test(file))).toEqual([]);
  expect(engineFiles(PROJECT_ROOT, "graph").every((file) => file.startsWith(path.join(PROJECT_ROOT, "src")))).toBe(
    true,
  );
});
