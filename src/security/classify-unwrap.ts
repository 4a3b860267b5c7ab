import path from "node:path";
import { describeLocation, isOutside, locate, type Location } from "./locations.js";
import { decodeAnsiC, type SimpleCommand, type StdinSource, type Word } from "./shell-parse.js";
import { MAX_NESTING, type State, danger, opaque, shorten } from "./classify-state.js";

/**
 * Unwrapping for the classifier: scripts into commands, wrappers (sudo, env, timeout, xargs...)
 * into the command they run, variables, functions, and the code shells and interpreters are given
 * inline or on stdin. The innermost command goes to the per-command table (classify-commands.ts).
 */

// ---------------------------------------------------------------------------------------------
// Scripts and commands

export function analyzeScript(script: string, state: State, depth: number): void {
  if (depth > MAX_NESTING) {
    opaque(state, `scripts nested more than ${MAX_NESTING} levels deep`);
    return;
  }
  const parsed = state.parse(script);
  for (const error of parsed.errors) opaque(state, error);
  // `${x@P}` expands x as a prompt, which runs the command substitutions its value holds.
  if (/\$\{[^}]*@P\}/.test(script))
    opaque(state, "`${…@P}` prompt expansion runs commands hidden in a variable's value");
  for (const fn of parsed.functions) {
    state.functions.set(fn.name, [...(state.functions.get(fn.name) ?? []), ...fn.calls]);
    if (
      SHADOWED.has(fn.name) ||
      fn.name in state.commandTables.wrappers ||
      fn.name in state.leafCommands.names ||
      SHELLS.has(fn.name)
    ) {
      opaque(state, `defines a function named \`${fn.name}\`, so later \`${fn.name}\` commands may run something else`);
    }
  }
  for (const a of parsed.assignments) {
    state.assigned.add(a.name);
    if (!a.value.dynamic) state.vars.set(a.name, a.value);
    else state.vars.delete(a.name);
    checkProgramVariable(a.name, a.value, state, depth);
  }
  for (const command of parsed.commands) {
    // Arguments only: a command name from a variable stays unreadable (`$a`).
    const words = command.words.map((w, i) => (i === 0 ? w : resolveVariable(w, state)));
    examine(words, command.stdin, command.text, state, depth);
  }
  // Redirections are checked against every directory the script may be in by then.
  for (const write of parsed.writes) {
    const places = state.cwds.map((cwd) => throughLinks(locate(write.target, cwd, state.places), state));
    if (places.some((p) => p.kind !== "null-device")) state.notReadOnly.push(`${write.op} ${write.target.raw}`);
    if (places.some((p) => p.kind === "temp")) state.outsideWrites.push(`${write.op} ${write.target.raw}`);
    const bad =
      places.find((p) => isOutside(p.kind)) ??
      places.find((p) => p.kind === "unknown") ??
      places.find((p) => isGitDir(p, state));
    if (!bad) continue;
    if (bad.kind === "unknown") {
      opaque(state, `\`${write.op} ${write.target.raw}\` writes to a file only known at run time`);
      continue;
    }
    if (isGitDir(bad, state)) {
      danger(
        state,
        `\`${write.op} ${write.target.raw}\` changes the repository's own files (.git), where hooks and settings run programs`,
      );
      continue;
    }
    danger(state, `\`${write.op} ${write.target.raw}\` writes to ${where(bad, write.target)}`);
  }
}

/** "~/x (in the home folder, outside the workspace)". */
export function where(location: Location, word: Word): string {
  return `${word.raw} (${describeLocation(location.kind)})`;
}

export const basename = (w: Word | undefined) => (w ? path.basename(w.value) : "");
export const isOption = (w: Word) => !w.dynamic && w.value.length > 1 && w.value.startsWith("-");

/** Follows wrappers to the command that really runs, then checks it. */
export function examine(
  words: Word[],
  stdin: StdinSource | undefined,
  text: string,
  state: State,
  depth: number,
): void {
  let current = words;
  // `env -C DIR`, `sudo -D DIR`...: the inner command runs there (and only it).
  const outer = state.cwd;
  let moved = false;
  const enter = (dir: Word) => {
    const at = locate(dir, state.cwd, state.places);
    state.cwd = at.kind === "unknown" || !at.path || !path.isAbsolute(at.path) ? null : at.path;
    state.cwds.push(state.cwd);
    moved = true;
  };
  const restore = () => {
    if (moved) state.cwd = outer;
  };
  for (let guard = 0; guard < 20 && current.length > 0; guard++) {
    const name = current[0]!;
    if (name.dynamic || isPattern(name)) {
      opaque(
        state,
        name.dynamic
          ? `the command name is computed at run time (\`${shorten(name.raw, 40)}\`)`
          : `the command name is a file pattern (\`${shorten(name.raw, 40)}\`)`,
      );
      state.leaves.push({ words: current, text });
      state.layers.push({ words: current, text });
      restore();
      return;
    }
    state.layers.push({ words: current, text });
    const unwrap = state.commandTables.wrappers[basename(name)];
    const inner = unwrap?.(current.slice(1), state, depth);
    if (!inner) break;
    if (inner.danger) danger(state, inner.danger);
    if (inner.cwd) enter(inner.cwd);
    if (inner.delegated) return restore();
    if (inner.words.length === 0) break;
    current = inner.words.map((w, i) => (i === 0 ? w : resolveVariable(w, state)));
  }
  if (current.length === 0) return restore();
  // A shell running a script we could read is not a command of its own: the script's are.
  const delegated = state.leafCommands.check(current, stdin, text, state, depth);
  if (!delegated) state.leaves.push({ words: current, text });
  restore();
}

