import os from "node:os";
import path from "node:path";
import { describeLocation, isOutside, locate, type Location, type Places } from "./locations.js";
import { EMPTY_RULES, findRule, type CommandRule, type ProjectRules } from "./rules.js";
import { decodeAnsiC, loadShellParser, type ShellParser, type SimpleCommand, type StdinSource, type Word } from "./shell-parse.js";

/**
 * Classifies a command line as allow, ask or deny by reading it with a real shell parser:
 * through quoting, wrappers (sudo, env, timeout, xargs...), nested `sh -c` scripts, `eval`,
 * pipes into interpreters, substitutions, `find -delete` / `-exec`, and redirections.
 *
 * - deny: a deny rule of the project matches one of its commands. It is refused unasked.
 * - ask: a person must approve it in every approval mode: it is dangerous, it cannot be read
 *   (syntax the parser cannot follow, a command name computed at run time), or an ask rule
 *   matches.
 * - allow: nothing dangerous was found. When allow rules cover every command (`rule` is set)
 *   it runs in every mode; otherwise the approval mode decides.
 */

export type Verdict = "allow" | "ask" | "deny";

export interface Classification {
  verdict: Verdict;
  /** Why, in one sentence; shown in the approval prompt, Studio, and to the model. */
  reason: string;
  /** The rule that decided, if one did (for allow, the first of the rules that covered it). */
  rule?: CommandRule;
  /** Each simple command it runs, after unwrapping wrappers (argv, as far as known). */
  commands: string[][];
}

export interface ClassifyContext {
  /** Absolute workspace root. */
  workspace: string;
  /** Where the command runs (default: the workspace root). */
  cwd?: string;
  /** The home folder (default: os.homedir()). */
  home?: string;
  rules?: ProjectRules;
  /** Set when the rules file could not be read: every command then asks, saying why. */
  rulesError?: string;
}

/** How deep `sh -c "sh -c ..."` nesting is followed before giving up (and asking). */
export const MAX_NESTING = 6;

type FindingKind = "danger" | "opaque";
interface Finding {
  kind: FindingKind;
  text: string;
}

interface Leaf {
  words: Word[];
  text: string;
}

interface State {
  parse: ShellParser;
  places: Places;
  cwd: string | null;
  /** Every directory the script may be in, for redirections (which we do not order exactly). */
  cwds: (string | null)[];
  findings: Finding[];
  /** The innermost commands (what allow rules must cover). */
  leaves: Leaf[];
  /** Every layer of every command, wrappers included (what deny and ask rules are tried on). */
  layers: Leaf[];
}

export async function classifyCommand(command: string, ctx: ClassifyContext): Promise<Classification> {
  return classifyWith(await loadShellParser(), command, ctx);
}

/** The synchronous core, for a parser that is already loaded. */
export function classifyWith(parse: ShellParser, command: string, ctx: ClassifyContext): Classification {
  const places: Places = { workspace: path.resolve(ctx.workspace), home: ctx.home ?? os.homedir() };
  const cwd = ctx.cwd ? path.resolve(places.workspace, ctx.cwd) : places.workspace;
  const state: State = { parse, places, cwd, cwds: [cwd], findings: [], leaves: [], layers: [] };
  analyzeScript(command, state, 0);
  const commands = state.leaves.map((l) => l.words.map((w) => w.value));
  const rules = ctx.rules ?? EMPTY_RULES;

  for (const layer of state.layers) {
    const rule = findRule(rules.deny, layer.words);
    if (rule) {
      return {
        verdict: "deny",
        reason: `the project rules (${rule.file}) deny \`${rule.text}\`${rule.reason ? `: ${rule.reason}` : ""} (it matches \`${shorten(layer.text)}\`)`,
        rule,
        commands,
      };
    }
  }
  if (ctx.rulesError) return { verdict: "ask", reason: `cannot apply the project rules: ${ctx.rulesError}`, commands };
  const danger = unique(state.findings.filter((f) => f.kind === "danger").map((f) => f.text));
  const opaque = unique(state.findings.filter((f) => f.kind === "opaque").map((f) => f.text));
  if (danger.length > 0) return { verdict: "ask", reason: `dangerous command: ${danger.join("; ")}`, commands };
  if (opaque.length > 0) return { verdict: "ask", reason: `cannot check this command: ${opaque.join("; ")}`, commands };
  for (const layer of state.layers) {
    const rule = findRule(rules.ask, layer.words);
    if (rule) {
      return {
        verdict: "ask",
        reason: `the project rules (${rule.file}) ask before \`${rule.text}\`${rule.reason ? `: ${rule.reason}` : ""}`,
        rule,
        commands,
      };
    }
  }
  if (state.leaves.length > 0) {
    const covering = state.leaves.map((leaf) => findRule(rules.allow, leaf.words));
    if (covering.every((r): r is CommandRule => r !== undefined)) {
      const texts = unique(covering.map((r) => `\`${r.text}\``));
      return { verdict: "allow", reason: `allowed by the project rules (${texts.join(", ")})`, rule: covering[0], commands };
    }
  }
  return { verdict: "allow", reason: "nothing dangerous found", commands };
}

