import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, readdirSync, utimesSync, writeFileSync } from "node:fs";
import Module from "node:module";
import path from "node:path";
import { PROJECT_ROOT } from "./helpers/cli.js";
import { makeTempDir } from "./helpers/tmp.js";

/**
 * scripts/start.mjs (the `mini-cursor` command and `npm start`) in a copy of the project layout
 * with a stand-in bundle: it runs the bundle as CommonJS and keeps one V8 code cache per build.
 */

let tmp: ReturnType<typeof makeTempDir>;
beforeEach(() => {
  tmp = makeTempDir("mini-cursor-start-");
  mkdirSync(path.join(tmp.dir, "scripts"));
  mkdirSync(path.join(tmp.dir, "src"));
  mkdirSync(path.join(tmp.dir, "dist"));
  cpSync(path.join(PROJECT_ROOT, "scripts", "start.mjs"), path.join(tmp.dir, "scripts", "start.mjs"));
  writeFileSync(path.join(tmp.dir, "src", "cli.ts"), "// older than the bundle\n");
  const past = new Date(Date.now() - 60_000);
  utimesSync(path.join(tmp.dir, "src", "cli.ts"), past, past);
});
afterEach(() => tmp.cleanup());

const bundle = (body: string) =>
  writeFileSync(
    path.join(tmp.dir, "dist", "cli.bundle.cjs"),
    `#!/usr/bin/env node\nconst os = require("node:os");\n${body}\n`,
  );
const start = (...args: string[]) =>
  execFileSync(process.execPath, [path.join(tmp.dir, "scripts", "start.mjs"), ...args], { encoding: "utf8" });
/** Node ≥ 22.1 keeps its own cache layout there (module.enableCompileCache). */
const nodeCache = typeof (Module as unknown as { enableCompileCache?: unknown }).enableCompileCache === "function";
const caches = () => readdirSync(path.join(tmp.dir, "dist", "compile-cache"));

test("the bundle runs as CommonJS with its arguments, and one code cache is kept per build", () => {
  bundle(
    `process.stdout.write(JSON.stringify({ file: __filename, main: typeof module.exports, args: process.argv.slice(2), eol: os.EOL }));`,
  );
  const expected = {
    file: path.join(tmp.dir, "dist", "cli.bundle.cjs"),
    main: "object",
    args: ["--json", "hi"],
    eol: "\n",
  };
  expect(JSON.parse(start("--json", "hi"))).toEqual(expected);
  if (nodeCache) {
    expect(caches().length).toBeGreaterThan(0);
    return;
  }
  const [first, ...others] = caches();
  expect(others).toEqual([]);
  expect(first).toMatch(new RegExp(`^cli-${process.version}-${process.arch}-\\d+-\\d+\\.v8cache$`));
  // The second run reads it (and leaves it as it is).
  expect(JSON.parse(start("--json", "hi"))).toEqual(expected);
  expect(caches()).toEqual([first]);

  // A new build replaces it.
  bundle(`process.stdout.write("rebuilt");`);
  const later = new Date(Date.now() + 1_000);
  utimesSync(path.join(tmp.dir, "dist", "cli.bundle.cjs"), later, later);
  expect(start()).toBe("rebuilt");
  expect(caches()).toHaveLength(1);
  expect(caches()[0]).not.toBe(first);
});

test("a module the bundle imports at run time loads on the run from the code cache too (Node 20 loses vm's import callback there)", () => {
  // The way src/mcp/libraries.ts loads the MCP libraries: the launcher's import(), lent on globalThis.
  bundle(`
    const load = globalThis[Symbol.for("mini-cursor.import")];
    load("node:path").then((m) => process.stdout.write(typeof m.join));`);
  expect(start()).toBe("function");
  expect(start()).toBe("function");
  expect(start()).toBe("function");
});
