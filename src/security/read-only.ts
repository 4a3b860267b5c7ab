import path from "node:path";
import { gitRunsNothingElse } from "./git-repo.js";
import type { Word } from "./shell-parse.js";

/**
 * The built-in read-only list: programs, and the options that keep them from writing files or
 * running other programs. A line whose every command passes here (and which redirects into no
 * file, and sets no variable that changes what programs do) runs without asking in every
 * approval mode. Anything not listed, or listed with an option not understood as safe, falls
 * back to the approval mode.
 */

type Check = (args: Word[]) => boolean;

const values = (args: Word[]) => args.map((a) => a.value);
/** No argument is one of these options (also as `--opt=value` or a prefix git would accept). */
const without =
  (...banned: string[]): Check =>
  (args) =>
    values(args).every(
      (v) =>
        !banned.some(
          (b) =>
            v === b ||
            v.startsWith(`${b}=`) ||
            (b.startsWith("--") && v.startsWith("--") && v.length > 3 && b.startsWith(v.split("=")[0]!)),
        ),
    );
const any: Check = () => true;
/** At most `n` arguments that are not options (`uniq in out` writes `out`). */
const positionals = (args: Word[]) => args.filter((a) => !a.value.startsWith("-") || a.value === "-");
const both =
  (...checks: Check[]): Check =>
  (args) =>
    checks.every((c) => c(args));

/** sed scripts that write files (`w`, `W`, `s///w`) or run commands (`e`, `s///e`). */
function sedScriptIsSafe(script: string): boolean {
  return (
    !/(^|[;{}\n]\s*)([0-9,$/!]*\s*)?[wWe](\s|$)/.test(script) &&
    !/(^|[;{}\n\s])s(.).*\2.*\2[gpiImM0-9]*[we]/.test(script)
  );
}

function sedIsReadOnly(args: Word[]): boolean {
  const vs = values(args);
  if (
    vs.some(
      (v) =>
        /^-[A-Za-z]*i/.test(v) ||
        v.startsWith("--in-place") ||
        v === "-s" ||
        v.startsWith("--separate") ||
        v === "-f" ||
        v.startsWith("--file"),
    )
  )
    return false;
  const scripts: string[] = [];
  vs.forEach((v, i) => {
    if (v === "-e" || v === "--expression") scripts.push(vs[i + 1] ?? "");
    else if (v.startsWith("--expression=")) scripts.push(v.slice(13));
  });
  if (scripts.length === 0) {
    const first = vs.find((v) => !v.startsWith("-"));
    if (first !== undefined) scripts.push(first);
  }
  return scripts.every(sedScriptIsSafe);
}

/** find without actions that delete, run programs or write files. */
const findIsReadOnly = without(
  "-delete",
  "-exec",
  "-execdir",
  "-ok",
  "-okdir",
  "-fprint",
  "-fprint0",
  "-fprintf",
  "-fls",
);

const GIT_GLOBAL_BANNED = ["-c", "--config-env", "--exec-path", "--upload-pack", "--receive-pack"];
const GIT_BANNED = [
  "--output",
  "--ext-diff",
  "--textconv",
  "-o",
  "--upload-pack",
  "--exec",
  "--open-files-in-pager",
  "-O",
];

const GIT_READ: Record<string, Check> = {
  status: any,
  log: any,
  diff: any,
  show: any,
  "rev-parse": any,
  "ls-files": any,
  "ls-tree": any,
  blame: any,
  describe: any,
  shortlog: any,
  grep: any,
  "cat-file": any,
  "rev-list": any,
  "show-ref": any,
  "merge-base": any,
  "name-rev": any,
  "diff-tree": any,
  "diff-files": any,
  "diff-index": any,
  "for-each-ref": any,
  "count-objects": any,
  whatchanged: any,
  version: any,
  branch: (args) => {
    if (
      !without(
        "-d",
        "-D",
        "-m",
        "-M",
        "-c",
        "-C",
        "--delete",
        "--move",
        "--copy",
        "-u",
        "--set-upstream-to",
        "--unset-upstream",
        "--edit-description",
        "-f",
        "--force",
        "-t",
        "--track",
        "--no-track",
        "--create-reflog",
      )(args)
    )
      return false;
    const listing = values(args).some(
      (v) =>
        ["-l", "--list", "-a", "--all", "-r", "--remotes", "-v", "-vv", "--show-current"].includes(v) ||
        /^--(contains|no-contains|merged|no-merged|points-at)/.test(v),
    );
    return (
      listing ||
      positionalsOf(args, [
        "--sort",
        "--format",
        "--contains",
        "--no-contains",
        "--merged",
        "--no-merged",
        "--points-at",
        "--color",
        "--column",
      ]).length === 0
    );
  },
  tag: (args) => {
    if (
      !without(
        "-d",
        "--delete",
        "-a",
        "--annotate",
        "-s",
        "--sign",
        "-u",
        "--local-user",
        "-m",
        "--message",
        "-F",
        "--file",
        "-f",
        "--force",
        "-e",
        "--edit",
      )(args)
    )
      return false;
    return (
      values(args).some((v) => v === "-l" || v === "--list") ||
      positionalsOf(args, ["--sort", "--format", "--contains", "--points-at", "-n"]).length === 0
    );
  },
  remote: (args) => {
    const rest = positionalsOf(args, []);
    return rest.length === 0 || ["show", "get-url"].includes(rest[0]!.value);
  },
  stash: (args) => ["list", "show"].includes(args[0]?.value ?? ""),
  reflog: (args) => args.length === 0 || args[0]!.value === "show" || args[0]!.value.startsWith("-"),
  worktree: (args) => args[0]?.value === "list",
  config: (args) => {
    const vs = values(args);
    const reading =
      ["get", "list"].includes(vs[0] ?? "") ||
      vs.some((v) => /^--(get|get-all|get-regexp|get-urlmatch|list)$/.test(v) || v === "-l");
    return (
      reading &&
      without(
        "--add",
        "--unset",
        "--unset-all",
        "--replace-all",
        "--edit",
        "-e",
        "--rename-section",
        "--remove-section",
        "set",
        "unset",
      )(args)
    );
  },
};

