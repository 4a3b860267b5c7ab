import { statSync } from "node:fs";
import path from "node:path";
import { HOME_SECRETS, locate } from "./locations.js";
import type { StdinSource, Word } from "./shell-parse.js";
import { type State, danger, opaque, shorten } from "./classify-state.js";
import {
  SHELLS,
  basename,
  checkInterpreter,
  checkShell,
  checkSourced,
  examine,
  interpreterFamily,
  joinWords,
  optionValue,
  recordLink,
  runScript,
  skipOptions,
  checkTarget,
  positional,
} from "./classify-unwrap.js";

/** The per-command table of the classifier: what the innermost command does (rm, git, find, tar...). */

/** Checks what the innermost command does; true when it only runs a script that was read. */
export function checkLeaf(
  words: Word[],
  stdin: StdinSource | undefined,
  text: string,
  state: State,
  depth: number,
): boolean {
  const name = basename(words[0]);
  const args = words.slice(1);
  checkCredentials(words, state);
  if (SHELLS.has(name)) return checkShell(name, args, stdin, state, depth);
  const family = interpreterFamily(name);
  if (family) {
    checkInterpreter(name, family, args, stdin, state);
    if (family === "perl") checkInPlace("perl", args, state);
    return false;
  }
  if (
    /^mkfs(\..+)?$/.test(name) ||
    ["mke2fs", "mkswap", "fdisk", "sfdisk", "cfdisk", "gdisk", "sgdisk", "parted", "wipefs"].includes(name)
  ) {
    danger(state, `${name} formats or repartitions a disk`);
    return false;
  }
  if (["shutdown", "reboot", "halt", "poweroff"].includes(name)) {
    danger(state, `${name} stops the machine`);
    return false;
  }
  if (
    [
      "blkdiscard",
      "hdparm",
      "mdadm",
      "lvremove",
      "vgremove",
      "pvremove",
      "cryptsetup",
      "zpool",
      "zfs",
      "dmsetup",
      "badblocks",
    ].includes(name)
  ) {
    danger(state, `${name} changes or erases disks`);
    return false;
  }
  if (name === "eval") return args.length > 0 && runScript(joinWords(args), "eval", state, depth);
  if (name === "source" || name === ".") return checkSourced(name, args, state, depth, stdin);
  LEAF_CHECKS[name]?.(args, state, depth, { name, text, stdin });
  return false;
}

interface LeafInfo {
  name: string;
  text: string;
  stdin: StdinSource | undefined;
}

type LeafCheck = (args: Word[], state: State, depth: number, info: LeafInfo) => void;

/**
 * Any argument naming a credentials file or folder asks: `cat ~/.ssh/id_rsa`, and the spellings
 * that do not name it literally: a pattern that can match it (`~/.ss?/id_rsa`), another user's
 * home (`~root/.ssh`, `/home/bob/.ssh`), a relative path after `cd ~` or after a `cd` into a
 * folder only known at run time (`cd "$(echo ~)" && cat .ssh/id_rsa`).
 */
function checkCredentials(words: Word[], state: State): void {
  const cwdOutside = state.cwd === null || !isInsideWorkspace(state.cwd, state);
  for (const w of words.slice(1)) {
    const value = w.value.includes("=") && w.value.startsWith("-") ? w.value.slice(w.value.indexOf("=") + 1) : w.value;
    const anchored = /^[~/]/.test(value);
    if (value === "" || (!anchored && !cwdOutside)) continue;
    const at = anchored ? locate({ ...w, value }, state.cwd, state.places) : undefined;
    if (at?.kind === "secret" || (!w.dynamic && reachesCredentials(value, state))) {
      danger(state, `\`${shorten(w.raw, 60)}\` touches credentials in the home folder`);
    }
  }
}

function isInsideWorkspace(dir: string, state: State): boolean {
  const ws = state.places.workspace;
  return dir === ws || dir.startsWith(`${ws}/`);
}

/** A glob segment as a regular expression; a segment not starting with "." never matches a dot name. */
function segmentPattern(segment: string): RegExp {
  let out = segment.startsWith(".") ? "" : "(?!\\.)";
  for (let i = 0; i < segment.length; i++) {
    const c = segment[i]!;
    if (c === "*") out += "[^/]*";
    else if (c === "?") out += "[^/]";
    else if (c === "[") {
      const close = segment.indexOf("]", i + 2);
      if (close === -1) out += "\\[";
      else {
        const body = segment
          .slice(i + 1, close)
          .replace(/^!/, "^")
          .replace(/\\/g, "\\\\");
        out += `[${body}]`;
        i = close;
      }
    } else out += c.replace(/[.+^${}()|\\]/g, "\\$&");
  }
  return new RegExp(`^${out}$`);
}

/**
 * Whether `value` (a path, maybe a pattern) can name a credentials path of a home folder: ours,
 * another user's (`~bob/…`, `/root/…`, `/home/bob/…`, read as if it were ours), or ours as the
 * folder a relative path starts from when the line has left the workspace.
 */
