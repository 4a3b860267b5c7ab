import {
  accessSync,
  closeSync,
  constants as fsConstants,
  fstatSync,
  lstatSync,
  openSync,
  read as readCallback,
  readSync,
  realpathSync,
  statSync,
} from "node:fs";
import path from "node:path";
import { z } from "zod";
import { BINARY_SNIFF_BYTES, binaryKindFromContent, binaryKindFromExtension } from "../workspace/files.js";
import { isInside, resolvePath, type Workspace } from "../workspace/paths.js";
import { programLines } from "../workspace/process-lines.js";
import { commandEnvironment } from "../workspace/processes.js";
import { INSTALL_ROOT } from "../project-root.js";

import {
  canVerifyDescriptors,
  descriptorPath,
  openDirectoryVerified,
  openVerified,
} from "../workspace/verified-open.js";
import { walkTree } from "../workspace/fast-walk.js";
import { anyDepth, createIgnoreChecker } from "../workspace/walk.js";
import type { ToolContext } from "./context.js";
import { tool } from "@langchain/core/tools";
import { declared } from "../contracts/tools.js";
import { isNotUtf8Name, NOT_UTF8_NAME } from "./errors.js";
import { ToolFailure } from "../guard/failure.js";
import { SEARCH_FILES_PEERS, withPeerArguments } from "./aliases.js";
import { wholeNumber } from "./numbers.js";
import { withThousands } from "../thousands.js";
import {
  type FileHits,
  literalOf,
  type Matcher,
  MAX_LINE_BYTES,
  type ReadAt,
  SMALL_FILE_BYTES,
  searchSmallSync,
  searchStream,
  shorten,
  smallFileBuffer,
  wholeTextPattern,
} from "./search-files-scan.js";

export { type FileHits, searchText } from "./search-files-scan.js";

/** Matching lines shown per call; the footer says how many there were in all. */
export const MAX_SEARCH_MATCHES = 100;
/** Counting stops here, so a pattern like "e" in a big repository ends quickly. */
export const MAX_COUNTED_MATCHES = 10_000;
/** Most lines of context around each match. */
export const MAX_CONTEXT_LINES = 10;
/** Files that could not be searched named in the result; the rest are counted. */
const MAX_NAMED_UNSEARCHED = 5;
const FILE_FLAGS = fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW | fsConstants.O_NONBLOCK;