function unique<T>(items: T[]): T[] {
  return [...new Set(items)];
}

function shorten(text: string, max = 80): string {
  const one = text.replace(/\s+/g, " ").trim();
  return one.length > max ? `${one.slice(0, max - 1)}…` : one;
}

const danger = (state: State, text: string) => state.findings.push({ kind: "danger", text });
const opaque = (state: State, text: string) => state.findings.push({ kind: "opaque", text });

// ---------------------------------------------------------------------------------------------
// Scripts and commands

function analyzeScript(script: string, state: State, depth: number): void {
  if (depth > MAX_NESTING) {
    opaque(state, `scripts nested more than ${MAX_NESTING} levels deep`);
    return;
  }
  const parsed = state.parse(script);
  for (const error of parsed.errors) opaque(state, error);
  for (const fn of parsed.functions) {
    if (fn.calls.includes(fn.name)) danger(state, `defines a function that calls itself (\`${fn.name}\`), the shape of a fork bomb`);
  }
  for (const command of parsed.commands) {
    examine(command.words, command.stdin, command.text, state, depth);
  }
  // Redirections are checked against every directory the script may be in by then.
  for (const write of parsed.writes) {
    const places = state.cwds.map((cwd) => locate(write.target, cwd, state.places));
    const bad = places.find((p) => isOutside(p.kind)) ?? places.find((p) => p.kind === "unknown");
    if (!bad) continue;
    if (bad.kind === "unknown") {
      if (write.target.dynamic) opaque(state, `\`${write.op} ${write.target.raw}\` writes to a file only known at run time`);
      continue;
    }
    danger(state, `\`${write.op} ${write.target.raw}\` writes to ${where(bad, write.target)}`);
  }
}

/** "~/x (in the home folder, outside the workspace)". */
function where(location: Location, word: Word): string {
  return `${word.raw} (${describeLocation(location.kind)})`;
}

const basename = (w: Word | undefined) => (w ? path.basename(w.value) : "");
const isOption = (w: Word) => !w.dynamic && w.value.length > 1 && w.value.startsWith("-");

/** Follows wrappers to the command that really runs, then checks it. */
function examine(words: Word[], stdin: StdinSource | undefined, text: string, state: State, depth: number): void {
  let current = words;
  for (let guard = 0; guard < 20 && current.length > 0; guard++) {
    const name = current[0]!;
    if (name.dynamic) {
      opaque(state, `the command name is computed at run time (\`${shorten(name.raw, 40)}\`)`);
      state.leaves.push({ words: current, text });
      state.layers.push({ words: current, text });
      return;
    }
    state.layers.push({ words: current, text });
    const unwrap = WRAPPERS[basename(name)];
    const inner = unwrap?.(current.slice(1), state, depth);
    if (!inner) break;
    if (inner.danger) danger(state, inner.danger);
    if (inner.delegated) return;
    if (inner.words.length === 0) break;
    current = inner.words;
  }
  if (current.length === 0) return;
  // A shell running a script we could read is not a command of its own: the script's are.
  const delegated = checkLeaf(current, stdin, text, state, depth);
  if (!delegated) state.leaves.push({ words: current, text });
}