function reachesCredentials(value: string, state: State): boolean {
  const home = state.places.home.replace(/\/+$/, "");
  let rest: string | undefined;
  const user = /^~[^/]*(\/.*)?$/.exec(value);
  const other = /^\/(?:root|home\/[^/]+)(\/.*)?$/.exec(value);
  if (user) rest = user[1] ?? "";
  else if (other) rest = other[1] ?? "";
  else if (value.startsWith("/")) rest = value.startsWith(`${home}/`) ? value.slice(home.length) : undefined;
  else if (state.cwd === null) rest = `/${value}`;
  else if (!isInsideWorkspace(state.cwd, state)) {
    const absolute = path.resolve(state.cwd, value);
    rest = absolute.startsWith(`${home}/`) ? absolute.slice(home.length) : undefined;
  }
  if (rest === undefined) return false;
  const wanted = path.posix
    .normalize(rest === "" ? "/" : rest)
    .split("/")
    .filter((x) => x !== "" && x !== ".");
  if (wanted.length === 0) return false;
  const patterns = wanted.map(segmentPattern);
  // It names a secret, something inside one, or (through a pattern) a folder holding one (`cp -r ~/.c* /tmp`).
  return HOME_SECRETS.some((secret) => {
    const parts = secret.split("/");
    const n = Math.min(parts.length, patterns.length);
    for (let k = 0; k < n; k++) if (!patterns[k]!.test(parts[k]!)) return false;
    return patterns.length >= parts.length || wanted.slice(0, n).some((seg) => /[*?[]/.test(seg));
  });
}

const hasFlag = (args: Word[], short: string, long: string[] = []) =>
  args.some(
    (a) =>
      !a.dynamic &&
      ((/^-[A-Za-z]+$/.test(a.value) && a.value.slice(1).includes(short)) || long.includes(a.value.split("=")[0]!)),
  );

function checkDelete(verb: string, args: Word[], state: State, recursive: boolean, stdin?: StdinSource): void {
  for (const target of positional(args)) {
    if (target.kind === "xargs") {
      checkXargsTargets(verb, stdin, state, recursive);
      continue;
    }
    // A variable or substitution the line could not read may name anything (`rm -f "$(echo ~/.x)"`).
    const computed = /[$`]/.test(target.raw);
    checkTarget(target, `${verb} deletes`, state, {
      unknownAsks: recursive || computed,
      wholeWorkspaceAsks: recursive,
      tempIsOutside: true,
      gitAsks: true,
    });
  }
}

/** `… | xargs rm`: the paths stdin holds, when the line says what they are; asks when it does not. */
function checkXargsTargets(verb: string, stdin: StdinSource | undefined, state: State, recursive: boolean): void {
  const known = xargsTargets(stdin);
  if (!known) {
    danger(state, `${verb} deletes paths read from stdin, which may lie outside the workspace`);
    return;
  }
  for (const t of known.targets) {
    if (known.whole && locate(t, state.cwd, state.places).kind === "workspace") {
      danger(state, `${verb} deletes every file of the whole workspace (the paths come from stdin)`);
      continue;
    }
    checkTarget(t, `${verb} deletes`, state, {
      unknownAsks: true,
      wholeWorkspaceAsks: recursive,
      tempIsOutside: true,
      gitAsks: true,
    });
  }
}

/** git options (`-c KEY=…`, `git config KEY …`) whose value is a program git runs later. */
const GIT_PROGRAM_KEYS =
  /^(core\.(pager|editor|fsmonitor|sshcommand|hookspath|gitproxy|askpass|alternaterefscommand|worktree)|alias\..+|pager\..+|.+\.textconv|diff\..+\.command|diff\.external|merge\..+\.driver|filter\..+\.(clean|smudge|process)|credential\.(.+\.)?helper|gpg\.(.+\.)?program|sequence\.editor|uploadpack\.packobjectshook|remote\..+\.(uploadpack|receivepack|vcs|proxy)|protocol\..+\.allow|include\.path|includeif\..+|init\.templatedir|web\.browser|browser\..+\.(cmd|path)|man\..+\.(cmd|path)|mergetool\..+\.cmd|difftool\..+\.cmd|http\.proxy|safe\.directory|submodule\..+\.update)$/i;

/** A long option as git reads it: any unique prefix (`--ha` is `--hard`). */
const isLong = (value: string, option: string, shortest: number) => {
  const flag = value.split("=")[0]!;
  return flag.startsWith("--") && flag.length >= shortest && option.startsWith(flag);
};

function checkGit(args: Word[], state: State, depth: number): void {
  const i = skipOptions(args, ["-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path", "--config-env"]);
  const globals = args.slice(0, i);
  const config = new Map<string, string>();
  globals.forEach((a, j) => {
    let pair: string | undefined;
    if (a.value === "-c") pair = globals[j + 1]?.value;
    else if (a.value.startsWith("--config-env"))
      pair = (a.value.includes("=") ? a.value.split(/=(.*)/s)[1] : globals[j + 1]?.value) ?? "";
    if (pair === undefined) return;
    const [key, value = "true"] = pair.split(/=(.*)/s);
    config.set(key!.toLowerCase(), value);
    if (GIT_PROGRAM_KEYS.test(key!)) danger(state, `\`git -c ${shorten(pair, 50)}\` makes git run a program`);
  });
  if (globals.some((a) => a.value.startsWith("--exec-path") && a.value.includes("=")))
    opaque(state, "git --exec-path runs git's commands from another folder");
  const sub = args[i]?.value;
  const rest = args.slice(i + 1);
  const values = rest.map((a) => a.value);
  const has = (...flags: string[]) => values.some((v) => flags.includes(v.split("=")[0]!));
  const hasLong = (option: string, shortest: number) => values.some((v) => isLong(v, option, shortest));
  for (const a of rest) {
    if (/^--(upload-pack|receive-pack|exec)(=|$)/.test(a.value))
      opaque(state, `git ${sub ?? ""} ${a.value.split("=")[0]} runs a program`);
    if (/^--(ext-diff|textconv)$/.test(a.value))
      opaque(state, `git ${sub ?? ""} ${a.value} runs programs set in git's configuration`);
    if (/^ext::/.test(a.value)) opaque(state, "an ext:: remote runs a program");
  }
  checkOutputOption("git", rest, ["--output"], state);
  switch (sub) {
    case "reset":
      if (hasLong("--hard", 4) || hasLong("--merge", 4)) danger(state, "git reset --hard discards uncommitted changes");
      break;
    case "clean": {
      const requireForce = (config.get("clean.requireforce") ?? "true").toLowerCase();
      const forced = hasFlag(rest, "f") || hasLong("--force", 3) || ["false", "no", "off", "0"].includes(requireForce);
      if (forced && !hasFlag(rest, "n") && !hasLong("--dry-run", 3))
        danger(state, "git clean -f deletes untracked files");
      break;
    }
    case "push":
      if (
        hasFlag(rest, "f") ||
        hasFlag(rest, "d") ||
        hasLong("--force", 5) ||
        hasLong("--force-with-lease", 9) ||
        hasLong("--force-if-includes", 9) ||
        hasLong("--mirror", 4) ||
        hasLong("--delete", 4) ||
        hasLong("--prune", 5)
      ) {
        danger(state, "git push --force (or --delete) rewrites or deletes history on the remote");
      } else if (
        positional(rest)
          .slice(1)
          .some((a) => a.value.startsWith("+") || a.value.startsWith(":"))
      ) {
        danger(state, "git push with a +refspec or :refspec rewrites or deletes history on the remote");
      }
      break;
    case "checkout":
      if (
        has("--", ".", "--ours", "--theirs") ||
        checkoutNamesPaths(rest, state) ||
        hasFlag(rest, "f") ||
        hasLong("--force", 5) ||
        hasFlag(rest, "p") ||
        hasLong("--patch", 4)
      ) {
        danger(state, "git checkout of paths (or -f) discards uncommitted changes");
      }
      break;
    case "switch":
      if (hasFlag(rest, "f") || hasLong("--force", 5) || hasLong("--discard-changes", 4) || has("-C"))
        danger(state, "git switch --discard-changes discards uncommitted changes");
      break;
    case "restore":
      if (!(has("--staged", "-S") || hasLong("--staged", 5)) || has("--worktree", "-W"))
        danger(state, "git restore discards uncommitted changes");
      break;
    case "stash":
      if (values[0] === "drop" || values[0] === "clear") danger(state, `git stash ${values[0]} deletes saved changes`);
      break;
    case "branch":
      if (
        hasFlag(rest, "D") ||
        hasFlag(rest, "M") ||
        hasFlag(rest, "C") ||
        ((hasFlag(rest, "d") || hasLong("--delete", 4)) && (hasFlag(rest, "f") || hasLong("--force", 4)))
      ) {
        danger(state, "git branch -D (or -M) deletes or overwrites a branch that may not be merged");
      }
      break;
    case "tag":
      if (hasFlag(rest, "d") || hasLong("--delete", 4) || hasFlag(rest, "f") || hasLong("--force", 4))
        danger(state, "git tag -d (or -f) deletes or moves a tag");
      break;
    case "rebase":
      if (
        !values.some((v) =>
          ["--abort", "--quit", "--show-current-patch", "--continue", "--skip", "--edit-todo"].includes(v),
        )
      )
        danger(state, "git rebase rewrites the branch's history");
      break;
    case "commit":
      if (hasLong("--amend", 4)) danger(state, "git commit --amend rewrites the last commit");
      break;
    case "filter-branch":
    case "filter-repo":
    case "replace":
      danger(state, `git ${sub} rewrites the repository's history`);
      break;
    case "reflog":
      if (values[0] === "expire" || values[0] === "delete")
        danger(state, `git reflog ${values[0]} deletes recovery points`);
      break;
    case "gc":
      if (values.some((v) => v.startsWith("--prune")))
        danger(state, "git gc --prune deletes unreachable commits, the last way to recover lost work");
      break;
    case "prune":
      danger(state, "git prune deletes unreachable commits, the last way to recover lost work");
      break;
    case "update-ref":
      if (hasFlag(rest, "d") || has("--stdin")) danger(state, "git update-ref changes or deletes branches directly");
      break;
    case "rm":
      if (hasFlag(rest, "f") || hasLong("--force", 4))
        danger(state, "git rm -f deletes files with uncommitted changes");
      break;
    case "worktree":
      if (values[0] === "remove" && (has("-f", "--force") || hasFlag(rest, "f")))
        danger(state, "git worktree remove --force deletes uncommitted changes");
      break;
    case "checkout-index":
    case "read-tree":
      if (hasFlag(rest, "f") || has("--reset", "-u")) danger(state, `git ${sub} overwrites files in the working tree`);
      break;
    case "config": {
      const words = positional(rest, ["-f", "--file", "--blob", "--type", "--default", "--comment"]);
      const key = ["set", "unset", "get", "list", "edit"].includes(words[0]?.value ?? "") ? words[1] : words[0];
      const writes =
        words.length >= 2 ||
        has("--unset", "--unset-all", "--add", "--replace-all", "--edit", "-e") ||
        words[0]?.value === "set";
      if (writes && key && GIT_PROGRAM_KEYS.test(key.value))
        danger(state, `git config ${key.value} makes git run a program`);
      if (writes && has("--global", "--system"))
        danger(state, "git config --global changes settings outside the workspace");
      const file = optionValue(rest, ["-f", "--file"]);
      if (writes && file) checkTarget(file, "git config writes to", state);
      break;
    }
    case "difftool":
    case "mergetool": {
      const tool = optionValue(rest, ["-x", "--extcmd"]);
      if (tool) runScript(tool, `git ${sub} -x`, state, depth);
      break;
    }
    case "submodule":
      if (values[0] === "foreach")
        runScript(joinWords(positional(rest.slice(1))), "git submodule foreach", state, depth);
      break;
    case "bisect":
      if (values[0] === "run" && rest.length > 1)
        examine(rest.slice(1), undefined, `git bisect ${values.join(" ")}`, state, depth);
      break;
  }
}

