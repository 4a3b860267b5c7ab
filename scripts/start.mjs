#!/usr/bin/env node
// `npm start` and the `mini-cursor` command: the one-file bundle built by `npm run build` (run by
// `npm ci` through `prepare`) when it is at least as new as every source file, otherwise the
// TypeScript sources through tsx's loader, so edits never run stale code.
//
// The bundle is compiled with a V8 code cache kept in dist/compile-cache/: Node's own
// (module.enableCompileCache) where it exists (Node ≥ 22.1), otherwise the bundle's cached data
// through vm.Script, written after the first run. Compiling the 4 MB bundle is a good part of
// the time to the first model request (BENCHMARKS.md). Without a writable dist/ it just compiles.
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { isAscii } from "node:buffer";
import Module, { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import vm from "node:vm";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const compiled = path.join(root, "dist", "cli.bundle.cjs");
const cacheDir = path.join(root, "dist", "compile-cache");
const source = path.join(root, "src", "cli.ts");

function newestSource(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(full));
    else if (entry.name.endsWith(".ts")) newest = Math.max(newest, statSync(full).mtimeMs);
  }
  return newest;
}

/** What the bundle's run reached (src/code-paths.ts): a cache from a run that reached more compiled more. */
const CODE_PATHS = Symbol.for("mini-cursor.codePaths");

/** Runs the CommonJS bundle as require() would, from V8 cached data when a valid one is there. */
function runWithCachedData(file) {
  const stat = statSync(file);
  // Cached data is checked against the source's length only: the key names the exact build. The
  // name's last part counts the code paths the run that wrote it reached (tools it ran).
  const key = `cli-${process.version}-${process.arch}-${stat.size}-${Math.floor(stat.mtimeMs)}`;
  let cacheFile;
  let reached = -1;
  let cachedData;
  try {
    cacheFile = readdirSync(cacheDir).find((name) => name.startsWith(`${key}-`) && name.endsWith(".v8cache"));
    if (cacheFile) {
      reached = Number(cacheFile.slice(key.length + 1, -".v8cache".length)) || 0;
      cachedData = readFileSync(path.join(cacheDir, cacheFile));
    }
  } catch {
    // First run of this build.
  }
  // The build makes the bundle pure ASCII (scripts/bundle.mjs): read as Latin-1 it becomes a
  // one-byte string without a UTF-8 decode.
  const bytes = readFileSync(file);
  const code = (isAscii(bytes) ? bytes.toString("latin1") : bytes.toString("utf8")).replace(/^#!.*/, "");
  const script = new vm.Script(Module.wrap(code), {
    filename: file,
    cachedData,
    importModuleDynamically: vm.constants?.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
  // At exit the cache holds every function the run compiled, not only the top level. It is
  // written again by a later run that reached more (a launch-only first run, --version, leaves out
  // the tool steps, which every later session would then compile in its first step).
  const rejected = !cachedData || script.cachedDataRejected;
  process.once("exit", () => {
    const now = globalThis[CODE_PATHS]?.size ?? 0;
    if (!rejected && now <= reached) return;
    try {
      mkdirSync(cacheDir, { recursive: true });
      for (const old of readdirSync(cacheDir)) rmSync(path.join(cacheDir, old), { force: true });
      const target = path.join(cacheDir, `${key}-${now}.v8cache`);
      const partial = `${target}.${process.pid}`;
      writeFileSync(partial, script.createCachedData());
      renameSync(partial, target);
    } catch {
      // A read-only install: it compiles every time, as before.
    }
  });
  const mod = new Module(file);
  mod.filename = file;
  mod.paths = Module._nodeModulePaths(path.dirname(file));
  script.runInThisContext()(mod.exports, createRequire(file), mod, file, path.dirname(file));
}

// Dynamic imports the bundle leaves to Node (the MCP libraries, src/mcp/libraries.ts) go through
// this module's import(): under vm.Script with V8 cached data Node 20 loses the script's import
// callback ("A dynamic import callback was not specified").
globalThis[Symbol.for("mini-cursor.import")] = (specifier) => import(specifier);

const fresh = existsSync(compiled) && statSync(compiled).mtimeMs >= newestSource(path.join(root, "src"));
if (fresh) {
  if (typeof Module.enableCompileCache === "function") {
    Module.enableCompileCache(cacheDir);
    createRequire(import.meta.url)(compiled);
  } else {
    runWithCachedData(compiled);
  }
} else {
  const { register } = await import("tsx/esm/api");
  register();
  await import(pathToFileURL(source).href);
}
