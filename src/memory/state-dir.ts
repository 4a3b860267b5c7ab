import { mkdirSync, existsSync, writeFileSync } from "node:fs";
import path from "node:path";

/** Folder in the workspace for mini-cursor's own files (threads, saved output). */
export const STATE_DIR_NAME = ".mini-cursor";

/** Creates `<workspace>/.mini-cursor` with a .gitignore of `*`, so it ignores itself for git. */
export function ensureStateDir(workspace: string): string {
  const dir = path.join(workspace, STATE_DIR_NAME);
  mkdirSync(dir, { recursive: true });
  const ignore = path.join(dir, ".gitignore");
  if (!existsSync(ignore)) writeFileSync(ignore, "*\n");
  return dir;
}
