import { readdirSync } from "node:fs";
import { MAX_CONFIG_BYTES, readRegularTextSync } from "../regular-file.js";
import { kindAt } from "./files.js";
import path from "node:path";

/**
 * Whether a reading git command (status, log, diff...) could run a program that the repository
 * itself names. git reads its repository's config and runs what it names: core.fsmonitor on
 * `git status`, core.pager, diff.external and diff.<driver>.textconv or .command on diffs,
 * filter.<driver>.clean when it compares files, gpg.program with log.showSignature; and hooks
 * (post-index-change runs when `git status` refreshes the index). That config is in the
 * workspace, so it is untrusted: a git command is read-only only when the repository it will
 * use has a config of known-harmless settings, no hooks and no submodules. The person's own
 * system and global git config are trusted. Everything here errs towards "not plain": a
 * question, never a program run.
 */

/** Settings that name no program and change no file: `section.key`, `section.*.key` for any subsection. */
const PLAIN_SETTINGS = new Set(
  [
    "core.{repositoryformatversion filemode bare logallrefupdates ignorecase precomposeunicode symlinks autocrlf eol",
    "safecrlf quotepath abbrev sparsecheckout sparsecheckoutcone checkstat trustctime untrackedcache splitindex",
    "commitgraph multipackindex compression loosecompression preloadindex protecthfs protectntfs longpaths",
    "whitespace warnambiguousrefs} extensions.{objectformat worktreeconfig refstorage}",
    "user.{name email signingkey useconfigonly} init.defaultbranch",
    "remote.*.{url fetch pushurl push tagopt prune prunetags mirror skipfetchall skipdefaultupdate}",
    "branch.*.{remote merge rebase pushremote description} pull.{rebase ff}",
    "push.{default autosetupremote followtags} fetch.{prune prunetags} merge.{ff conflictstyle}",
    "rebase.{autosquash autostash updaterefs}",
    "diff.{renames algorithm colormoved mnemonicprefix noprefix context indentheuristic relative}",
    "log.{decorate date follow abbrevcommit mailmap showroot}",
    "status.{showuntrackedfiles short branch relativepaths aheadbehind renames showstash}",
    "blame.{date showemail showroot} grep.{linenumber patterntype extendedregexp column fullname}",
    "gc.{auto autodetach} index.{version threads} lfs.repositoryformatversion",
    "i18n.{commitencoding logoutputencoding}",
  ]
    .join(" ")
    // `section.{a b}` is `section.a section.b`.
    .replace(/(\S+\.)\{([^}]*)\}/g, (_, section: string, keys: string) =>
      keys
        .split(" ")
        .map((k) => section + k)
        .join(" "),
    )
    .split(" "),
);
/** Sections whose every setting is harmless (colours, advice messages). */
const PLAIN_SECTIONS = new Set(["color", "advice"]);
const FALSE = new Set(["false", "no", "off", "0", ""]);

function plainSetting(
  section: string,
  subsection: string | undefined,
  key: string,
  value: string | undefined,
): boolean {
  if (PLAIN_SECTIONS.has(section)) return true;
  // fsmonitor names a program unless it is turned off.
  if (section === "core" && subsection === undefined && key === "fsmonitor")
    return value !== undefined && FALSE.has(value.trim().toLowerCase());
  return PLAIN_SETTINGS.has(subsection === undefined ? `${section}.${key}` : `${section}.*.${key}`);
}

const HEADER = /^\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\\n]|\\.)*)")?\s*\](.*)$/;
const KEY = /^([A-Za-z][A-Za-z0-9-]*)\s*(?:=(.*))?$/;

/**
 * Whether a git config file holds only plain settings. A small reader of git's syntax that
 * refuses what it does not follow (a line it cannot read makes the file not plain).
 */
export function configIsPlain(text: string): boolean {
  let section: string | undefined;
  let subsection: string | undefined;
  for (const raw of text.split(/\r?\n/)) {
    let line = raw.trim();
    // A value continued on the next line would hide that line from this reader.
    if (line.endsWith("\\")) return false;
    if (line === "" || line.startsWith("#") || line.startsWith(";")) continue;
    if (line.startsWith("[")) {
      const header = HEADER.exec(line);
      if (!header) return false;
      const name = header[1]!.toLowerCase();
      const dot = name.indexOf(".");
      // [section.sub] is the old spelling of [section "sub"].
      section = dot === -1 ? name : name.slice(0, dot);
      subsection = header[2] ?? (dot === -1 ? undefined : name.slice(dot + 1));
      line = header[3]!.trim();
      if (line === "" || line.startsWith("#") || line.startsWith(";")) continue;
    }
    const setting = KEY.exec(line);
    if (!setting || section === undefined) return false;
    if (!plainSetting(section, subsection, setting[1]!.toLowerCase(), setting[2])) return false;
  }
  return true;
}