const DESCRIPTION = `Search file contents in the workspace with a regular expression (JavaScript/ripgrep syntax, e.g. "function\\s+handle\\w+" or "TODO|FIXME").
- Results: one line per match as "path:line: text"; with contextLines, context lines as "path-line- text" and "--" between separate places.
- path: a directory or file to search (default: the whole workspace). glob: only files whose path matches, e.g. "*.ts" (any depth), "src/**/*.tsx", "*.{js,jsx}".
- Case-insensitive unless caseSensitive is true.
- Skips what .gitignore ignores (node_modules, build output, ...), .git and binary files; pass an ignored directory as path to search it anyway. Files of any size are searched (big ones streamed; a line over ${MAX_LINE_BYTES / 1024 / 1024} MB is searched in pieces). Files that cannot be read (permissions, hard links, a name that is not UTF-8) are named in the result.
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

export interface SearchOutcome {
  hits: FileHits[];
  /** Matching lines counted (stops at MAX_COUNTED_MATCHES). */
  total: number;
  /** Files that were not searched, with why ("permission denied", "hard-linked"). */
  unsearched: Array<{ path: string; why: string }>;
  /** Files not searched beyond those in `unsearched`, counted only. */
  moreUnsearched: number;
  stoppedEarly: boolean;
  engine: "ripgrep" | "built-in";
}

/** Compiles the pattern; "(?i)" at the start (ripgrep's inline flag) is honoured. */
export function compilePattern(pattern: string, caseSensitive: boolean): RegExp {
  const inline = pattern.startsWith("(?i)");
  return new RegExp(inline ? pattern.slice(4) : pattern, inline || !caseSensitive ? "i" : "");
}

export function newOutcome(engine: SearchOutcome["engine"]): SearchOutcome {
  return { hits: [], total: 0, unsearched: [], moreUnsearched: 0, stoppedEarly: false, engine };
}

const readFd =
  (fd: number): ReadAt =>
  (buf, position) =>
    new Promise((resolve, reject) =>
      readCallback(fd, buf, 0, buf.length, position, (err, n) => (err ? reject(err) : resolve(n))),
    );

function why(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  return code === "EACCES" || code === "EPERM" ? "permission denied" : code === "ELOOP" ? "a symlink" : "unreadable";
}

/**
 * Searches one file reached through `io` (a verified folder's descriptor path, or a verified
 * file's): small files synchronously, bigger ones streamed (the promise). Hard-linked files are
 * refused like read_file refuses them: one may be the same file as one outside the workspace.
 */
function searchOne(io: string, rel: string, m: Matcher, outcome: SearchOutcome, buf: Buffer): void | Promise<void> {
  if (binaryKindFromExtension(rel)) return;
  let fd: number;
  try {
    fd = openSync(io, FILE_FLAGS);
  } catch (err) {
    outcome.unsearched.push({ path: rel, why: isNotUtf8Name(err, rel) ? NOT_UTF8_NAME : why(err) });
    return;
  }
  return searchFd(fd, rel, m, outcome, buf, true);
}

/** searchOne on an open descriptor; closes it when `owned`. */
function searchFd(
  fd: number,
  rel: string,
  m: Matcher,
  outcome: SearchOutcome,
  buf: Buffer,
  owned: boolean,
): void | Promise<void> {
  let streaming = false;
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) return;
    if (stat.nlink > 1) {
      outcome.unsearched.push({ path: rel, why: `${stat.nlink} hard links` });
      return;
    }
    if (stat.size === 0) return;
    if (stat.size <= SMALL_FILE_BYTES) {
      const lines = searchSmallSync(fd, stat.size, m, buf);
      if (lines) record(outcome, { path: rel, lines }, [...lines.values()].filter((l) => l.match).length);
      return;
    }
    streaming = true;
    const budget = MAX_COUNTED_MATCHES - outcome.total;
    return searchStream(readFd(fd), m, budget)
      .then((r) => {
        if (r.lines) record(outcome, { path: rel, lines: r.lines }, r.matches);
        if (r.stoppedEarly) outcome.stoppedEarly = true;
      })
      .catch((err: unknown) => {
        outcome.unsearched.push({ path: rel, why: why(err) });
      })
      .finally(() => {
        if (owned) closeSync(fd);
      });
  } catch (err) {
    outcome.unsearched.push({ path: rel, why: why(err) });
  } finally {
    if (!streaming && owned) closeSync(fd);
  }
}

function record(outcome: SearchOutcome, hits: FileHits, matches: number): void {
  outcome.hits.push(hits);
  outcome.total += matches;
  if (outcome.total >= MAX_COUNTED_MATCHES) outcome.stoppedEarly = true;
}

/** The built-in search: the fast walk (workspace/fast-walk.ts) and searchOne on every file. */
async function builtInSearch(
  ws: Workspace,
  baseAbs: string,
  m: Matcher,
  glob: string | undefined,
  respectGitignore: boolean,
  signal?: AbortSignal,
): Promise<SearchOutcome> {
  const outcome = newOutcome("built-in");
  const buf = smallFileBuffer();
  await walkTree(ws, baseAbs, {
    respectGitignore,
    signal,
    glob: glob ? anyDepth(glob) : undefined,
    onFile: (file) => searchOne(file.io, file.rel, m, outcome, buf),
    done: () => outcome.stoppedEarly,
  });
  outcome.hits.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return outcome;
}

/**
 * Searches files named by path (one file asked for, or ripgrep's picks), each opened and
 * verified first. A pick that fails verification is dropped without a word: ripgrep may have
 * named it through a swapped folder, so even its name may come from outside. A hard-linked pick
 * is named (the refusal comes after the descriptor was verified inside the workspace).
 */
async function searchNamed(
  ws: Workspace,
  rels: string[],
  m: Matcher,
  outcome: SearchOutcome,
  picked: boolean,
  bigFile?: BigFileSearch,
): Promise<void> {
  const buf = smallFileBuffer();
  for (const rel of rels) {
    if (outcome.stoppedEarly) break;
    let opened: Awaited<ReturnType<typeof openVerified>>;
    try {
      opened = await openVerified(ws, path.join(ws.root, rel), rel, { refuseHardLinks: true });
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (code === "hard_link") outcome.unsearched.push({ path: rel, why: hardLinks(err) });
      else if (!picked) outcome.unsearched.push({ path: rel, why: why(err) });
      continue;
    }
    try {
      const big = bigFile && opened.stat.isFile() && opened.stat.size > SMALL_FILE_BYTES && opened.stat.nlink === 1;
      if (!(big && (await bigFile(opened.handle.fd, rel, outcome))))
        await searchFd(opened.handle.fd, rel, m, outcome, buf, false);
    } finally {
      await opened.handle.close();
    }
  }
}

/** Searches an open, verified big file into `outcome`; false when it could not (then the built-in search does). */
export type BigFileSearch = (fd: number, rel: string, outcome: SearchOutcome) => Promise<boolean>;

/** "2 hard links", from openVerified's refusal. */
function hardLinks(err: unknown): string {
  return /has (\d+) hard links/.exec((err as Error).message)?.[1]?.concat(" hard links") ?? "hard links";
}

/** Most of ripgrep's "could not read" reports checked and named; the rest are only counted. */
const MAX_CHECKED_REPORTS = 1_000;

/**
 * The files ripgrep reported it could not read, checked before they are named: each one's folder
 * is opened one component at a time from the workspace root (no symlink on the way), and only a
 * regular file there counts. The check also tries the file itself, so one that is readable now
 * is searched after all. Folders ripgrep could not enter are left out, as the built-in walk does.
 */
async function searchReported(ws: Workspace, rels: string[], m: Matcher, outcome: SearchOutcome): Promise<void> {
  const buf = smallFileBuffer();
  const sorted = [...new Set(rels)].sort();
  for (const rel of sorted.slice(0, MAX_CHECKED_REPORTS)) {
    if (path.isAbsolute(rel) || rel.split(/[\\/]/).includes("..")) continue;
    let dir: Awaited<ReturnType<typeof openDirectoryVerified>>;
    try {
      dir = await openDirectoryVerified(ws, path.dirname(path.join(ws.root, rel)), rel);
    } catch {
      continue;
    }
    try {
      const base = path.basename(rel);
      const io = canVerifyDescriptors() ? descriptorPath(dir.fd, base) : path.join(ws.root, rel);
      if (!lstatSync(io, { throwIfNoEntry: false })?.isFile()) continue;
      await searchOne(io, rel, m, outcome, buf);
    } finally {
      await dir.close();
    }
  }
  outcome.moreUnsearched += Math.max(0, sorted.length - MAX_CHECKED_REPORTS);
}

// --- ripgrep -----------------------------------------------------------------------------------

/**
 * MINI_CURSOR_RIPGREP=off: always the built-in search, never a ripgrep binary (a platform the
 * bundled binary does not cover, tests of that path). Read from the environment search_files is
 * given (ToolOptions.env, the one its commands get), not the process's.
 */
export function ripgrepAllowed(env: NodeJS.ProcessEnv): boolean {
  return !/^(off|0|false|no)$/i.test(env.MINI_CURSOR_RIPGREP ?? "");
}

/**
 * Which ripgrep search_files runs, first found wins:
 * 1. the one bundled with mini-cursor: `@vscode/ripgrep`'s platform package (a static binary from
 *    the npm registry, no download at install), looked up only in mini-cursor's own install,
 *    never from the workspace or the current folder, so every machine runs the same version;
 * 2. `rg` on PATH (a platform the package does not cover), skipping PATH folders that are not
 *    absolute or lie inside the workspace: a repository could plant its own `rg` there;
 * 3. none: the built-in search. MINI_CURSOR_RIPGREP=off (settings.ts) goes straight here.
 */
export function findRipgrep(
  env: NodeJS.ProcessEnv = commandEnvironment().base,
  options: { bundled?: string | undefined; workspace?: string } = {},
): string | undefined {
  if (!ripgrepAllowed(env)) return undefined;
  const bundled = "bundled" in options ? options.bundled : bundledRipgrep();
  return bundled ?? ripgrepOnPath(env, options.workspace);
}

const RG_NAME = process.platform === "win32" ? "rg.exe" : "rg";
const PLATFORM_PACKAGE = `ripgrep-${process.platform}-${process.arch}`;

let bundledCache: { path: string | undefined } | undefined;
/** bundledRipgrepIn(INSTALL_ROOT), looked up once per process. */
export function bundledRipgrep(): string | undefined {
  bundledCache ??= { path: bundledRipgrepIn(INSTALL_ROOT) };
  return bundledCache.path;
}

/**
 * The platform package's binary as npm or pnpm lays it out for the install at `installRoot`: in
 * its own node_modules, or (installed as a dependency) beside it in the enclosing node_modules,
 * hoisted or next to `@vscode/ripgrep`'s real folder. Looked up by these names only, not by
 * Node's resolution, which would go on up through parent folders (a workspace's node_modules).
 * Works the same from src/, dist/ and the one-file bundle.
 */
export function bundledRipgrepIn(installRoot: string | undefined): string | undefined {
  if (!installRoot) return undefined;
  const real = realOrSelf(installRoot);
  const modules = [path.join(installRoot, "node_modules"), path.join(real, "node_modules")];
  let up = path.dirname(real);
  if (path.basename(up).startsWith("@")) up = path.dirname(up);
  if (path.basename(up) === "node_modules") modules.push(up);
  for (const dir of modules) {
    const wrapper = realOrSelf(path.join(dir, "@vscode", "ripgrep"));
    for (const pkg of [
      path.join(dir, "@vscode", PLATFORM_PACKAGE),
      path.join(wrapper, "node_modules", "@vscode", PLATFORM_PACKAGE),
      path.join(path.dirname(wrapper), PLATFORM_PACKAGE),
    ]) {
      const candidate = path.join(pkg, "bin", RG_NAME);
      if (isExecutableFile(candidate)) return candidate;
    }
  }
  return undefined;
}

function realOrSelf(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}

function isExecutableFile(p: string): boolean {
  try {
    if (!statSync(p).isFile()) return false;
    accessSync(p, fsConstants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** `rg` in an absolute PATH folder outside `workspace`, if there is one. */
function ripgrepOnPath(env: NodeJS.ProcessEnv, workspace: string | undefined): string | undefined {
  for (const dir of (env.PATH ?? "").split(path.delimiter)) {
    if (!path.isAbsolute(dir)) continue;
    if (workspace && (isInside(workspace, path.resolve(dir)) || isInside(workspace, realOrSelf(dir)))) continue;
    const candidate = path.join(dir, RG_NAME);
    if (isExecutableFile(candidate)) return candidate;
  }
  return undefined;
}

/**
 * Longest line of ripgrep's --json output read. ripgrep puts a whole matching line on one JSON
 * line whatever --max-columns says, so a file with one huge line would otherwise be read into
 * one string (a few hundred MB kill the process); past this, that file is searched by the
 * built-in search, which reads a long line in MAX_LINE_BYTES pieces.
 */
export const MAX_RG_JSON_LINE_BYTES = MAX_LINE_BYTES;

/** ripgrep's name for text that is not valid UTF-8: base64 `bytes` instead of `text`. */
interface RgData {
  text?: string;
  bytes?: string;
}

interface RgLine {
  type: string;
  data?: { path?: RgData; line_number?: number; lines?: RgData };
}

/** The text ripgrep reported, decoded as UTF-8 with U+FFFD for bad bytes (as the built-in search reads files). */
function rgText(data: RgData | undefined): string | undefined {
  if (typeof data?.text === "string") return data.text;
  return typeof data?.bytes === "string" ? Buffer.from(data.bytes, "base64").toString("utf8") : undefined;
}

/** The start of a cut --json line: its type and the path object ripgrep writes first. */
const CUT_RG_LINE = /^\{"type":"(match|context)","data":\{"path":(\{"(?:text|bytes)":"(?:[^"\\]|\\.)*"\})/;

/**
 * Reads ripgrep's --json stream into `outcome` (files by `name` of ripgrep's path), counting
 * matches and stopping ripgrep at MAX_COUNTED_MATCHES. A line too long to read whole
 * (MAX_RG_JSON_LINE_BYTES): with `cutFiles` its file is picked and named there (to be searched
 * by the built-in search); without, ripgrep is stopped and the answer is false.
 */
async function readRgJson(
  rgRun: ReturnType<typeof programLines>,
  outcome: SearchOutcome,
  re: RegExp,
  name: (rgPath: string) => string,
  cutFiles?: Set<string>,
): Promise<boolean> {
  const byPath = new Map<string, FileHits>();
  const hitsOf = (file: string) => {
    let hits = byPath.get(file);
    if (!hits) {
      hits = { path: file, lines: new Map() };
      byPath.set(file, hits);
      outcome.hits.push(hits);
    }
    return hits;
  };
  const badNames = new Set<string>();
  /** The file's name, or undefined (a name that is not UTF-8 is named as not searched). */
  const fileOf = (rgPath: RgData | undefined): string | undefined => {
    const file = name(rgText(rgPath) ?? "");
    if (!file || typeof rgPath?.text === "string") return file || undefined;
    if (!badNames.has(file)) {
      badNames.add(file);
      outcome.unsearched.push({ path: file, why: NOT_UTF8_NAME });
    }
    return undefined;
  };
  const counted = (type: string) => {
    if (type === "match" && ++outcome.total >= MAX_COUNTED_MATCHES) {
      outcome.stoppedEarly = true;
      rgRun.stop();
      return true;
    }
    return false;
  };
  for await (const raw of rgRun.lines) {
    if (typeof raw !== "string") {
      if (!cutFiles) {
        rgRun.stop();
        return false;
      }
      const cut = CUT_RG_LINE.exec(raw.head);
      if (!cut) continue;
      let file: string | undefined;
      try {
        file = fileOf(JSON.parse(cut[2]!) as RgData);
      } catch {
        continue;
      }
      if (!file) continue;
      hitsOf(file);
      cutFiles.add(file);
      if (counted(cut[1]!)) break;
      continue;
    }
    let line: RgLine;
    try {
      line = JSON.parse(raw) as RgLine;
    } catch {
      continue;
    }
    if (line.type !== "match" && line.type !== "context") continue;
    const file = fileOf(line.data?.path);
    const number = line.data?.line_number;
    if (!file || number === undefined) continue;
    const text = shorten((rgText(line.data?.lines) ?? "").replace(/\r?\n$/, ""), re);
    hitsOf(file).lines.set(number, { text, match: line.type === "match" });
    if (counted(line.type)) break;
  }
  return true;
}

/** ripgrep's arguments for the pattern, case and context, shared by both ways it runs. */
function rgPatternArgs(re: RegExp, context: number): string[] {
  const args = ["--no-config", "--json", re.flags.includes("i") ? "--ignore-case" : "--case-sensitive"];
  if (context > 0) args.push("--context", String(context));
  return args;
}

/** How ripgrep names the file it gets as its fd 3. */
const RG_FD3 = "/proc/self/fd/3";

/**
 * A big file ripgrep picked, searched by ripgrep again, fast, but through the descriptor that was
 * opened and verified inside the workspace (handed to it as fd 3, the same file whatever its
 * name leads to now), so what is shown comes from the workspace. Needs /proc.
 */
export function ripgrepDescriptor(
  rg: string,
  root: string,
  re: RegExp,
  context: number,
  signal?: AbortSignal,
  maxLineBytes = MAX_RG_JSON_LINE_BYTES,
): BigFileSearch {
  return async (fd, rel, outcome) => {
    if (!canVerifyDescriptors()) return false;
    // Binary by the built-in search's rule (its first bytes) is skipped as there: ripgrep,
    // handed the file by name, would search it.
    if (binaryHead(fd)) return true;
    const mine = newOutcome("ripgrep");
    mine.total = outcome.total;
    const rgRun = programLines(rg, [...rgPatternArgs(re, context), "--regexp", re.source, "--", RG_FD3], {
      cwd: root,
      signal,
      env: RG_ENV,
      extraFds: [fd],
      maxLineBytes,
    });
    // A line too long to read whole, or output that could not be read: the built-in search reads
    // the file instead (in bounded pieces).
    const whole = await readRgJson(rgRun, mine, re, () => rel).catch(() => false);
    if (!whole) rgRun.stop();
    const code = await rgRun.exited;
    if (!whole || (!mine.stoppedEarly && code !== 0 && code !== 1)) return false;
    for (const hits of mine.hits) outcome.hits.push(hits);
    outcome.total = mine.total;
    if (mine.stoppedEarly) outcome.stoppedEarly = true;
    return true;
  };
}

const RG_DEBUG = "rg: DEBUG|";
/** ripgrep 15's debug line for a file over --max-filesize: "rg: DEBUG|ignore::walk|…: ignoring ./big.log: 209715200 bytes". */
const BIG_FILE_SKIPPED = /^rg: DEBUG\|ignore::walk\|[^ ]*: ignoring (.+): \d+ bytes$/;

/** The environment ripgrep runs in: none, so no RIPGREP_CONFIG_PATH (or anything else) steers it. */
const RG_ENV: NodeJS.ProcessEnv = {};

/** "rg: ./a.txt: Permission denied (os error 13)" (ripgrep 15) or without "rg: " (older): the path. */
function reportedPath(line: string): string | undefined {
  const m = /^(?:rg: )?(.+): [^:]+ \(os error \d+\)$/.exec(line);
  return m ? m[1]!.replace(/^\.\//, "") : undefined;
}

/** The first BINARY_SNIFF_BYTES of an open file hold what makes the built-in search skip it. */
function binaryHead(fd: number): boolean {
  const head = Buffer.alloc(BINARY_SNIFF_BYTES);
  return binaryKindFromContent(head.subarray(0, readSync(fd, head, 0, head.length, 0))) !== undefined;
}

export interface RipgrepSearchOptions {
  signal?: AbortSignal | undefined;
  /** Gets what ripgrep reported it could not read. */
  unreadable?: string[];
  /** One thread, files in path order (the same ones counted each time). */
  sorted?: boolean;
  /** When given, files over SMALL_FILE_BYTES are skipped and named here (for ripgrepDescriptor). */
  bigFiles?: string[] | undefined;
  /** Gets the files whose matching line was too long for ripgrep's output to be read (MAX_RG_JSON_LINE_BYTES). */
  cutFiles?: Set<string>;
  maxLineBytes?: number;
}

/**
 * Runs ripgrep with the same rules as the built-in search; undefined when it cannot (bad regex for
 * it, too old for a flag). Only .gitignore files decide what is skipped, as in the built-in walk:
 * no config file, no .ignore/.rgignore, no .git/info/exclude, no global excludes. No size limit:
 * a file of any size is searched. Binary files are searched too (--binary: past a NUL byte, which
 * ripgrep's own rule stops at): the built-in rule (a NUL in the first BINARY_SNIFF_BYTES) decides
 * when what it picks is read again, so both searches skip the same files.
 */
export async function ripgrepSearch(
  rg: string,
  root: string,
  target: string,
  input: SearchFilesInput,
  re: RegExp,
  context: number,
  respectGitignore: boolean,
  options: RipgrepSearchOptions = {},
): Promise<SearchOutcome | undefined> {
  const { signal, unreadable = [], sorted = false, bigFiles, cutFiles = new Set<string>() } = options;
  const args = [...rgPatternArgs(re, context), "--binary", "--hidden", "--no-require-git", "--glob", "!.git"];
  if (sorted) args.push("--sort", "path");
  // Big files are left to ripgrepDescriptor (read once, through a verified descriptor); ripgrep's
  // debug log names each one it skipped for its size, after its ignore rules and globs.
  if (bigFiles) args.push("--max-filesize", String(SMALL_FILE_BYTES), "--debug");
  args.push("--no-ignore-dot", "--no-ignore-exclude", "--no-ignore-global");
  if (!respectGitignore) args.push("--no-ignore");
  if (input.glob) args.push("--glob", input.glob);
  args.push("--regexp", re.source, "--", target);
  const rgRun = programLines(rg, args, {
    cwd: root,
    signal,
    env: RG_ENV,
    maxLineBytes: options.maxLineBytes ?? MAX_RG_JSON_LINE_BYTES,
    onStderrLine: (line) => {
      if (line.startsWith(RG_DEBUG)) {
        const big = BIG_FILE_SKIPPED.exec(line)?.[1];
        if (big && bigFiles) bigFiles.push(big.replace(/^\.\//, ""));
        return;
      }
      const rel = reportedPath(line);
      if (rel) unreadable.push(rel);
    },
  });
  const outcome = newOutcome("ripgrep");
  await readRgJson(rgRun, outcome, re, (text) => text.replace(/^\.\//, ""), cutFiles);
  const code = await rgRun.exited;
  // 0: matches, 1: none; 2 with nothing found: an error such as a regex ripgrep does not support.
  // 2 is also "some files could not be read": that search still counts when any file was searched.
  if (
    !outcome.stoppedEarly &&
    code !== 0 &&
    code !== 1 &&
    outcome.hits.length === 0 &&
    outcome.unsearched.length === 0 &&
    unreadable.length === 0
  )
    return undefined;
  outcome.hits.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
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

/** " 2 files could not be searched: a.txt (permission denied), b.txt (3 hard links)." */
function unsearchedNote(outcome: SearchOutcome): string {
  const n = outcome.unsearched.length + outcome.moreUnsearched;
  if (n === 0) return "";
  const named = outcome.unsearched
    .slice(0, MAX_NAMED_UNSEARCHED)
    .map((u) => `${u.path} (${u.why})`)
    .join(", ");
  const more = n > MAX_NAMED_UNSEARCHED ? ` and ${n - MAX_NAMED_UNSEARCHED} more` : "";
  return ` ${plural(n, "file")} could not be searched: ${named}${more}.`;
}

function footer(outcome: SearchOutcome, shown: number, where: string): string {
  const files = outcome.hits.length;
  const total = outcome.stoppedEarly ? `more than ${withThousands(outcome.total)}` : String(outcome.total);
  const unsearched = unsearchedNote(outcome);
  if (shown < outcome.total) {
    return `[Showing the first ${shown} of ${total} matching lines in ${outcome.stoppedEarly ? `${files}+ files` : plural(files, "file")}. Narrow the search with a more specific pattern, a path such as "src" or a glob such as "*.ts".${unsearched}]`;
  }
  return `[${plural(outcome.total, "matching line")} in ${plural(files, "file")} under ${where}.${unsearched}]`;
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

  const literal = literalOf(re);
  const m: Matcher = { re, whole: wholeTextPattern(re), context, ...(literal ? { literal } : {}) };
  let outcome: SearchOutcome | undefined;
  const rg = findRipgrep(ctx.options.env ?? commandEnvironment().base, { workspace: ws.root });
  let unreadable: string[] = [];
  // Only the bundled ripgrep (pinned, so its debug lines are known) leaves big files to one read
  // through a verified descriptor; another reads them twice (when picking, and again there).
  const skipsBig = target.isDirectory && rg !== undefined && rg === bundledRipgrep();
  let bigFiles: string[] = [];
  let cutFiles = new Set<string>();
  const runRg = (sorted: boolean) =>
    ripgrepSearch(rg!, ws.root, relTarget, input, re, context, respectGitignore, {
      signal,
      unreadable,
      sorted,
      bigFiles: skipsBig ? bigFiles : undefined,
      cutFiles,
    }).catch(() => undefined);
  // In parallel (as rg runs at a shell) and sorted here; only when the count stops early does it
  // run again in path order (one thread), so the matches counted and shown are the same each time.
  // A file asked for by name needs no picking: it is searched once, below.
  if (rg && target.isDirectory) outcome = await runRg(false);
  if (outcome?.stoppedEarly) {
    unreadable = [];
    bigFiles = [];
    cutFiles = new Set();
    outcome = await runRg(true);
  }
  if (outcome) {
    // ripgrep opens files by name, so a swapped folder could feed it a file from outside: it
    // only picks the files, and what is shown is read again through a verified descriptor.
    const picked = outcome;
    outcome = newOutcome("ripgrep");
    outcome.unsearched.push(...picked.unsearched);
    const again = ripgrepDescriptor(rg!, ws.root, re, context, signal);
    // A file whose matching line was too long for ripgrep's output goes to the built-in search.
    const big: BigFileSearch = (fd, rel, into) => (cutFiles.has(rel) ? Promise.resolve(false) : again(fd, rel, into));
    await searchNamed(ws, [...new Set([...picked.hits.map((h) => h.path), ...bigFiles])].sort(), m, outcome, true, big);
    if (!outcome.stoppedEarly) await searchReported(ws, unreadable, m, outcome);
    outcome.hits.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    outcome.stoppedEarly ||= picked.stoppedEarly;
  }
  if (!outcome) {
    if (target.isDirectory) outcome = await builtInSearch(ws, target.absolute, m, input.glob, respectGitignore, signal);
    else {
      outcome = newOutcome(rg ? "ripgrep" : "built-in");
      const big = rg ? ripgrepDescriptor(rg, ws.root, re, context, signal) : undefined;
      await searchNamed(ws, [relTarget], m, outcome, false, big);
    }
  }
  if (outcome.total === 0) {
    const scope = input.glob ? ` matching "${input.glob}"` : "";
    const unsearched = unsearchedNote(outcome);
    return `No matches for /${input.pattern}/${re.flags} in ${where}${scope} (files ignored by .gitignore and binary files are skipped).${unsearched}`;
  }
  const { lines, shown } = formatHits(outcome.hits, MAX_SEARCH_MATCHES);
  return `${lines.join("\n")}\n\n${footer(outcome, shown, where)}`;
}

export function searchFilesTool(ctx: ToolContext) {
  return declared(
    tool((input, config) => searchFiles(ctx, input, config.signal), {
      name: "search_files",
      description: DESCRIPTION,
      schema: searchFilesSchema,
    }),
    { kind: "read", paths: { path: "path" } },
  );
}