/**
 * `git checkout <rev> <paths>` (no `--`) overwrites those paths with the revision's copy, like
 * `git checkout -- <paths>`: two or more operands (after the options and their values), or one
 * that is an existing file, are paths.
 */
function checkoutNamesPaths(rest: Word[], state: State): boolean {
  if (rest.some((a) => a.value.startsWith("--pathspec-from-file"))) return true;
  const operands = positional(rest, ["-b", "-B", "--orphan", "--conflict"]);
  if (operands.length >= 2) return true;
  const only = operands[0];
  if (!only || only.dynamic || state.cwd === null) return false;
  try {
    return statSync(path.resolve(state.cwd, only.value)).isFile();
  } catch {
    return false;
  }
}

/** Tests that pick files by name: without one, `find . -delete` empties the workspace. */
const FIND_NAME_TESTS = [
  "-name",
  "-iname",
  "-path",
  "-ipath",
  "-wholename",
  "-iwholename",
  "-regex",
  "-iregex",
  "-lname",
  "-ilname",
  "-newer",
  "-samefile",
  "-inum",
  "-links",
];

/** Programs that delete, move or overwrite the paths they are given. */
const DESTRUCTIVE = new Set(["rm", "unlink", "rmdir", "shred", "rimraf", "truncate", "mv", "srm", "wipe"]);

