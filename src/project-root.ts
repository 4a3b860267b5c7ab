import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The folder holding mini-cursor's package.json, found by walking up from this module, so files
 * shipped with it (the demo recording) are found from src/ (tsx), dist/ and the one-file bundle.
 */
function findRoot(): string | undefined {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(path.join(dir, "package.json"))) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

/** Where mini-cursor is installed, or undefined when no package.json is above it (never the cwd). */
export const INSTALL_ROOT = findRoot();
export const PROJECT_ROOT = INSTALL_ROOT ?? process.cwd();