interface Unwrapped {
  words: Word[];
  danger?: string;
  /** The wrapper ran a script that was read (`watch 'cmd'`, `su -c 'cmd'`): no command of its own. */
  delegated?: boolean;
}

type Unwrapper = (args: Word[], state: State, depth: number) => Unwrapped | undefined;

/**
 * Skips options: `valued` take the next word (or `--opt=value`), `--` ends them. Returns the
 * index of the first non-option word.
 */
function skipOptions(args: Word[], valued: readonly string[], stopAtNumber = false): number {
  let i = 0;
  while (i < args.length) {
    const a = args[i]!;
    if (a.dynamic) return i;
    if (a.value === "--") return i + 1;
    if (!a.value.startsWith("-") || a.value === "-") return i;
    if (stopAtNumber && /^-\d+$/.test(a.value)) {
      i++;
      continue;
    }
    const [flag] = a.value.split("=", 1);
    i += valued.includes(flag!) && !a.value.includes("=") ? 2 : 1;
  }
  return i;
}

const skipAssignments = (args: Word[], from: number) => {
  let i = from;
  while (i < args.length && !args[i]!.dynamic && /^[A-Za-z_][A-Za-z0-9_]*=/.test(args[i]!.value)) i++;
  return i;
};

const ADMIN = "runs it with administrator rights";

const WRAPPERS: Record<string, Unwrapper> = {
  sudo: (args) => {
    const i = skipAssignments(args, skipOptions(args, ["-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-T", "-U", "--user", "--group", "--chdir", "--host", "--prompt", "--role", "--type", "--command-timeout", "--other-user", "--close-from"]));
    return { words: args.slice(i), danger: `sudo ${ADMIN}` };
  },
  doas: (args) => ({ words: args.slice(skipOptions(args, ["-u", "-C"])), danger: `doas ${ADMIN}` }),
  pkexec: (args) => ({ words: args.slice(skipOptions(args, ["--user"])), danger: `pkexec ${ADMIN}` }),
  su: (args, state, depth) => {
    const c = args.findIndex((a) => a.value === "-c" || a.value === "--command");
    const delegated = c !== -1 && args[c + 1] !== undefined && runScript(args[c + 1]!, "su -c", state, depth);
    return { words: [], danger: "su runs it as another user", delegated };
  },
  env: (args, state) => {
    let i = 0;
    const split: Word[] = [];
    while (i < args.length) {
      const a = args[i]!;
      if (a.dynamic || !a.value.startsWith("-") || a.value === "-") break;
      if (a.value === "--") {
        i++;
        break;
      }
      if (a.value === "-S" || a.value === "--split-string" || a.value.startsWith("--split-string=") || /^-S./.test(a.value)) {
        const body = a.value === "-S" || a.value === "--split-string" ? args[++i] : { ...a, value: a.value.replace(/^(-S|--split-string=)/, "") };
        if (body?.dynamic) opaque(state, "env -S splits a command only known at run time");
        else if (body) split.push(...body.value.split(/\s+/).filter(Boolean).map((value) => ({ value, dynamic: false, raw: value, kind: "word" })));
        i++;
        continue;
      }
      i += ["-u", "--unset", "-C", "--chdir"].includes(a.value) ? 2 : 1;
    }
    return { words: [...split, ...args.slice(skipAssignments(args, i))] };
  },
  command: (args) => {
    if (args.some((a, i) => i < 2 && (a.value === "-v" || a.value === "-V"))) return { words: [] };
    return { words: args.slice(skipOptions(args, [])) };
  },
  builtin: (args) => ({ words: args }),
  exec: (args) => ({ words: args.slice(skipOptions(args, ["-a"])) }),
  nice: (args) => ({ words: args.slice(skipOptions(args, ["-n", "--adjustment"], true)) }),
  ionice: (args) => (args.some((a) => a.value === "-p") ? { words: [] } : { words: args.slice(skipOptions(args, ["-c", "-n", "--class", "--classdata"])) }),
  nohup: (args) => ({ words: args.slice(skipOptions(args, [])) }),
  setsid: (args) => ({ words: args.slice(skipOptions(args, [])) }),
  stdbuf: (args) => ({ words: args.slice(skipOptions(args, ["-i", "-o", "-e", "--input", "--output", "--error"])) }),
  unbuffer: (args) => ({ words: args.slice(skipOptions(args, [])) }),
  timeout: (args) => {
    const i = skipOptions(args, ["-s", "-k", "--signal", "--kill-after"]);
    return { words: args.slice(i + 1) };
  },
  time: (args) => ({ words: args.slice(skipOptions(args, ["-f", "-o", "--format", "--output"])) }),
  busybox: (args) => ({ words: args.slice(skipOptions(args, [])) }),
  xargs: (args) => {
    const i = skipOptions(args, ["-a", "-d", "-E", "-I", "-L", "-n", "-P", "-s", "--arg-file", "--delimiter", "--eof", "--max-lines", "--max-args", "--max-procs", "--max-chars", "--process-slot-var"]);
    const fromStdin: Word = { value: "<stdin>", dynamic: true, raw: "(arguments from stdin)", kind: "xargs" };
    // -I R (or -i, --replace): R in the command is replaced by what stdin holds.
    const replace = replacementOf(args.slice(0, i));
    const inner = args.slice(i).map((w) => (replace && w.value.includes(replace) ? { ...w, value: w.value.split(replace).join("$XARGS"), dynamic: true } : w));
    return { words: inner.length > 0 ? [...inner, fromStdin] : [] };
  },
  watch: (args, state, depth) => {
    const i = skipOptions(args, ["-n", "--interval", "-q", "--equexit"]);
    const rest = args.slice(i);
    if (args.slice(0, i).some((a) => a.value === "-x" || a.value === "--exec")) return { words: rest };
    if (rest.length > 0) runScript(joinWords(rest), "watch", state, depth);
    return { words: [], delegated: true };
  },
};

