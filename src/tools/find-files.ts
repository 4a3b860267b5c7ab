import { lstatSync } from "node:fs";
import path from "node:path";
import { z } from "zod";
import { walkTree } from "../workspace/fast-walk.js";
import { resolvePath } from "../workspace/paths.js";
import { anyDepth, createIgnoreChecker, globBase } from "../workspace/walk.js";
import type { ToolContext } from "./context.js";
import { tool } from "@langchain/core/tools";
import { declared } from "../contracts/tools.js";
import { ToolFailure } from "../guard/failure.js";
import { FIND_FILES_PEERS, withPeerArguments } from "./aliases.js";
import { withThousands } from "../thousands.js";

/** Paths shown per call. */
export const MAX_FOUND_FILES = 100;
/**
 * Up to this many matches are sorted newest first. Each costs an lstat (about 10 µs here, 1 s for
 * 100,000 files, three times the walk), so more are listed in path order, as `find | sort` does.
 */
export const MAX_TIME_SORTED_FILES = 1000;

const DESCRIPTION = `Find files by name with a glob pattern, newest first (up to ${MAX_TIME_SORTED_FILES} matches). Patterns are relative to path (default: the workspace root); results are relative to the root.
- "**/*.tsx" or "*.tsx": every .tsx file (a pattern without "/" matches names at any depth); "src/**/*.test.ts": tests under src; "**/package.json"; "*.{css,scss}".
- Skips what .gitignore ignores (node_modules, build output, ...) and .git, unless path names an ignored directory; symlinks are not followed.
- Sorted by modification time, most recent first, when at most ${MAX_TIME_SORTED_FILES} files match; more are sorted by path. At most ${MAX_FOUND_FILES} paths are shown; the result says how many matched in all and in which order.
Use search_files to search file contents, list_directory to see one folder.`;

const findFilesObject = z.strictObject({
  pattern: z.string().min(1).describe('Glob pattern, e.g. "**/*.ts", "src/**/*.test.ts" or "*.{js,jsx}".'),
  path: z.string().optional().describe('Directory to search in, relative to the workspace root (default ".").'),
});

/** Other agents' names (dir_path, ...) are accepted: aliases.ts. */
export const findFilesSchema = withPeerArguments(findFilesObject, FIND_FILES_PEERS);

export type FindFilesInput = z.infer<typeof findFilesObject>;

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

const byPath = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The first MAX_FOUND_FILES of `found`, newest first. The names come from verified folders
 * (workspace/fast-walk.ts); only the modification time is read by name, not following a final
 * link: a folder swapped meanwhile could at worst change the order, never show anything.
 */
function newestFirst(root: string, found: readonly string[]): string[] {
  const stats = found.map((rel) => {
    let mtimeMs = 0;
    try {
      mtimeMs = lstatSync(path.join(root, rel)).mtimeMs;
    } catch {
      // gone meanwhile: listed last
    }
    return { path: rel, mtimeMs };
  });
  // Older first would bury what the model just wrote; ties by path for a stable order.
  return stats
    .sort((a, b) => b.mtimeMs - a.mtimeMs || byPath(a.path, b.path))
    .slice(0, MAX_FOUND_FILES)
    .map((s) => s.path);
}

async function findFiles(ctx: ToolContext, input: FindFilesInput, signal?: AbortSignal): Promise<string> {
  const invalid = invalidPattern(input.pattern);
  if (invalid) throw new ToolFailure(invalid);
  const ws = await ctx.workspace();
  const base = await resolvePath(ws, input.path ?? ".", { directory: true, mustExist: true });
  const relBase = base.display.split(path.sep).join("/");
  // Asked for by name, an ignored folder (node_modules, dist) is searched whole, as search_files does.
  const respectGitignore = relBase === "." || !createIgnoreChecker(ws.root).pathIgnored(relBase, true);
  // "src/" means everything under src.
  const pattern = input.pattern.endsWith("/") ? `${input.pattern}**` : input.pattern;
  // A pattern's fixed folders ("src/app" of "src/app/**/*.tsx") are where the walk starts.
  const glob = anyDepth(pattern);
  const fixed = globBase(glob);
  const startRel = fixed === "." ? relBase : relBase === "." ? fixed : `${relBase}/${fixed}`;
  const found: string[] = [];
  const startIgnored = fixed !== "." && respectGitignore && createIgnoreChecker(ws.root).pathIgnored(startRel, true);
  if (!startIgnored)
    await walkTree(ws, path.join(base.absolute, fixed), {
      respectGitignore,
      signal,
      glob: fixed === "." ? glob : glob.slice(fixed.length + 1),
      onFile: (file) => {
        found.push(file.rel);
      },
    });
  if (found.length === 0) {
    const under = relBase === "." ? "" : ` under ${relBase}`;
    return `No files match "${input.pattern}"${under} (patterns are case-sensitive; files ignored by .gitignore are skipped).`;
  }
  const byTime = found.length <= MAX_TIME_SORTED_FILES;
  const shown = byTime ? newestFirst(ws.root, found) : found.sort(byPath).slice(0, MAX_FOUND_FILES);
  const count = `${found.length} file${found.length === 1 ? "" : "s"}`;
  const narrow = 'Narrow the pattern (e.g. a directory such as "src/**/...") to see the rest.';
  const note = byTime
    ? shown.length < found.length
      ? `[${count} match; showing the ${MAX_FOUND_FILES} most recently modified. ${narrow}]`
      : `[${count}, most recently modified first.]`
    : `[${count} match, more than ${withThousands(MAX_TIME_SORTED_FILES)}, so they are sorted by path, not by modification time; showing the first ${MAX_FOUND_FILES}. ${narrow}]`;
  return `${shown.join("\n")}\n\n${note}`;
}

export function findFilesTool(ctx: ToolContext) {
  return declared(
    tool((input, config) => findFiles(ctx, input, config.signal), {
      name: "find_files",
      description: DESCRIPTION,
      schema: findFilesSchema,
    }),
    { kind: "read", paths: { path: "path", pattern: "glob" } },
  );
}
