#!/usr/bin/env node
// `npm start`: the one-file bundle built by `npm run build` (run by `npm ci` through `prepare`)
// when it is at least as new as every source file, otherwise the TypeScript sources through
// tsx's loader, so edits never run stale code.
import { existsSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const compiled = path.join(root, "dist", "cli.bundle.js");
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

const fresh = existsSync(compiled) && statSync(compiled).mtimeMs >= newestSource(path.join(root, "src"));
if (fresh) {
  await import(pathToFileURL(compiled).href);
} else {
  const { register } = await import("tsx/esm/api");
  register();
  await import(pathToFileURL(source).href);
}
