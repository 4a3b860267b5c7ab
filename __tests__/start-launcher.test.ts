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
  // Named for the build, and for the code paths the run reached (none here).
  expect(first).toMatch(new RegExp(`^cli-${process.version}-${process.arch}-\\d+-\\d+-0\\.v8cache$`));
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

test("a run that reaches more code paths than the one that wrote the code cache writes it again; one that reaches fewer leaves it", () => {
  if (nodeCache) return; // Node's own compile cache keeps what it compiles
  // src/code-paths.ts: the tools the run used, on globalThis for the launcher.
  bundle(
    `const tools = process.argv.slice(2);\nif (tools.length) globalThis[Symbol.for("mini-cursor.codePaths")] = new Set(tools);\nprocess.stdout.write("ran " + tools.length);`,
  );
  const reached = () => caches().map((name) => name.replace(/^.*-(\d+)\.v8cache$/, "$1"));
  expect(start()).toBe("ran 0"); // launched only: --version, or a run stopped before any tool
  expect(reached()).toEqual(["0"]);
  expect(start("tool:read_file", "tool:execute_command")).toBe("ran 2");
  expect(reached()).toEqual(["2"]);
  expect(start("tool:read_file")).toBe("ran 1");
  expect(start()).toBe("ran 0");
  expect(reached()).toEqual(["2"]);
  expect(start("tool:read_file", "tool:write_file", "tool:list_directory")).toBe("ran 3");
  expect(reached()).toEqual(["3"]);
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
