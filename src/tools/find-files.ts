import { promises as fs } from "node:fs";
import path from "node:path";
import { z } from "zod";
import { anyDepth, globFiles } from "../workspace/walk.js";
import type { ToolContext } from "./context.js";
import { defineTool } from "./define.js";
import { ToolFailure } from "./errors.js";

/** Paths shown per call, newest first. */
export const MAX_FOUND_FILES = 100;

const DESCRIPTION = `Find files by name with a glob pattern, newest first. Patterns are relative to the workspace root.
- "**/*.tsx" or "*.tsx": every .tsx file (a pattern without "/" matches names at any depth); "src/**/*.test.ts": tests under src; "**/package.json"; "*.{css,scss}".
- Skips what .gitignore ignores (node_modules, build output, ...) and .git; symlinks are not followed.
- Sorted by modification time, most recent first; at most ${MAX_FOUND_FILES} paths, and the result says how many matched in all.
Use search_files to search file contents, list_directory to see one folder.`;

export const findFilesSchema = z.object({
  pattern: z.string().min(1).describe('Glob pattern, e.g. "**/*.ts", "src/**/*.test.ts" or "*.{js,jsx}".'),
});

export type FindFilesInput = z.infer<typeof findFilesSchema>;

/** The folder a glob searches: its segments before the first one with a wildcard ("src" for "src/*.ts", "." for "*.md"). */
export function globBase(pattern: string): string {
  const parts = pattern.split("/");
  const first = parts.findIndex((p) => /[*?[{]/.test(p));
  const base = (first === -1 ? parts.slice(0, -1) : parts.slice(0, first)).join("/");
  return base === "" ? "." : base;
}

/** Patterns may not leave the workspace: no absolute paths, no "..". */
function invalidPattern(pattern: string): string | undefined {
  if (pattern.includes("\0")) return "Error: the pattern contains a NUL byte.";
  if (path.isAbsolute(pattern) || pattern.startsWith("~")) {
    return `Refused: "${pattern}" is not relative to the workspace root. Patterns are relative, e.g. "src/**/*.ts".`;
  }
  if (pattern.split("/").includes("..")) {
    return `Refused: "${pattern}" goes outside the workspace (".."). Patterns are relative to the workspace root.`;
  }
  return undefined;
}

/** Older first would bury what the model just wrote; ties by path for a stable order. */
function byNewest(a: { path: string; mtimeMs: number }, b: { path: string; mtimeMs: number }): number {
  return b.mtimeMs - a.mtimeMs || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);
}

async function findFiles(ctx: ToolContext, input: FindFilesInput, signal?: AbortSignal): Promise<string> {
  const invalid = invalidPattern(input.pattern);
  if (invalid) throw new ToolFailure(invalid);
  const ws = await ctx.workspace();
  // "src/" means everything under src.
  const pattern = input.pattern.endsWith("/") ? `${input.pattern}**` : input.pattern;
  const found = await globFiles(ws.root, ws.root, [anyDepth(pattern)], { signal });
  if (found.length === 0) {
    return `No files match "${input.pattern}" (patterns are case-sensitive; files ignored by .gitignore are skipped).`;
  }
  const stats = await Promise.all(
    found.map(async (rel) => ({
      path: rel,
      mtimeMs: (await fs.lstat(path.join(ws.root, rel)).catch(() => undefined))?.mtimeMs ?? 0,
    })),
  );
  stats.sort(byNewest);
  const shown = stats.slice(0, MAX_FOUND_FILES).map((s) => s.path);
  const count = `${found.length} file${found.length === 1 ? "" : "s"}`;
  const note =
    shown.length < found.length
      ? `[${count} match; showing the ${MAX_FOUND_FILES} most recently modified. Narrow the pattern (e.g. a directory such as "src/**/...") to see the rest.]`
      : `[${count}, most recently modified first.]`;
  return `${shown.join("\n")}\n\n${note}`;
}

/** find_files, defined once (tools/define.ts): a failure throws ToolFailure and becomes an error result. */
export function findFilesTool(ctx: ToolContext) {
  return defineTool({
    name: "find_files",
    description: DESCRIPTION,
    schema: findFilesSchema,
    kind: "read",
    paths: (input) => [globBase(input.pattern)],
    run: (input, call) => findFiles(ctx, input, call.signal),
  });
}