export interface Unwrapped {
  words: Word[];
  danger?: string;
  /** The directory the inner command runs in (`env -C DIR`). */
  cwd?: Word;
  /** The wrapper ran a script that was read (`watch 'cmd'`, `su -c 'cmd'`): no command of its own. */
  delegated?: boolean;
}

export type Unwrapper = (args: Word[], state: State, depth: number) => Unwrapped | undefined;

/**
 * Skips options: `valued` take the next word (or `--opt=value`), `--` ends them. Returns the
 * index of the first non-option word.
 */
export function skipOptions(args: Word[], valued: readonly string[], stopAtNumber = false): number {
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

/** Skips `NAME=value` words (`env A=1 cmd`), recording them as the line's assignments. */
/** The value of the last of `names` among options (`-C DIR`, `--chdir=DIR`). */
export function optionValue(options: Word[], names: readonly string[]): Word | undefined {
  let found: Word | undefined;
  options.forEach((a, i) => {
    const [flag, inline] = a.value.split(/=(.*)/s, 2);
    if (!names.includes(flag!)) return;
    found = inline !== undefined ? { ...a, value: inline, raw: a.raw.replace(/^[^=]*=/, "") } : options[i + 1];
  });
  return found;
}

const SHADOWED = new Set([
  "cd",
  "pushd",
  "popd",
  "ls",
  "cat",
  "echo",
  "printf",
  "test",
  "[",
  "true",
  "false",
  "rm",
  "git",
  "grep",
  "rg",
  "sed",
  "find",
  "head",
  "tail",
  "pwd",
  "alias",
  "unalias",
  "set",
  "shopt",
  "export",
  "source",
  ".",
  "trap",
  "read",
  "type",
  "hash",
]);

/** A command name with an unquoted glob (`/usr/bin/r[m]`, `/???/rm`): the shell picks the file. */
function isPattern(name: Word): boolean {
  return /^(?:[^'"\\]|\\.)*[*?[]/.test(name.raw.replace(/'[^']*'|"[^"]*"/g, "x"));
}

/** `"$X"` where the line set X to a known value (`X=~/.profile; rm -f "$X"`) reads as that value. */
function resolveVariable(word: Word, state: State): Word {
  if (!word.dynamic) return word;
  const m = /^\$(?:\{([A-Za-z_]\w*)\}|([A-Za-z_]\w*))(.*)$/s.exec(word.value);
  if (!m) return word;
  const known = state.vars.get(m[1] ?? m[2]!);
  const rest = m[3] ?? "";
  if (!known || /[$`]/.test(rest) || /[$`]/.test(known.value)) return word;
  return { ...word, value: known.value + rest, dynamic: false };
}

/** Variables whose value is a command some program runs (`GIT_SSH_COMMAND`, `PAGER`, `BASH_ENV`...). */
const PROGRAM_VARIABLES = new Set([
  "GIT_EXTERNAL_DIFF",
  "GIT_SSH_COMMAND",
  "GIT_SSH",
  "GIT_PAGER",
  "PAGER",
  "MANPAGER",
  "GIT_EDITOR",
  "EDITOR",
  "VISUAL",
  "GIT_SEQUENCE_EDITOR",
  "GIT_ASKPASS",
  "SSH_ASKPASS",
  "SUDO_ASKPASS",
  "BASH_ENV",
  "ENV",
  "PROMPT_COMMAND",
  "GIT_PROXY_COMMAND",
  "LESSOPEN",
  "LESSCLOSE",
  "GIT_EXEC_PATH",
  "GIT_TEMPLATE_DIR",
  "GIT_CONFIG_GLOBAL",
  "GIT_CONFIG_SYSTEM",
]);

export function checkProgramVariable(name: string, value: Word, state: State, depth: number): void {
  if (/^GIT_CONFIG_(COUNT|KEY_\d+|VALUE_\d+|PARAMETERS)$/.test(name)) {
    opaque(state, `\`${name}\` sets git options on the command line, which can run programs`);
    return;
  }
  if (!PROGRAM_VARIABLES.has(name)) return;
  state.notReadOnly.push(name);
  runScript(value, `\`${name}=\``, state, depth);
}

/** Functions that call each other in a cycle (`a(){ b|b& }; b(){ a|a& }; a`): a fork bomb. */
export function checkFunctionCycles(state: State): void {
  const seen = new Set<string>();
  const visiting = new Set<string>();
  const visit = (fn: string): string | undefined => {
    if (visiting.has(fn)) return fn;
    if (seen.has(fn) || !state.functions.has(fn)) return undefined;
    visiting.add(fn);
    for (const callee of state.functions.get(fn)!) {
      const cycle = visit(callee);
      if (cycle) return cycle;
    }
    visiting.delete(fn);
    seen.add(fn);
    return undefined;
  };
  for (const fn of state.functions.keys()) {
    const cycle = visit(fn);
    if (cycle) {
      danger(state, `defines functions that call themselves (\`${cycle}\`), the shape of a fork bomb`);
      return;
    }
  }
}

/** A path under a symlink the line created (`ln -s ~/x l`) is where the link leads. */
export function throughLinks(at: Location, state: State): Location {
  if (!at.path) return at;
  const link = state.links.find((l) => at.path === l.path || at.path!.startsWith(`${l.path}/`));
  return link ? link.to : at;
}

/** `ln -s TARGET LINK`: remember links that lead out of the workspace (or to a path known only at run time). */
export function recordLink(args: Word[], state: State): void {
  const files = positional(args, ["-t", "--target-directory", "-S", "--suffix"]);
  const target = files[0];
  if (!target) return;
  const to = locate(target, state.cwd, state.places);
  if (!isOutside(to.kind) && to.kind !== "unknown") return;
  const name =
    files.length > 1 ? files[files.length - 1]! : { ...target, value: path.basename(target.value), dynamic: false };
  const at = locate(name, state.cwd, state.places);
  if (at.path) state.links.push({ path: at.path, to: to.kind === "unknown" ? { kind: "unknown" } : to });
  else opaque(state, `\`ln\` creates a link at a path only known at run time`);
}

/** Inside the workspace's `.git` folder: history, hooks and settings. */
export function isGitDir(at: Location, state: State): boolean {
  if (!at.path) return false;
  const git = path.join(state.places.workspace, ".git");
  return at.path === git || at.path.startsWith(`${git}/`);
}

/** The replacement string of xargs options (`-I R`, `-iR`, `-i`, `--replace[=R]`). */
export function replacementOf(options: Word[]): string | undefined {
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

export function joinWords(words: Word[]): Word {
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
export function runScript(script: Word, what: string, state: State, depth: number): boolean {
  if (script.dynamic) {
    opaque(state, `${what} runs a script only known at run time (\`${shorten(script.raw, 60)}\`)`);
    return false;
  }
  analyzeScript(script.value, state, depth + 1);
  return true;
}

// ---------------------------------------------------------------------------------------------
// Shells and interpreters: the code they are given inline, in a file or on stdin

export const SHELLS = new Set(["sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "yash", "fish", "rbash"]);
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
const INTERPRETER_VALUED = [
  "-W",
  "-X",
  "-r",
  "--require",
  "--import",
  "--loader",
  "--experimental-loader",
  "-C",
  "--conditions",
  "-I",
];

export function interpreterFamily(name: string): string | undefined {
  if (/^python[\d.]*$/.test(name) || name === "pypy" || name === "pypy3") return "python";
  if (name === "nodejs") return "node";
  if (/^(perl|ruby|php|lua)[\d.]*$/.test(name)) return name.replace(/[\d.]+$/, "");
  return name in INLINE_CODE ? name : undefined;
}

export function checkShell(
  name: string,
  args: Word[],
  stdin: StdinSource | undefined,
  state: State,
  depth: number,
): boolean {
  let inline = false;
  let fromStdin = false;
  let script: Word | undefined;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (!a.dynamic && a.value === "--") {
      script = args[i + 1];
      break;
    }
    if (!a.dynamic && /^[-+]/.test(a.value) && a.value.length > 1 && !(a.value === "-" && i === 0)) {
      if (a.value.startsWith("--")) {
        if (["--rcfile", "--init-file"].includes(a.value)) i++;
        continue;
      }
      if (a.value === "-o" || a.value === "+o" || a.value === "-O" || a.value === "+O") {
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
    if (script.value !== "-" && !isStdinPath(script.value)) return false; // a script file: the approval mode decides
  }
  return codeFromStdin(name, true, stdin, state, depth);
}

export function checkInterpreter(
  name: string,
  family: string,
  args: Word[],
  stdin: StdinSource | undefined,
  state: State,
): void {
  const inlineFlags = INLINE_CODE[family] ?? [];
  const inline = args.findIndex((a) => inlineFlags.includes(a.value));
  if (inline !== -1) {
    // `python3 -c "$(curl …)"`: code that only exists once something has run.
    const code = args[inline + 1];
    if (code?.dynamic)
      opaque(state, `${name} ${args[inline]!.value} runs code only known at run time (\`${shorten(code.raw, 60)}\`)`);
    return;
  }
  const rest = positional(args, INTERPRETER_VALUED);
  const first = rest[0];
  if (first && first.value !== "-" && !isStdinPath(first.value)) {
    if (first.kind === "process_substitution")
      opaque(state, `${name} runs a script produced at run time (\`${shorten(first.raw, 60)}\`)`);
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
    const body = args
      .slice(flags.length)
      .map((a) => a.value)
      .join(" ");
    return flags.some((f) => f.value.includes("e")) ? decodeAnsiC(body) : body;
  }
  if (name === "printf" && args.length > 0) return decodeAnsiC(args.map((a) => a.value).join(" "));
  // `cat <<EOF | sh`: cat prints the heredoc.
  const input = from[0]!.stdin;
  if (name === "cat" && args.length === 0 && input?.kind === "text" && !input.dynamic) return input.text;
  return undefined;
}

/**
 * A program reading its code from stdin: read it when it is plain text, ask otherwise. True
 * when a shell script was read.
 */
function codeFromStdin(
  name: string,
  isShell: boolean,
  stdin: StdinSource | undefined,
  state: State,
  depth: number,
): boolean {
  if (!stdin) return false;
  if (stdin.kind === "text") {
    // `python3 - <<< "$(curl …)"`, `node < <(curl …)`: code that exists only once something ran.
    const computed =
      stdin.dynamic && (stdin.via !== "heredoc" || (!isShell && /\$\(|`/.test(stdin.text)))
        ? `${name} runs ${isShell ? "a script" : "code"} only known at run time (${stdin.via === "process" ? `\`< ${shorten(stdin.text, 60)}\`` : `a ${stdin.via === "heredoc" ? "heredoc" : "here-string"} with a substitution`})`
        : undefined;
    if (computed) {
      opaque(state, computed);
      return false;
    }
    if (!isShell) return false;
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

/** /dev/stdin and its other names: a program reading code from there reads it from a pipe. */
const isStdinPath = (p: string) => ["/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"].includes(p);

export function checkSourced(
  name: string,
  args: Word[],
  state: State,
  depth: number,
  stdin: StdinSource | undefined,
): boolean {
  const file = args[0];
  if (!file) return false;
  if (file.kind === "process_substitution") {
    opaque(state, `${name} runs a script produced at run time (\`${shorten(file.raw, 60)}\`)`);
  } else if (isStdinPath(file.value)) {
    if (stdin) return codeFromStdin(name, true, stdin, state, depth);
    opaque(state, `${name} runs a script produced at run time (\`${shorten(file.raw, 60)}\`)`);
  } else if (file.dynamic) {
    opaque(state, `${name} runs a script only known at run time (\`${shorten(file.raw, 60)}\`)`);
  }
  return false;
}

export interface TargetOptions {
  /** A path only known at run time asks (recursive deletes, dd). */
  unknownAsks?: boolean;
  /** The workspace root itself asks (recursive deletes). */
  wholeWorkspaceAsks?: boolean;
  /** Temporary folders count as outside (deletes: anything outside the workspace asks). */
  tempIsOutside?: boolean;
  /** The repository's `.git` folder asks (deletes, moves and writes: history, hooks, settings). */
  gitAsks?: boolean;
}

/** Writes or deletes at `word`: asks when that is outside the workspace. */
export function checkTarget(word: Word, verb: string, state: State, options: TargetOptions = {}): void {
  const at = throughLinks(locate(word, state.cwd, state.places), state);
  if ((options.gitAsks ?? true) && isGitDir(at, state)) {
    danger(state, `${verb} ${word.raw} (the repository's history, hooks and settings in .git)`);
    return;
  }
  if (at.kind === "unknown") {
    if (options.unknownAsks)
      danger(
        state,
        `${verb} ${word.raw === "(arguments from stdin)" ? "paths read from stdin" : `\`${shorten(word.raw, 60)}\``}, a path only known at run time`,
      );
    return;
  }
  if (at.kind === "workspace") {
    if (options.wholeWorkspaceAsks) danger(state, `${verb} ${word.raw} (the whole workspace)`);
    return;
  }
  if (isOutside(at.kind) || (options.tempIsOutside && at.kind === "temp")) danger(state, `${verb} ${where(at, word)}`);
  else if (at.kind === "temp") state.outsideWrites.push(`${verb} ${word.raw}`);
}

export function positional(args: Word[], valued: readonly string[] = []): Word[] {
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