function positionalsOf(args: Word[], valued: readonly string[]): Word[] {
  const out: Word[] = [];
  for (let i = 0; i < args.length; i++) {
    const v = args[i]!.value;
    if (v === "--") return [...out, ...args.slice(i + 1)];
    if (v.startsWith("-") && v !== "-") {
      if (valued.includes(v)) i++;
      continue;
    }
    out.push(args[i]!);
  }
  return out;
}

function gitIsReadOnly(args: Word[]): boolean {
  let i = 0;
  while (i < args.length && args[i]!.value.startsWith("-")) {
    const v = args[i]!.value;
    if (GIT_GLOBAL_BANNED.some((b) => v === b || v.startsWith(`${b}=`))) return false;
    i += ["-C", "--git-dir", "--work-tree", "--namespace"].includes(v) ? 2 : 1;
  }
  const sub = args[i]?.value;
  const rest = args.slice(i + 1);
  if (sub === undefined) return values(args).every((v) => ["--version", "--help", "-h"].includes(v));
  const check = GIT_READ[sub];
  return Boolean(check) && without(...GIT_BANNED)(rest) && check!(rest);
}

const READ_ONLY: Record<string, Check> = {
  ls: any,
  dir: any,
  cat: any,
  tac: any,
  head: any,
  tail: any,
  wc: any,
  nl: any,
  grep: any,
  egrep: any,
  fgrep: any,
  rg: without("--pre", "--hostname-bin", "--pre-glob", "--search-zip", "-z"),
  ag: any,
  sed: sedIsReadOnly,
  find: findIsReadOnly,
  fd: without("-x", "--exec", "-X", "--exec-batch"),
  fdfind: without("-x", "--exec", "-X", "--exec-batch"),
  tree: without("-o", "--output"),
  git: gitIsReadOnly,
  pwd: any,
  echo: any,
  printf: any,
  true: any,
  false: any,
  test: any,
  "[": any,
  cd: any,
  date: without("-s", "--set"),
  whoami: any,
  id: any,
  uname: any,
  hostname: (args) => args.every((a) => a.value.startsWith("-")),
  which: any,
  type: any,
  file: without("-C", "--compile"),
  stat: any,
  du: any,
  df: any,
  basename: any,
  dirname: any,
  realpath: any,
  readlink: any,
  sort: without("-o", "--output", "--compress-program"),
  uniq: (args) => positionals(args).length <= 1,
  cut: any,
  tr: any,
  diff: any,
  cmp: any,
  comm: any,
  column: any,
  jq: any,
  seq: any,
  expr: any,
  printenv: any,
  env: (args) => args.every((a) => ["-0", "--null"].includes(a.value)),
  sha256sum: any,
  sha1sum: any,
  md5sum: any,
  cksum: any,
  od: any,
  hexdump: any,
  xxd: both(
    without("-r", "-revert"),
    (args) =>
      positionalsOf(args, ["-l", "-len", "-s", "-seek", "-c", "-cols", "-g", "-groupsize", "-o", "-offset"]).length <=
      1,
  ),
  strings: any,
  ps: any,
  nproc: any,
  free: any,
  uptime: any,
  less: () => false,
};

/** Programs asked only for their version or help (`node --version`, `npm -v`). */
const VERSION_ONLY = new Set(["--version", "-v", "-V", "version", "--help", "-h"]);

/** Whether one command (after unwrapping) is on the read-only list with safe options. */
export function isReadOnly(words: readonly Word[]): boolean {
  const [name, ...args] = words;
  if (!name || name.dynamic) return false;
  const program = path.basename(name.value);
  if (args.length === 1 && VERSION_ONLY.has(args[0]!.value) && !args[0]!.dynamic) return true;
  const check = READ_ONLY[program];
  // Run-time words are arguments only (files, patterns); options must be known to be checked.
  if (!check || args.some((a) => a.dynamic && a.value.startsWith("-"))) return false;
  return check(args);
}

/**
 * Whether one command is read-only where it runs (`cwds`: every folder the line may be in, null
 * when only known at run time): on the list, and for git also using no repository whose own
 * files name a program git would run (security/git-repo.ts).
 */
export function isReadOnlyIn(words: readonly Word[], cwds: readonly (string | null)[]): boolean {
  if (!isReadOnly(words)) return false;
  if (path.basename(words[0]!.value) !== "git") return true;
  return gitRunsNothingElse(words.slice(1), cwds);
}

/** Wrappers that run a command without changing what it may do (`timeout 5 ls`). */
export const READ_ONLY_WRAPPERS: ReadonlySet<string> = new Set([
  "timeout",
  "nice",
  "command",
  "builtin",
  "time",
  "stdbuf",
  "nohup",
  "xargs",
]);

/** Variables that only change formatting (`LC_ALL=C sort`), not which programs run or what they read. */
export function isHarmlessAssignment(name: string): boolean {
  return /^(LC_[A-Z]+|LANG|LANGUAGE|TZ|NO_COLOR|FORCE_COLOR|CLICOLOR(_FORCE)?|COLUMNS|LINES|TERM|GREP_COLORS?)$/.test(
    name,
  );
}
