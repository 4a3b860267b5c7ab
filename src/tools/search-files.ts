import { accessSync, constants as fsConstants, type Stats } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { BINARY_SNIFF_BYTES, binaryKindFromContent, binaryKindFromExtension } from "../workspace/files.js";
import { resolvePath } from "../workspace/paths.js";
import { programLines } from "../workspace/process-lines.js";
import { processEnvironment } from "../settings.js";
import { openVerified } from "../workspace/verified-open.js";
import { anyDepth, createIgnoreChecker, globFiles } from "../workspace/walk.js";
import type { ToolContext } from "./context.js";
import { defineTool } from "./define.js";
import { ToolFailure } from "./errors.js";
import { SEARCH_FILES_PEERS, withPeerArguments } from "./aliases.js";
import { wholeNumber } from "./numbers.js";
import { withThousands } from "../thousands.js";

/** Matching lines shown per call; the footer says how many there were in all. */
export const MAX_SEARCH_MATCHES = 100;
/** Counting stops here, so a pattern like "e" in a big repository ends quickly. */
export const MAX_COUNTED_MATCHES = 10_000;
/** Most lines of context around each match. */
export const MAX_CONTEXT_LINES = 10;
/** Files bigger than this are skipped (logs, dumps, bundles). */
export const MAX_SEARCH_FILE_BYTES = 10 * 1024 * 1024;
/** A longer line is shown as a window around its first match. */
const MAX_LINE_CHARS = 300;
/** Characters kept before the match when a long line is cut. */
const CUT_LEAD_CHARS = 100;
/** Files read at once by the built-in search. */
const READ_CONCURRENCY = 8;

const DESCRIPTION = `Search file contents in the workspace with a regular expression (JavaScript/ripgrep syntax, e.g. "function\\s+handle\\w+" or "TODO|FIXME").
- Results: one line per match as "path:line: text"; with contextLines, context lines as "path-line- text" and "--" between separate places.
- path: a directory or file to search (default: the whole workspace). glob: only files whose path matches, e.g. "*.ts" (any depth), "src/**/*.tsx", "*.{js,jsx}".
- Case-insensitive unless caseSensitive is true.
- Skips what .gitignore ignores (node_modules, build output, ...), .git, binary files and files over ${MAX_SEARCH_FILE_BYTES / 1024 / 1024} MB. Pass an ignored directory as path to search it anyway.
- At most ${MAX_SEARCH_MATCHES} matches are shown; the result says how many there were in all and how to narrow the search.
Use it to find where something is defined or used before reading files; use find_files to find files by name.`;

const searchFilesObject = z.strictObject({
  pattern: z
    .string()
    .min(1)
    .describe('Regular expression to search for, e.g. "createTools\\(" or "import .* from \'react\'".'),
  path: z.string().optional().describe('Directory or file to search, relative to the workspace root (default ".").'),
  glob: z
    .string()
    .optional()
    .describe('Only search files matching this glob, e.g. "*.ts", "src/**/*.tsx" or "*.{css,scss}".'),
  caseSensitive: z.boolean().optional().describe("Match case exactly (default false: case-insensitive)."),
  contextLines: wholeNumber(0, "contextLines must be a whole number, 0 or more")
    .optional()
    .describe(
      `Lines of context to show before and after each match (default 0; more is shown as ${MAX_CONTEXT_LINES}).`,
    ),
});

/** Other agents' names (include, dir_path, Claude Code's -i, -C, type, ...) are accepted: aliases.ts. */
export const searchFilesSchema = withPeerArguments(searchFilesObject, SEARCH_FILES_PEERS);

export type SearchFilesInput = z.infer<typeof searchFilesObject>;

/** The lines found in one file: matches and the context around them, by line number. */
export interface FileHits {
  path: string;
  lines: Map<number, { text: string; match: boolean }>;
}

interface SearchOutcome {
  hits: FileHits[];
  /** Matching lines counted (stops at MAX_COUNTED_MATCHES). */
  total: number;
  filesSearched: number;
  skippedLarge: number;
  stoppedEarly: boolean;
  engine: "ripgrep" | "built-in";
}