/** A file of the repository, read without blocking (a FIFO there is refused: NotRegularFileError). */
function readIfThere(file: string): string | undefined {
  try {
    return readRegularTextSync(file, { follow: true, maxBytes: MAX_CONFIG_BYTES });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
}

const exists = (p: string) => kindAt(p) !== undefined;

/** What git takes for a git directory: HEAD, and objects/ (or a commondir file, for a worktree's). */
function isGitDir(dir: string): boolean {
  return exists(path.join(dir, "HEAD")) && (exists(path.join(dir, "objects")) || exists(path.join(dir, "commondir")));
}

interface Repository {
  gitDir: string;
  /** The working tree's top, when not bare. */
  top?: string;
}

/**
 * The repository git uses from `dir`, found as git finds it (walking up: a `.git` folder, a
 * `.git` file naming one, or the folder itself when it is a git directory); null when there is
 * none; "unknown" when something is there that we cannot read as git would.
 */
export function discoverRepository(dir: string): Repository | null | "unknown" {
  for (let current = path.resolve(dir); ; current = path.dirname(current)) {
    const dotGit = path.join(current, ".git");
    const entry = kindAt(dotGit, false);
    if (entry !== undefined) {
      if (entry === "file") {
        let text: string | undefined;
        try {
          text = readIfThere(dotGit);
        } catch {
          return "unknown";
        }
        const match = /^gitdir: (.+)$/m.exec(text ?? "");
        if (!match) return "unknown";
        const gitDir = path.resolve(current, match[1]!.trim());
        return isGitDir(gitDir) ? { gitDir, top: current } : "unknown";
      }
      if (isGitDir(dotGit)) return { gitDir: dotGit, top: current };
    }
    if (isGitDir(current)) return { gitDir: current };
    if (current === path.dirname(current)) return null;
  }
}

/** Hooks git would run: anything in hooks/ but git's own `*.sample` files. */
function hasHooks(gitDir: string): boolean {
  try {
    return readdirSync(path.join(gitDir, "hooks")).some((name) => !name.endsWith(".sample"));
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== "ENOENT";
  }
}

/** Whether the repository's own files name no program git could run, and it has no submodules. */
export function repositoryIsPlain(repo: Repository): boolean {
  try {
    const dirs = [repo.gitDir];
    const common = readIfThere(path.join(repo.gitDir, "commondir"));
    if (common !== undefined) dirs.push(path.resolve(repo.gitDir, common.trim()));
    for (const dir of dirs) {
      for (const name of ["config", "config.worktree"]) {
        const text = readIfThere(path.join(dir, name));
        if (text !== undefined && !configIsPlain(text)) return false;
      }
      if (hasHooks(dir) || exists(path.join(dir, "modules"))) return false;
    }
    return !(repo.top && exists(path.join(repo.top, ".gitmodules")));
  } catch {
    return false;
  }
}

/** Global options that make git use another repository or run another program: never read-only. */
const REDIRECTING = ["--git-dir", "--work-tree", "--bare", "--exec-path", "-c", "--config-env"];

/**
 * Whether `git <args>`, run from any of `cwds` (null: a folder only known at run time), uses
 * only plain repositories (or none). `-C <dir>` is followed.
 */
export function gitRunsNothingElse(
  args: readonly { value: string; dynamic: boolean }[],
  cwds: readonly (string | null)[],
): boolean {
  let dirs = [...cwds];
  for (let i = 0; i < args.length && args[i]!.value.startsWith("-"); i++) {
    const v = args[i]!.value;
    if (REDIRECTING.some((o) => v === o || v.startsWith(`${o}=`))) return false;
    if (v === "-C") {
      const next = args[++i];
      if (!next || next.dynamic) return false;
      dirs = dirs.map((d) => (d === null ? null : path.resolve(d, next.value)));
    }
  }
  return dirs.every((dir) => {
    if (dir === null) return false;
    const repo = discoverRepository(dir);
    if (repo === "unknown") return false;
    return repo === null || repositoryIsPlain(repo);
  });
}
