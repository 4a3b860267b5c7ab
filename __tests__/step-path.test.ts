import { readFileSync } from "node:fs";
import path from "node:path";
import { runtimeImports, runtimeReach } from "../scripts/check-layers.js";
import { PROJECT_ROOT } from "./helpers/cli.js";

/**
 * A reader follows one step in a few files (issue 40 item 6): the module that runs one tool call
 * reaches at most 10 non-leaf source files at run time, and the path ARCHITECTURE.md lists for an
 * approved write_file call is at most 15 files, none twice, each reached at run time from a file
 * before it in the list.
 */

const SRC = path.join(PROJECT_ROOT, "src");

/** The files of ARCHITECTURE.md's "Following one step" list, in order (paths under src/). */
function listedPath(): string[] {
  const doc = readFileSync(path.join(PROJECT_ROOT, "docs", "ARCHITECTURE.md"), "utf8");
  const section = doc.slice(doc.indexOf("## Following one step"), doc.indexOf("## The event contract"));
  return [...section.matchAll(/^\d+\. `src\/([^`]+)`/gm)].map((m) => m[1]!);
}

test("the module that runs one tool call reaches at most 10 non-leaf source files at run time", () => {
  const { nonLeaves } = runtimeReach(SRC, "guard/index.ts");
  expect(nonLeaves.length).toBeLessThanOrEqual(10);
  // Its ports come from the composition root: it imports no snapshot store, journal or hooks runner.
  expect(nonLeaves.filter((f) => /snapshot|journal|memory\/|agent\//.test(f))).toEqual([]);
});

test("the step ARCHITECTURE.md follows is at most 15 files, none twice, each reached from one before it", () => {
  const files = listedPath();
  expect(files.length).toBeGreaterThanOrEqual(10);
  expect(files.length).toBeLessThanOrEqual(15);
  expect(new Set(files).size).toBe(files.length);
  const graph = runtimeImports(SRC);
  for (const file of files) expect(graph.has(file)).toBe(true);
  for (const [i, file] of files.entries()) {
    if (i === 0) continue;
    const reached = files.slice(0, i).some((before) => runtimeReach(SRC, before).reached.includes(file));
    // The engine comes last: the composition root (app/agent.ts) hands it the compiled graph.
    const root = runtimeReach(SRC, "app/agent.ts").reached;
    const handed = file === "graph/engine.ts" && root.includes(file) && root.includes(files[0]!);
    expect({ file, reached: reached || handed }).toEqual({ file, reached: true });
  }
});