/** The replacement string of xargs options (`-I R`, `-iR`, `-i`, `--replace[=R]`). */
function replacementOf(options: Word[]): string | undefined {
  for (let j = 0; j < options.length; j++) {
    const v = options[j]!.value;
    if (v === "-I") return options[j + 1]?.value;
    if (v.startsWith("-I")) return v.slice(2);
    if (v === "-i" || v === "--replace") return "{}";
    if (v.startsWith("-i")) return v.slice(2);
    if (v.startsWith("--replace=")) return v.slice("--replace=".length);
  }
  return undefined;
}

function joinWords(words: Word[]): Word {
  return {
    value: words.map((w) => w.value).join(" "),
    dynamic: words.some((w) => w.dynamic),
    raw: words.map((w) => w.raw).join(" "),
    kind: "joined",
  };
}

/**
 * A script given as a word (`sh -c WORD`, `eval WORD...`): read it too, or ask if it is
 * computed. True when it was read.
 */
function runScript(script: Word, what: string, state: State, depth: number): boolean {
  if (script.dynamic) {
    opaque(state, `${what} runs a script only known at run time (\`${shorten(script.raw, 60)}\`)`);
    return false;
  }
  analyzeScript(script.value, state, depth + 1);
  return true;
}

// ---------------------------------------------------------------------------------------------
// What the innermost command does