/** Compiles the pattern; "(?i)" at the start (ripgrep's inline flag) is honoured. */
export function compilePattern(pattern: string, caseSensitive: boolean): RegExp {
  let source = pattern;
  let insensitive = !caseSensitive;
  if (source.startsWith("(?i)")) {
    source = source.slice(4);
    insensitive = true;
  }
  return new RegExp(source, insensitive ? "i" : "");
}

function shorten(line: string, re: RegExp): string {
  if (line.length <= MAX_LINE_CHARS) return line;
  const at = Math.max(0, line.search(re));
  const start = Math.max(0, at - CUT_LEAD_CHARS);
  const piece = line.slice(start, start + MAX_LINE_CHARS);
  return `${start > 0 ? "…" : ""}${piece}… [line has ${line.length} characters]`;
}

/** Lines of `text` matching `re`, with `context` lines around them. */
export function searchText(text: string, re: RegExp, context: number): FileHits["lines"] | undefined {
  // A quick whole-file test first: with the "m" flag it finds everything a per-line test would.
  const whole = new RegExp(re.source, re.flags.includes("m") ? re.flags : `${re.flags}m`);
  if (!whole.test(text)) return undefined;
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  const found: FileHits["lines"] = new Map();
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.replace(/\r$/, "");
    if (!re.test(line)) continue;
    found.set(i + 1, { text: shorten(line, re), match: true });
    for (let j = Math.max(0, i - context); j <= Math.min(lines.length - 1, i + context); j++) {
      if (!found.has(j + 1)) found.set(j + 1, { text: shorten(lines[j]!.replace(/\r$/, ""), re), match: false });
    }
  }
  // A match that only spans lines (e.g. "a\\nb") has no single matching line.
  return [...found.values()].some((l) => l.match) ? found : undefined;
}

async function searchFile(
  root: string,
  relPath: string,
  re: RegExp,
  context: number,
): Promise<FileHits | "large" | undefined> {
  // Opened without following a final symlink, verified inside the workspace, and refused when
  // hard-linked (like read_file): whatever is swapped or linked, nothing from outside is shown.
  const opened = await openVerified({ root }, path.join(root, relPath), relPath, { refuseHardLinks: true });
  try {
    return await searchOpened(opened.handle, opened.stat, relPath, re, context);
  } finally {
    await opened.handle.close();
  }
}

async function searchOpened(
  handle: FileHandle,
  stat: Stats,
  relPath: string,
  re: RegExp,
  context: number,
): Promise<FileHits | "large" | undefined> {
  if (!stat.isFile()) return undefined;
  if (stat.size > MAX_SEARCH_FILE_BYTES) return "large";
  if (stat.size === 0 || binaryKindFromExtension(relPath)) return undefined;
  const data = await handle.readFile();
  if (binaryKindFromContent(data.subarray(0, BINARY_SNIFF_BYTES))) return undefined;
  const lines = searchText(data.toString("utf8"), re, context);
  return lines ? { path: relPath, lines } : undefined;
}

async function builtInSearch(root: string, files: string[], re: RegExp, context: number): Promise<SearchOutcome> {
  const outcome: SearchOutcome = {
    hits: [],
    total: 0,
    filesSearched: 0,
    skippedLarge: 0,
    stoppedEarly: false,
    engine: "built-in",
  };
  for (let i = 0; i < files.length && !outcome.stoppedEarly; i += READ_CONCURRENCY) {
    const batch = files.slice(i, i + READ_CONCURRENCY);
    const results = await Promise.all(batch.map((rel) => searchFile(root, rel, re, context).catch(() => undefined)));
    for (const result of results) {
      outcome.filesSearched++;
      if (result === "large") outcome.skippedLarge++;
      else if (result) {
        outcome.hits.push(result);
        outcome.total += [...result.lines.values()].filter((l) => l.match).length;
        if (outcome.total >= MAX_COUNTED_MATCHES) outcome.stoppedEarly = true;
      }
    }
  }
  return outcome;
}