/** Programs whose output is paths under the folders they are given (the cwd by default). */
const LISTS_PATHS_UNDER = new Set(["find", "fd", "fdfind", "ls", "git", "rg", "grep"]);

/**
 * What `xargs` hands a destructive command, as far as the line tells: the words `echo`/`printf`
 * print, the folders `find` walks (everything in them when no name test narrows it), the cwd
 * for `ls`/`git ls-files`/`grep -l`; undefined when it cannot be known (`cat list | xargs rm`).
 */
function xargsTargets(stdin: StdinSource | undefined): { targets: Word[]; whole: boolean } | undefined {
  const word = (value: string): Word => ({ value, dynamic: false, raw: value, kind: "word" });
  if (stdin?.kind === "text") {
    if (stdin.dynamic) return undefined;
    return { targets: stdin.text.split(/\s+/).filter(Boolean).map(word), whole: false };
  }
  if (stdin?.kind !== "pipe" || stdin.from.length !== 1) return undefined;
  const [cmd, ...args] = stdin.from[0]!.words;
  if (!cmd || cmd.dynamic || args.some((a) => a.dynamic)) return undefined;
  const name = basename(cmd);
  if (name === "echo" || name === "printf") {
    const printed = (name === "printf" ? args.slice(1) : args.filter((a) => !/^-[neE]+$/.test(a.value)))
      .flatMap((a) => a.value.split(/\s+/))
      .filter(Boolean);
    return { targets: printed.map(word), whole: false };
  }
  if (!LISTS_PATHS_UNDER.has(name)) return undefined;
  if (name === "git" && !["ls-files", "diff", "grep"].includes(args[0]?.value ?? "")) return undefined;
  const firstTest = args.findIndex((a) => /^[-(!]/.test(a.value));
  const roots = name === "find" ? args.slice(0, firstTest === -1 ? args.length : firstTest) : [];
  const dirs = roots.length > 0 ? roots : name === "ls" ? positional(args) : [];
  const filtered = name !== "find" || args.some((a) => FIND_NAME_TESTS.includes(a.value));
  // A narrowed find names some files under its folders; anything else, everything in them.
  const under = (dirs.length > 0 ? dirs : [word(".")]).map((d) => ({
    ...d,
    value: `${d.value.replace(/\/+$/, "")}/${name === "find" && filtered ? "{}" : "*"}`,
  }));
  return { targets: under, whole: (name === "find" && !filtered) || name === "ls" };
}

function checkFind(args: Word[], state: State, depth: number, info: LeafInfo): void {
  let i = 0;
  const roots: Word[] = [];
  while (i < args.length && !(args[i]!.value.startsWith("-") || ["(", "!", ")"].includes(args[i]!.value)))
    roots.push(args[i++]!);
  if (roots.length === 0) roots.push({ value: ".", dynamic: false, raw: ".", kind: "word" });
  const under = (root: Word): Word => ({
    ...root,
    value: `${root.value.replace(/\/+$/, "")}/{}`,
    raw: `${root.raw.replace(/\/+$/, "")}/{}`,
  });
  for (; i < args.length; i++) {
    const a = args[i]!.value;
    if (a === "-delete") {
      const filtered = args.some((w) => FIND_NAME_TESTS.includes(w.value));
      for (const root of roots) {
        const at = locate(root, state.cwd, state.places);
        if (!filtered && at.kind === "workspace") danger(state, `find ${root.raw} -delete deletes the whole workspace`);
        else
          checkTarget(under(root), "find -delete deletes files under", state, {
            unknownAsks: true,
            tempIsOutside: true,
          });
      }
    } else if (["-exec", "-execdir", "-ok", "-okdir"].includes(a)) {
      const end = args.findIndex((w, j) => j > i && (w.value === ";" || w.value === "+"));
      const inner = args.slice(i + 1, end === -1 ? args.length : end);
      // Without a name test, `find . -exec rm {} +` reaches every file of the workspace.
      const filtered = args.some((w) => FIND_NAME_TESTS.includes(w.value));
      const program = basename(inner.find((w) => !/^[A-Za-z_][A-Za-z0-9_]*=/.test(w.value)));
      if (!filtered && DESTRUCTIVE.has(program) && inner.some((w) => w.value.includes("{}"))) {
        for (const root of roots) {
          if (locate(root, state.cwd, state.places).kind === "workspace")
            danger(state, `find ${root.raw} ${a} ${program} deletes or changes every file of the whole workspace`);
        }
      }
      for (const root of roots) {
        const found = under(root);
        const words = inner.map((w) =>
          w.value.includes("{}")
            ? {
                ...w,
                value: w.value.split("{}").join(found.value),
                raw: w.raw.split("{}").join(found.raw),
                dynamic: w.dynamic || found.dynamic,
              }
            : w,
        );
        if (words.length > 0) examine(words, undefined, info.text, state, depth);
      }
      i = end === -1 ? args.length : end;
    } else if (["-fprint", "-fprint0", "-fprintf", "-fls"].includes(a) && args[i + 1]) {
      checkTarget(args[i + 1]!, `find ${a} writes to`, state);
    }
  }
}

export const LEAF_CHECKS: Record<string, LeafCheck> = {
  rm: (args, state, _depth, info) =>
    checkDelete("rm", args, state, hasFlag(args, "r", ["--recursive"]) || hasFlag(args, "R"), info.stdin),
  unlink: (args, state, _depth, info) => checkDelete("unlink", args, state, false, info.stdin),
  rmdir: (args, state, _depth, info) => checkDelete("rmdir", args, state, false, info.stdin),
  rimraf: (args, state, _depth, info) => checkDelete("rimraf", args, state, true, info.stdin),
  shred: (args, state, _depth, info) => checkDelete("shred", args, state, false, info.stdin),
  find: checkFind,
  git: (args, state, depth) => checkGit(args, state, depth),
  cd: (args, state) => changeDirectory(args, state),
  pushd: (args, state) => changeDirectory(args, state),
  popd: (_args, state) => {
    state.cwd = null;
    state.cwds.push(null);
  },
  dd: (args, state) => {
    for (const a of args) {
      if (!a.value.startsWith("of=")) continue;
      const target = { ...a, value: a.value.slice(3), raw: a.raw.replace(/^of=/, "") };
      checkTarget(target, "dd writes to", state, { unknownAsks: true });
    }
  },
  kill: (args, state) => {
    const targets = positional(args, ["-s", "-n"]);
    const afterDashDash = args.findIndex((a) => a.value === "--");
    const all = afterDashDash === -1 ? args.slice(1) : args.slice(afterDashDash + 1);
    if (targets.some((t) => t.value === "-1") || all.some((t) => t.value === "-1"))
      danger(state, "kill -1 stops every process the user can signal");
  },
  killall5: (_args, state) => danger(state, "killall5 stops every process"),
  crontab: (args, state) => {
    if (hasFlag(args, "r")) danger(state, "crontab -r deletes every scheduled job");
  },
  systemctl: (args, state) => {
    const [sub, ...units] = positional(args, [
      "-H",
      "--host",
      "-M",
      "--machine",
      "-p",
      "--property",
      "-t",
      "--type",
      "-s",
      "--signal",
      "--state",
      "-n",
      "--lines",
      "-o",
      "--output",
      "--root",
      "--job-mode",
    ]).map((w) => w.value);
    if (STOPS_MACHINE.includes(sub ?? "")) danger(state, `systemctl ${sub} stops the machine`);
    else if (
      ["start", "isolate", "restart", "reload-or-restart", "try-restart", "enable", "link"].includes(sub ?? "") &&
      units.some(
        (u) =>
          STOPS_MACHINE.includes(u.replace(/\.target$/, "")) || u === "ctrl-alt-del.target" || u === "shutdown.target",
      )
    ) {
      danger(state, `systemctl ${sub} ${units.join(" ")} stops the machine`);
    }
  },
  loginctl: (args, state) => {
    const sub = positional(args)[0]?.value ?? "";
    if (
      STOPS_MACHINE.includes(sub) ||
      ["terminate-user", "kill-user", "terminate-session", "kill-session"].includes(sub)
    )
      danger(state, `loginctl ${sub} stops the machine or a user's session`);
  },
  init: (args, state) => checkRunlevel("init", args, state),
  telinit: (args, state) => checkRunlevel("telinit", args, state),
  alias: (args, state) => {
    if (args.some((a) => a.value.includes("=")))
      opaque(state, "defines an alias, so later commands in the line may run something else");
  },
  shopt: (args, state) => {
    if (args.some((a) => a.value === "expand_aliases"))
      opaque(state, "turns on aliases, so later commands in the line may run something else");
  },
  touch: (args, state) => {
    for (const t of positional(args, ["-r", "--reference", "-d", "--date", "-t"]))
      checkTarget(t, "touch changes", state);
  },
  rg: (args, state) => {
    const runner = args.find((a) => /^--(pre|hostname-bin)(=|$)/.test(a.value));
    if (runner) opaque(state, `rg ${runner.value.split("=")[0]} runs a program on what it searches`);
  },
  tar: checkTar,
  sort: (args, state) => {
    checkOutputOption("sort", args, ["-o", "--output"], state);
    if (args.some((a) => a.value.startsWith("--compress-program")))
      opaque(state, "sort --compress-program runs a program");
  },
  uniq: (args, state) => {
    const out = positional(args, ["-f", "--skip-fields", "-s", "--skip-chars", "-w", "--check-chars"])[1];
    if (out) checkTarget(out, "uniq writes to", state);
  },
  ssh: (args, state, depth) => checkSshOptions("ssh", args, state, depth),
  scp: (args, state, depth) => checkSshOptions("scp", args, state, depth),
  sftp: (args, state, depth) => checkSshOptions("sftp", args, state, depth),
  awk: checkAwk,
  gawk: checkAwk,
  mawk: checkAwk,
  nawk: checkAwk,
  chmod: (args, state) => checkPermissions("chmod", args, state),
  chown: (args, state) => checkPermissions("chown", args, state),
  chgrp: (args, state) => checkPermissions("chgrp", args, state),
  mv: (args, state) => {
    for (const t of positional(args, ["-t", "--target-directory", "-S", "--suffix"]))
      checkTarget(t, "mv moves", state, { tempIsOutside: true });
    checkTargetDirectory(args, "mv moves files into", state);
    checkCreatedNames("mv", args, state);
  },
  cp: (args, state) => {
    checkCopy("cp", args, state);
    checkCreatedNames("cp", args, state);
  },
  install: (args, state) => {
    checkCopy("install", args, state);
    checkCreatedNames("install", args, state);
  },
  ln: (args, state) => {
    checkCopy("ln", args, state);
    recordLink(args, state);
  },
  rsync: (args, state, depth) => {
    const shell = optionValue(args, ["-e", "--rsh"]);
    if (shell) runScript(shell, "rsync -e", state, depth);
    const files = positional(args, ["-e", "--rsh", "--exclude", "--include", "--filter", "-f"]).filter(
      (w) => !/^[^/~]*:/.test(w.value),
    );
    const dest = files[files.length - 1];
    if (files.length > 1 && dest) checkTarget(dest, "rsync writes to", state);
  },
  tee: (args, state) => {
    for (const t of positional(args)) checkTarget(t, "tee writes to", state);
  },
  truncate: (args, state) => {
    for (const t of positional(args, ["-s", "--size", "-r", "--reference"])) checkTarget(t, "truncate changes", state);
  },
  sed: (args, state) => {
    checkInPlace("sed", args, state);
    checkSedScript(args, state);
  },
  perl: (args, state) => checkInPlace("perl", args, state),
  curl: (args, state) => {
    checkOutputOption("curl", args, ["-o", "--output", "--output-dir"], state);
    checkDownloadNames("curl", args, state);
  },
  wget: (args, state) => {
    checkOutputOption("wget", args, ["-O", "--output-document", "-P", "--directory-prefix"], state);
    checkDownloadNames("wget", args, state);
  },
};

function changeDirectory(args: Word[], state: State): void {
  const target = positional(args)[0];
  let next: string | null;
  if (!target) next = state.places.home;
  else if (target.value === "-") next = null;
  // With CDPATH set, `cd name` may go to a folder of that name anywhere CDPATH lists.
  else if (state.assigned.has("CDPATH") && !/^(\/|\.\.?(\/|$)|~)/.test(target.value)) next = null;
  else {
    const at = locate(target, state.cwd, state.places);
    next = at.kind === "unknown" || !at.path || !path.isAbsolute(at.path) ? null : at.path;
  }
  state.cwd = next;
  state.cwds.push(next);
}

function checkPermissions(name: string, args: Word[], state: State): void {
  const recursive = hasFlag(args, "R", ["--recursive"]);
  const words = positional(args, ["--reference"]);
  const hasReference = args.some((a) => a.value.startsWith("--reference"));
  const targets = hasReference ? words : words.slice(1);
  for (const t of targets)
    checkTarget(t, `${name}${recursive ? " -R" : ""} changes`, state, { unknownAsks: recursive });
}

function checkTargetDirectory(args: Word[], verb: string, state: State): void {
  args.forEach((a, i) => {
    if ((a.value === "-t" || a.value === "--target-directory") && args[i + 1]) checkTarget(args[i + 1]!, verb, state);
    else if (a.value.startsWith("--target-directory="))
      checkTarget({ ...a, value: a.value.split("=")[1]! }, verb, state);
  });
}

function checkCopy(name: string, args: Word[], state: State): void {
  const files = positional(args, [
    "-t",
    "--target-directory",
    "-S",
    "--suffix",
    "-m",
    "--mode",
    "-o",
    "--owner",
    "-g",
    "--group",
  ]);
  checkTargetDirectory(args, `${name} writes into`, state);
  if (args.some((a) => a.value === "-t" || a.value.startsWith("--target-directory"))) return;
  const dest = files[files.length - 1];
  if (files.length > 1 && dest) checkTarget(dest, `${name} writes to`, state);
}

const RULES_REASON = "may create or replace the project's command rules";

/** Whether files of unknown names landing in `dir` could create a rules file (the workspace root or the rules folder). */
function rulesCanLandIn(dir: Word, state: State): boolean {
  const kind = locate(dir, state.cwd, state.places).kind;
  return kind === "workspace" || kind === "rules";
}

/**
 * `cp`/`mv`/`install` into a folder create `folder/<source's name>`: that may be a rules file
 * even when no word spells its name (`cp /tmp/p/mini-cursor.config.js''on .`), and sources of
 * unknown names (`cp -r /tmp/p/. .`, `mv stage/* .`) may bring one into the workspace root.
 */
function checkCreatedNames(name: string, args: Word[], state: State): void {
  const valued = ["-t", "--target-directory", "-S", "--suffix", "-m", "--mode", "-o", "--owner", "-g", "--group"];
  const files = positional(args, valued);
  const targetDir = args.findIndex((a) => a.value === "-t" || a.value === "--target-directory");
  const inline = args.find((a) => a.value.startsWith("--target-directory="));
  const dir: Word | undefined =
    targetDir !== -1 ? args[targetDir + 1] : inline ? { ...inline, value: inline.value.split("=")[1]! } : undefined;
  const dest = dir ?? (files.length > 1 ? files[files.length - 1] : undefined);
  const sources = dir ? files : files.slice(0, -1);
  if (!dest || sources.length === 0) return;
  const noTarget = hasFlag(args, "T", ["--no-target-directory"]);
  const contentsUnknown = (w: Word) => w.dynamic || /[*?[]/.test(path.basename(w.value)) || /\/\.?$/.test(w.value);
  for (const source of sources) {
    if ((contentsUnknown(source) || noTarget) && rulesCanLandIn(dest, state)) {
      danger(
        state,
        `${name} ${shorten(source.raw, 40)} into ${dest.raw} ${RULES_REASON} (files it cannot name land there)`,
      );
      continue;
    }
    const created: Word = { ...dest, value: `${dest.value.replace(/\/+$/, "")}/${path.basename(source.value)}` };
    if (locate(created, state.cwd, state.places).kind === "rules")
      danger(state, `${name} ${shorten(source.raw, 40)} into ${dest.raw} ${RULES_REASON} (${created.value})`);
  }
}

/** A word a downloader reads as a URL. */
const isUrl = (w: Word) => /^[a-z][a-z0-9+.-]*:\/\//i.test(w.value) || (w.dynamic && !w.value.startsWith("-"));

/**
 * Downloads that name their file after the URL (`curl -O`, `wget URL`) or let the server name it
 * (`curl -J`, `wget --content-disposition`, `-r`, `-i`): the name can be a rules file without
 * being spelt in the command (`wget https://x/mini-cursor.config%2Ejson`).
 */
function checkDownloadNames(name: "curl" | "wget", args: Word[], state: State): void {
  const dirOption = optionValue(args, name === "curl" ? ["--output-dir"] : ["-P", "--directory-prefix"]);
  const dir: Word = dirOption ?? { value: ".", dynamic: false, raw: ".", kind: "word" };
  const flags = args.filter((a) => a.value.startsWith("-")).map((a) => a.value);
  const short = (letter: string) => flags.some((f) => /^-[A-Za-z]+$/.test(f) && f.includes(letter));
  const long = (...names: string[]) => flags.some((f) => names.includes(f.split("=")[0]!));
  const serverNamed =
    name === "curl"
      ? short("J") || long("--remote-header-name")
      : short("r") ||
        short("m") ||
        short("i") ||
        long("--recursive", "--mirror", "--content-disposition", "--trust-server-names", "--input-file");
  const urlNamed =
    name === "wget" ? !long("-O", "--output-document") : short("O") || long("--remote-name", "--remote-name-all");
  if (serverNamed && rulesCanLandIn(dir, state)) {
    danger(state, `${name} ${RULES_REASON}: the server names the files it saves in ${dir.raw}`);
    return;
  }
  if (!urlNamed) return;
  for (const url of args.filter(isUrl)) {
    const last =
      url.value
        .replace(/[?#].*$/s, "")
        .split("/")
        .pop() ?? "";
    if ((url.dynamic && /[$`]|[<>]\(/.test(last)) || /[[{]/.test(last)) {
      if (rulesCanLandIn(dir, state))
        danger(
          state,
          `${name} ${RULES_REASON}: it saves \`${shorten(url.raw, 50)}\` under a name only known at run time`,
        );
      continue;
    }
    let decoded = last;
    try {
      decoded = decodeURIComponent(last);
    } catch {
      // Not valid percent-encoding: the name is saved as written.
    }
    for (const file of new Set([last, decoded])) {
      if (file === "" || file.includes("/")) continue;
      const created: Word = { ...dir, value: `${dir.value.replace(/\/+$/, "")}/${file}`, dynamic: false };
      if (locate(created, state.cwd, state.places).kind === "rules")
        danger(state, `${name} ${RULES_REASON}: it saves ${shorten(url.raw, 50)} as ${created.value}`);
    }
  }
}

function checkInPlace(name: string, args: Word[], state: State): void {
  const inPlace = args.some((a) => /^-[A-Za-z]*i/.test(a.value) || a.value.startsWith("--in-place"));
  if (!inPlace) return;
  const hasScriptOption = args.some(
    (a) =>
      ["-e", "-f", "--expression", "--file", "-E"].includes(a.value.split("=")[0]!) || /^-[A-Za-z]*e$/.test(a.value),
  );
  const files = positional(args, ["-e", "-f", "--expression", "--file", "-E", "-l", "-M", "-I"]);
  for (const f of hasScriptOption ? files : files.slice(1)) checkTarget(f, `${name} -i changes`, state);
}

function checkOutputOption(name: string, args: Word[], options: string[], state: State): void {
  args.forEach((a, i) => {
    const [flag, inline] = a.value.split(/=(.*)/s, 2);
    if (!options.includes(flag!)) return;
    const target = inline !== undefined ? { ...a, value: inline } : args[i + 1];
    if (target) checkTarget(target, `${name} writes to`, state);
  });
}

const STOPS_MACHINE = [
  "poweroff",
  "reboot",
  "halt",
  "kexec",
  "suspend",
  "hibernate",
  "hybrid-sleep",
  "suspend-then-hibernate",
  "rescue",
  "emergency",
  "soft-reboot",
  "default",
];

/** `init 0`, `telinit 6`, `telinit 1`: change the runlevel, which stops the machine or its services. */
function checkRunlevel(name: string, args: Word[], state: State): void {
  const level = positional(args)[0]?.value ?? "";
  if (/^[0-6sSqQuU]$/.test(level) && !/^[qQuU]$/.test(level))
    danger(state, `${name} ${level} stops the machine or its services`);
}

/** GNU tar: options that run programs, and extraction or archives outside the workspace. */
function checkTar(args: Word[], state: State): void {
  const first = args[0]?.value ?? "";
  // `tar xzf a.tgz` (an old-style bundle without a dash) or `tar -xzf a.tgz`.
  const bundles = args
    .filter((a, i) => (i === 0 && /^[A-Za-z]+$/.test(first)) || /^-[A-Za-z]+$/.test(a.value))
    .map((a) => a.value.replace(/^-/, ""));
  const values = args.map((a) => a.value);
  const extracting = bundles.some((b) => b.includes("x")) || values.some((v) => /^--(extract|get)$/.test(v));
  const creating = bundles.some((b) => /[cru]/.test(b)) || values.some((v) => /^--(create|append|update)$/.test(v));
  const runner = values.find(
    (v) =>
      /^--(to-command|checkpoint-action|use-compress-program|rsh-command|info-script|new-volume-script)(=|$)/.test(v) ||
      v === "-I" ||
      v === "-F",
  );
  if (runner) opaque(state, `tar ${runner.split("=")[0]} runs a program`);
  if (
    extracting &&
    (values.includes("-P") || values.includes("--absolute-names") || bundles.some((b) => b.includes("P")))
  ) {
    danger(state, "tar -P extracts to absolute paths, anywhere on the machine");
  }
  const dir = optionValue(args, ["-C", "--directory"]);
  if (extracting && dir) checkTarget(dir, "tar extracts into", state);
  if (creating) {
    const file =
      optionValue(args, ["-f", "--file"]) ??
      (bundles[0]?.endsWith("f")
        ? args[args.findIndex((a) => a.value.replace(/^-/, "") === bundles[0]) + 1]
        : undefined);
    if (file && file.value !== "-") checkTarget(file, "tar writes the archive to", state);
  }
}

/** ssh, scp, sftp: `-o ProxyCommand=…` and friends run a local command. */
function checkSshOptions(name: string, args: Word[], state: State, depth: number): void {
  args.forEach((a, i) => {
    let option: string | undefined;
    if (a.value === "-o") option = args[i + 1]?.value;
    else if (a.value.startsWith("-o")) option = a.value.slice(2);
    else if (name === "scp" && a.value === "-S") opaque(state, "scp -S runs another program in place of ssh");
    else if (a.value === "-F" && args[i + 1]) opaque(state, `${name} -F reads a config file that can run commands`);
    if (!option) return;
    const m =
      /^\s*(ProxyCommand|LocalCommand|KnownHostsCommand|RemoteCommand|PermitLocalCommand|Include|Match)\s*[= ]\s*(.*)$/is.exec(
        option,
      );
    if (!m) return;
    const key = m[1]!.toLowerCase();
    if (key === "proxycommand" || key === "localcommand" || key === "knownhostscommand")
      runScript(
        { ...a, value: m[2]!, dynamic: a.dynamic || Boolean(args[i + 1]?.dynamic && a.value === "-o") },
        `${name} -o ${m[1]}`,
        state,
        depth,
      );
    else if (key === "include" || key === "match") opaque(state, `${name} -o ${m[1]} can run commands`);
  });
}

/** awk programs that run commands (`system()`, pipes) or write files (`print > "f"`). */
function checkAwk(args: Word[], state: State): void {
  const fileOption = args.some((a) => a.value === "-f" || a.value.startsWith("--file"));
  const program = fileOption ? undefined : positional(args, ["-F", "-v", "--assign", "--field-separator"])[0];
  if (fileOption) {
    state.notReadOnly.push("awk -f");
    return;
  }
  if (!program) return;
  if (program.dynamic) {
    opaque(state, `awk runs a program only known at run time (\`${shorten(program.raw, 60)}\`)`);
    return;
  }
  if (/\bsystem\s*\(|\|\s*(getline\b|&)|"\s*\|\s*getline|\|\s*"|print[f]?[^;{}]*>/.test(program.value)) {
    opaque(state, "the awk program runs commands or writes files");
  }
}

/** sed's `w FILE` writes a file and `e` runs a command, even without -i. */
function checkSedScript(args: Word[], state: State): void {
  const scripts: Word[] = [];
  args.forEach((a, i) => {
    if (a.value === "-e" || a.value === "--expression") {
      if (args[i + 1]) scripts.push(args[i + 1]!);
    } else if (a.value.startsWith("--expression=")) scripts.push({ ...a, value: a.value.slice(13) });
  });
  if (scripts.length === 0 && !args.some((a) => a.value === "-f" || a.value.startsWith("--file"))) {
    const first = positional(args, ["-l", "--line-length"])[0];
    if (first) scripts.push(first);
  }
  for (const script of scripts) {
    if (
      /(^|[;{}\n]\s*)([0-9,$/!]*\s*)?e(\s|$|;)/.test(script.value) ||
      /(^|[;{}\n\s])s(.).*\2.*\2[gpiImM0-9w]*e/.test(script.value)
    ) {
      opaque(state, "the sed script runs commands (`e`)");
    }
    const write = /(?:^|[;{}\n\s])(?:[0-9,$!]*\s*)?[wW]\s+(\S+)|s(.).*\2.*\2[gpiImM0-9e]*w\s*(\S+)/.exec(script.value);
    const target = write?.[1] ?? write?.[3];
    if (target) checkTarget({ ...script, value: target, raw: target }, "the sed script writes to", state);
  }
}