const SHELLS = new Set(["sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "yash", "fish", "rbash"]);
const INLINE_CODE: Record<string, string[]> = {
  python: ["-c", "-m"],
  node: ["-e", "--eval", "-p", "--print"],
  bun: ["-e", "--eval", "-p", "--print"],
  deno: ["eval"],
  perl: ["-e", "-E"],
  ruby: ["-e"],
  php: ["-r"],
  lua: ["-e"],
  Rscript: ["-e"],
  osascript: ["-e"],
  pwsh: ["-c", "-Command", "-command"],
  tclsh: [],
};
const INTERPRETER_VALUED = ["-W", "-X", "-r", "--require", "--import", "--loader", "--experimental-loader", "-C", "--conditions", "-I"];

function interpreterFamily(name: string): string | undefined {
  if (/^python[\d.]*$/.test(name) || name === "pypy" || name === "pypy3") return "python";
  if (name === "nodejs") return "node";
  if (/^(perl|ruby|php|lua)[\d.]*$/.test(name)) return name.replace(/[\d.]+$/, "");
  return name in INLINE_CODE ? name : undefined;
}

/** Checks what the innermost command does; true when it only runs a script that was read. */
function checkLeaf(words: Word[], stdin: StdinSource | undefined, text: string, state: State, depth: number): boolean {
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
  if (/^mkfs(\..+)?$/.test(name) || ["mke2fs", "mkswap", "fdisk", "sfdisk", "cfdisk", "gdisk", "sgdisk", "parted", "wipefs"].includes(name)) {
    danger(state, `${name} formats or repartitions a disk`);
    return false;
  }
  if (["shutdown", "reboot", "halt", "poweroff"].includes(name)) {
    danger(state, `${name} stops the machine`);
    return false;
  }
  if (name === "eval") return args.length > 0 && runScript(joinWords(args), "eval", state, depth);
  LEAF_CHECKS[name]?.(args, state, depth, { name, text, stdin });
  return false;
}

interface LeafInfo {
  name: string;
  text: string;
  stdin: StdinSource | undefined;
}

type LeafCheck = (args: Word[], state: State, depth: number, info: LeafInfo) => void;

/** Any argument naming a credentials file or folder (`cat ~/.ssh/id_rsa`) asks. */
function checkCredentials(words: Word[], state: State): void {
  for (const w of words.slice(1)) {
    const value = w.value.includes("=") && w.value.startsWith("-") ? w.value.slice(w.value.indexOf("=") + 1) : w.value;
    if (!/^[~/]/.test(value)) continue;
    const at = locate({ ...w, value }, state.cwd, state.places);
    if (at.kind === "secret") danger(state, `\`${shorten(w.raw, 60)}\` touches credentials in the home folder`);
  }
}

interface TargetOptions {
  /** A path only known at run time asks (recursive deletes, dd). */
  unknownAsks?: boolean;
  /** The workspace root itself asks (recursive deletes). */
  wholeWorkspaceAsks?: boolean;
  /** Temporary folders count as outside (deletes: anything outside the workspace asks). */
  tempIsOutside?: boolean;
}

/** Writes or deletes at `word`: asks when that is outside the workspace. */
function checkTarget(word: Word, verb: string, state: State, options: TargetOptions = {}): void {
  const at = locate(word, state.cwd, state.places);
  if (at.kind === "unknown") {
    if (options.unknownAsks) danger(state, `${verb} ${word.raw === "(arguments from stdin)" ? "paths read from stdin" : `\`${shorten(word.raw, 60)}\``}, a path only known at run time`);
    return;
  }
  if (at.kind === "workspace") {
    if (options.wholeWorkspaceAsks) danger(state, `${verb} ${word.raw} (the whole workspace)`);
    return;
  }
  if (isOutside(at.kind) || (options.tempIsOutside && at.kind === "temp")) danger(state, `${verb} ${where(at, word)}`);
}

function positional(args: Word[], valued: readonly string[] = []): Word[] {
  const out: Word[] = [];
  let options = true;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (options && a.value === "--" && !a.dynamic) {
      options = false;
      continue;
    }
    if (options && isOption(a)) {
      if (valued.includes(a.value)) i++;
      continue;
    }
    out.push(a);
  }
  return out;
}

const hasFlag = (args: Word[], short: string, long: string[] = []) =>
  args.some((a) => !a.dynamic && ((/^-[A-Za-z]+$/.test(a.value) && a.value.slice(1).includes(short)) || long.includes(a.value.split("=")[0]!)));

function checkDelete(verb: string, args: Word[], state: State, recursive: boolean): void {
  for (const target of positional(args)) {
    checkTarget(target, `${verb} deletes`, state, { unknownAsks: recursive, wholeWorkspaceAsks: recursive, tempIsOutside: true });
  }
}

function checkGit(args: Word[], state: State): void {
  const i = skipOptions(args, ["-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path", "--config-env"]);
  const sub = args[i]?.value;
  const rest = args.slice(i + 1);
  const values = rest.map((a) => a.value);
  const has = (...flags: string[]) => values.some((v) => flags.includes(v.split("=")[0]!));
  switch (sub) {
    case "reset":
      if (has("--hard")) danger(state, "git reset --hard discards uncommitted changes");
      break;
    case "clean":
      if ((hasFlag(rest, "f", ["--force"])) && !hasFlag(rest, "n", ["--dry-run"])) danger(state, "git clean -f deletes untracked files");
      break;
    case "push":
      if (hasFlag(rest, "f", ["--force", "--force-with-lease", "--force-if-includes", "--mirror", "--delete", "--prune"]) || has("-d")) {
        danger(state, "git push --force (or --delete) rewrites or deletes history on the remote");
      } else if (positional(rest).slice(1).some((a) => a.value.startsWith("+") || a.value.startsWith(":"))) {
        danger(state, "git push with a +refspec or :refspec rewrites or deletes history on the remote");
      }
      break;
    case "checkout":
      if (has("--", ".", "-f", "--force", "--ours", "--theirs")) danger(state, "git checkout of paths (or -f) discards uncommitted changes");
      break;
    case "switch":
      if (has("-f", "--force", "--discard-changes")) danger(state, "git switch --discard-changes discards uncommitted changes");
      break;
    case "restore":
      if (!has("--staged", "-S") || has("--worktree", "-W")) danger(state, "git restore discards uncommitted changes");
      break;
    case "stash":
      if (values[0] === "drop" || values[0] === "clear") danger(state, `git stash ${values[0]} deletes saved changes`);
      break;
    case "branch":
      if (has("-D") || (has("-d", "--delete") && has("-f", "--force"))) danger(state, "git branch -D deletes a branch that may not be merged");
      break;
    case "filter-branch":
    case "filter-repo":
      danger(state, `git ${sub} rewrites the repository's history`);
      break;
    case "reflog":
      if (values[0] === "expire" || values[0] === "delete") danger(state, `git reflog ${values[0]} deletes recovery points`);
      break;
  }
}

function checkFind(args: Word[], state: State, depth: number, info: LeafInfo): void {
  let i = 0;
  const roots: Word[] = [];
  while (i < args.length && !(args[i]!.value.startsWith("-") || ["(", "!", ")"].includes(args[i]!.value))) roots.push(args[i++]!);
  if (roots.length === 0) roots.push({ value: ".", dynamic: false, raw: ".", kind: "word" });
  const under = (root: Word): Word => ({ ...root, value: `${root.value.replace(/\/+$/, "")}/{}`, raw: `${root.raw.replace(/\/+$/, "")}/{}` });
  for (; i < args.length; i++) {
    const a = args[i]!.value;
    if (a === "-delete") {
      for (const root of roots) checkTarget(under(root), "find -delete deletes files under", state, { unknownAsks: true, tempIsOutside: true });
    } else if (["-exec", "-execdir", "-ok", "-okdir"].includes(a)) {
      const end = args.findIndex((w, j) => j > i && (w.value === ";" || w.value === "+"));
      const inner = args.slice(i + 1, end === -1 ? args.length : end);
      for (const root of roots) {
        const found = under(root);
        const words = inner.map((w) => (w.value.includes("{}") ? { ...w, value: w.value.split("{}").join(found.value), raw: w.raw.split("{}").join(found.raw), dynamic: w.dynamic || found.dynamic } : w));
        if (words.length > 0) examine(words, undefined, info.text, state, depth);
      }
      i = end === -1 ? args.length : end;
    } else if (["-fprint", "-fprint0", "-fprintf", "-fls"].includes(a) && args[i + 1]) {
      checkTarget(args[i + 1]!, `find ${a} writes to`, state);
    }
  }
}

function checkShell(name: string, args: Word[], stdin: StdinSource | undefined, state: State, depth: number): boolean {
  let inline = false;
  let fromStdin = false;
  let script: Word | undefined;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (!a.dynamic && a.value === "--") {
      script = args[i + 1];
      break;
    }
    if (!a.dynamic && /^[-+]/.test(a.value) && a.value.length > 1) {
      if (a.value.startsWith("--")) {
        if (["--rcfile", "--init-file"].includes(a.value)) i++;
        continue;
      }
      if (a.value === "-o" || a.value === "+o") {
        i++;
        continue;
      }
      if (a.value.slice(1).includes("c")) inline = true;
      if (a.value.slice(1).includes("s")) fromStdin = true;
      continue;
    }
    script = a;
    break;
  }
  if (inline) return script ? runScript(script, `${name} -c`, state, depth) : false;
  if (script && !fromStdin) {
    if (script.kind === "process_substitution") {
      opaque(state, `${name} runs a script produced at run time (\`${shorten(script.raw, 60)}\`)`);
      return false;
    }
    if (script.value !== "/dev/stdin") return false; // a script file: the approval mode decides
  }
  return codeFromStdin(name, true, stdin, state, depth);
}

function checkInterpreter(name: string, family: string, args: Word[], stdin: StdinSource | undefined, state: State): void {
  const inlineFlags = INLINE_CODE[family] ?? [];
  if (args.some((a) => inlineFlags.includes(a.value))) return;
  const rest = positional(args, INTERPRETER_VALUED);
  const first = rest[0];
  if (first && first.value !== "-" && first.value !== "/dev/stdin") {
    if (first.kind === "process_substitution") opaque(state, `${name} runs a script produced at run time (\`${shorten(first.raw, 60)}\`)`);
    return;
  }
  codeFromStdin(name, false, stdin, state, 0);
}

/** What `echo`/`printf` with only static words prints (so `echo 'ls' | sh` can be read). */
function staticEcho(from: SimpleCommand[]): string | undefined {
  if (from.length !== 1) return undefined;
  const [cmd, ...args] = from[0]!.words;
  if (!cmd || cmd.dynamic || args.some((a) => a.dynamic)) return undefined;
  const name = path.basename(cmd.value);
  if (name === "echo") {
    const flags = args.filter((a, i) => i < args.length && /^-[neE]+$/.test(a.value));
    const body = args.slice(flags.length).map((a) => a.value).join(" ");
    return flags.some((f) => f.value.includes("e")) ? decodeAnsiC(body) : body;
  }
  if (name === "printf" && args.length > 0) return decodeAnsiC(args.map((a) => a.value).join(" "));
  return undefined;
}

/**
 * A program reading its code from stdin: read it when it is plain text, ask otherwise. True
 * when a shell script was read.
 */
function codeFromStdin(name: string, isShell: boolean, stdin: StdinSource | undefined, state: State, depth: number): boolean {
  if (!stdin) return false;
  if (stdin.kind === "text") {
    if (!isShell) return false;
    if (stdin.via === "herestring" && stdin.dynamic) {
      opaque(state, `${name} runs a script only known at run time`);
      return false;
    }
    analyzeScript(stdin.text, state, depth + 1);
    return true;
  }
  const printed = staticEcho(stdin.from);
  if (printed !== undefined) {
    if (isShell) analyzeScript(printed, state, depth + 1);
    return isShell;
  }
  const source = stdin.from.map((c) => c.text).join(" | ");
  danger(state, `pipes the output of \`${shorten(source, 60)}\` into ${name}, which runs it as code nobody has read`);
  return false;
}

const LEAF_CHECKS: Record<string, LeafCheck> = {
  rm: (args, state) => checkDelete("rm", args, state, hasFlag(args, "r", ["--recursive"]) || hasFlag(args, "R")),
  unlink: (args, state) => checkDelete("unlink", args, state, false),
  rmdir: (args, state) => checkDelete("rmdir", args, state, false),
  rimraf: (args, state) => checkDelete("rimraf", args, state, true),
  shred: (args, state) => checkDelete("shred", args, state, false),
  find: checkFind,
  git: (args, state) => checkGit(args, state),
  source: (args, state) => checkSourced("source", args, state),
  ".": (args, state) => checkSourced(".", args, state),
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
    if (targets.some((t) => t.value === "-1") || all.some((t) => t.value === "-1")) danger(state, "kill -1 stops every process the user can signal");
  },
  killall5: (_args, state) => danger(state, "killall5 stops every process"),
  crontab: (args, state) => {
    if (hasFlag(args, "r")) danger(state, "crontab -r deletes every scheduled job");
  },
  systemctl: (args, state) => {
    const sub = positional(args)[0]?.value ?? "";
    if (["poweroff", "reboot", "halt", "kexec", "suspend", "hibernate", "rescue", "emergency"].includes(sub)) danger(state, `systemctl ${sub} stops the machine`);
  },
  init: (args, state) => {
    if (["0", "6"].includes(args[0]?.value ?? "")) danger(state, "init 0/6 stops the machine");
  },
  chmod: (args, state) => checkPermissions("chmod", args, state),
  chown: (args, state) => checkPermissions("chown", args, state),
  chgrp: (args, state) => checkPermissions("chgrp", args, state),
  mv: (args, state) => {
    for (const t of positional(args, ["-t", "--target-directory", "-S", "--suffix"])) checkTarget(t, "mv moves", state, { tempIsOutside: true });
    checkTargetDirectory(args, "mv moves files into", state);
  },
  cp: (args, state) => checkCopy("cp", args, state),
  install: (args, state) => checkCopy("install", args, state),
  ln: (args, state) => checkCopy("ln", args, state),
  rsync: (args, state) => {
    const files = positional(args, ["-e", "--rsh", "--exclude", "--include", "--filter", "-f"]).filter((w) => !/^[^/~]*:/.test(w.value));
    const dest = files[files.length - 1];
    if (files.length > 1 && dest) checkTarget(dest, "rsync writes to", state);
  },
  tee: (args, state) => {
    for (const t of positional(args)) checkTarget(t, "tee writes to", state);
  },
  truncate: (args, state) => {
    for (const t of positional(args, ["-s", "--size", "-r", "--reference"])) checkTarget(t, "truncate changes", state);
  },
  sed: (args, state) => checkInPlace("sed", args, state),
  perl: (args, state) => checkInPlace("perl", args, state),
  curl: (args, state) => checkOutputOption("curl", args, ["-o", "--output"], state),
  wget: (args, state) => checkOutputOption("wget", args, ["-O", "--output-document", "-P", "--directory-prefix"], state),
};