// --- ripgrep -----------------------------------------------------------------------------------

/** The ripgrep binary on PATH, if there is one. */
export function findRipgrep(env: NodeJS.ProcessEnv = processEnvironment()): string | undefined {
  for (const dir of (env.PATH ?? "").split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, "rg");
    try {
      accessSync(candidate, fsConstants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

interface RgLine {
  type: string;
  data?: { path?: { text?: string }; line_number?: number; lines?: { text?: string } };
}

/** Runs ripgrep with the same rules as the built-in search; undefined when it cannot (bad regex for it, too old). */
export async function ripgrepSearch(
  rg: string,
  root: string,
  target: string,
  input: SearchFilesInput,
  re: RegExp,
  context: number,
  respectGitignore: boolean,
  signal?: AbortSignal,
): Promise<SearchOutcome | undefined> {
  const args = [
    "--json",
    "--hidden",
    "--no-require-git",
    "--sort",
    "path",
    "--glob",
    "!.git",
    "--max-filesize",
    `${MAX_SEARCH_FILE_BYTES / 1024 / 1024}M`,
  ];
  args.push(re.flags.includes("i") ? "--ignore-case" : "--case-sensitive");
  if (!respectGitignore) args.push("--no-ignore");
  if (context > 0) args.push("--context", String(context));
  if (input.glob) args.push("--glob", input.glob);
  args.push("--regexp", re.source, "--", target);
  const rgRun = programLines(rg, args, { cwd: root, signal });
  const outcome: SearchOutcome = {
    hits: [],
    total: 0,
    filesSearched: 0,
    skippedLarge: 0,
    stoppedEarly: false,
    engine: "ripgrep",
  };
  const byPath = new Map<string, FileHits>();
  for await (const raw of rgRun.lines) {
    let line: RgLine;
    try {
      line = JSON.parse(raw) as RgLine;
    } catch {
      continue;
    }
    if (line.type === "end") outcome.filesSearched++;
    if (line.type !== "match" && line.type !== "context") continue;
    const file = (line.data?.path?.text ?? "").replace(/^\.\//, "");
    const number = line.data?.line_number;
    if (!file || number === undefined) continue;
    let hits = byPath.get(file);
    if (!hits) {
      hits = { path: file, lines: new Map() };
      byPath.set(file, hits);
      outcome.hits.push(hits);
    }
    const text = shorten((line.data?.lines?.text ?? "").replace(/\r?\n$/, ""), re);
    hits.lines.set(number, { text, match: line.type === "match" });
    if (line.type === "match" && ++outcome.total >= MAX_COUNTED_MATCHES) {
      outcome.stoppedEarly = true;
      rgRun.stop();
      break;
    }
  }
  const code = await rgRun.exited;
  // 0: matches, 1: none; 2 with nothing found: an error such as a regex ripgrep does not support.
  if (!outcome.stoppedEarly && code !== 0 && code !== 1 && outcome.hits.length === 0) return undefined;
  return outcome;
}

// --- output ------------------------------------------------------------------------------------

/** "path:12: text" for matches, "path-11- text" for context, "--" between places; stops after `limit` matches. */
export function formatHits(hits: FileHits[], limit: number): { lines: string[]; shown: number } {
  const out: string[] = [];
  let shown = 0;
  for (const file of hits) {
    let previous: number | undefined;
    for (const number of [...file.lines.keys()].sort((a, b) => a - b)) {
      if (shown >= limit) return { lines: out, shown };
      const line = file.lines.get(number)!;
      if (previous !== undefined && number !== previous + 1) out.push("--");
      else if (previous === undefined && out.length > 0 && [...file.lines.values()].some((l) => !l.match))
        out.push("--");
      out.push(line.match ? `${file.path}:${number}: ${line.text}` : `${file.path}-${number}- ${line.text}`);
      if (line.match) shown++;
      previous = number;
    }
  }
  return { lines: out, shown };
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

function footer(outcome: SearchOutcome, shown: number, where: string): string {
  const files = outcome.hits.length;
  const total = outcome.stoppedEarly ? `more than ${withThousands(outcome.total)}` : String(outcome.total);
  const large =
    outcome.skippedLarge > 0
      ? ` ${plural(outcome.skippedLarge, "file")} over ${MAX_SEARCH_FILE_BYTES / 1024 / 1024} MB skipped.`
      : "";
  if (shown < outcome.total) {
    return `[Showing the first ${shown} of ${total} matching lines in ${outcome.stoppedEarly ? `${files}+ files` : plural(files, "file")}. Narrow the search with a more specific pattern, a path such as "src" or a glob such as "*.ts".${large}]`;
  }
  return `[${plural(outcome.total, "matching line")} in ${plural(files, "file")} under ${where}.${large}]`;
}

async function searchFiles(ctx: ToolContext, input: SearchFilesInput, signal?: AbortSignal): Promise<string> {
  let re: RegExp;
  try {
    re = compilePattern(input.pattern, input.caseSensitive ?? false);
  } catch (err) {
    throw new ToolFailure(
      `Error: the pattern is not a valid regular expression (${(err as Error).message}). Escape special characters such as ( [ { . * + ? with a backslash to match them literally.`,
    );
  }
  const context = Math.min(input.contextLines ?? 0, MAX_CONTEXT_LINES);
  const ws = await ctx.workspace();
  const target = await resolvePath(ws, input.path ?? ".", { mustExist: true });
  const where = target.display === "." ? "the workspace" : target.display;
  const relTarget = target.display.split(path.sep).join("/");
  // Asked for by name, an ignored folder (node_modules, dist) is searched whole.
  const respectGitignore =
    relTarget === "." || !createIgnoreChecker(ws.root).pathIgnored(relTarget, target.isDirectory);

  let outcome: SearchOutcome | undefined;
  const rg = findRipgrep(ctx.options.env);
  if (rg)
    outcome = await ripgrepSearch(rg, ws.root, relTarget, input, re, context, respectGitignore, signal).catch(
      () => undefined,
    );
  if (outcome) {
    // ripgrep opens files by name, so a swapped folder could feed it a file from outside: it
    // only picks the files, and what is shown is read again through a verified descriptor.
    const picked = outcome;
    outcome = await builtInSearch(
      ws.root,
      picked.hits.map((h) => h.path),
      re,
      context,
    );
    outcome = {
      ...outcome,
      engine: "ripgrep",
      filesSearched: picked.filesSearched,
      skippedLarge: picked.skippedLarge,
      stoppedEarly: picked.stoppedEarly || outcome.stoppedEarly,
    };
  }
  if (!outcome) {
    const files = target.isDirectory
      ? (
          await globFiles(ws.root, target.absolute, [input.glob ? anyDepth(input.glob) : "**/*"], {
            respectGitignore,
            signal,
          })
        ).sort()
      : [relTarget];
    outcome = await builtInSearch(ws.root, files, re, context);
  }
  if (outcome.total === 0) {
    const scope = input.glob ? ` matching "${input.glob}"` : "";
    const large =
      outcome.skippedLarge > 0
        ? `; ${plural(outcome.skippedLarge, "file")} over ${MAX_SEARCH_FILE_BYTES / 1024 / 1024} MB skipped`
        : "";
    return `No matches for /${input.pattern}/${re.flags} in ${where}${scope} (files ignored by .gitignore and binary files are skipped${large}).`;
  }
  const { lines, shown } = formatHits(outcome.hits, MAX_SEARCH_MATCHES);
  return `${lines.join("\n")}\n\n${footer(outcome, shown, where)}`;
}

/** search_files, defined once (tools/define.ts): a failure throws ToolFailure and becomes an error result. */
export function searchFilesTool(ctx: ToolContext) {
  return defineTool({
    name: "search_files",
    description: DESCRIPTION,
    schema: searchFilesSchema,
    kind: "read",
    paths: (input) => [input.path ?? "."],
    run: (input, call) => searchFiles(ctx, input, call.signal),
  });
}