function checkSourced(name: string, args: Word[], state: State): void {
  const file = args[0];
  if (!file) return;
  if (file.kind === "process_substitution" || file.value === "/dev/stdin") {
    opaque(state, `${name} runs a script produced at run time (\`${shorten(file.raw, 60)}\`)`);
  }
}

function changeDirectory(args: Word[], state: State): void {
  const target = positional(args)[0];
  let next: string | null;
  if (!target) next = state.places.home;
  else if (target.value === "-") next = null;
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
  for (const t of targets) checkTarget(t, `${name}${recursive ? " -R" : ""} changes`, state, { unknownAsks: recursive });
}

function checkTargetDirectory(args: Word[], verb: string, state: State): void {
  args.forEach((a, i) => {
    if ((a.value === "-t" || a.value === "--target-directory") && args[i + 1]) checkTarget(args[i + 1]!, verb, state);
    else if (a.value.startsWith("--target-directory=")) checkTarget({ ...a, value: a.value.split("=")[1]! }, verb, state);
  });
}

function checkCopy(name: string, args: Word[], state: State): void {
  const files = positional(args, ["-t", "--target-directory", "-S", "--suffix", "-m", "--mode", "-o", "--owner", "-g", "--group"]);
  checkTargetDirectory(args, `${name} writes into`, state);
  if (args.some((a) => a.value === "-t" || a.value.startsWith("--target-directory"))) return;
  const dest = files[files.length - 1];
  if (files.length > 1 && dest) checkTarget(dest, `${name} writes to`, state);
}

function checkInPlace(name: string, args: Word[], state: State): void {
  const inPlace = args.some((a) => /^-[A-Za-z]*i/.test(a.value) || a.value.startsWith("--in-place"));
  if (!inPlace) return;
  const hasScriptOption = args.some((a) => ["-e", "-f", "--expression", "--file", "-E"].includes(a.value.split("=")[0]!) || /^-[A-Za-z]*e$/.test(a.value));
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
