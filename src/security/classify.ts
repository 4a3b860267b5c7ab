import os from "node:os";
import path from "node:path";
import { describeLocation, isOutside, locate, type Location, type Places } from "./locations.js";
import { EMPTY_RULES, findRule, type CommandRule, type ProjectRules } from "./rules.js";
import { isReadOnly, isHarmlessAssignment, READ_ONLY_WRAPPERS } from "./read-only.js";
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
  /** The same commands as parsed words (what "always" rules are matched against). */
  leaves?: Word[][];
  /**
   * True when every command is on the built-in read-only list with options that keep it so,
   * nothing is written, and nothing dangerous was found: it may run without asking in every mode.
   */
  readOnly?: boolean;
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
  /** Variables the line sets to a value known now (`X=~/.profile`), so `"$X"` can be read. */
  vars: Map<string, Word>;
  /** Every variable name the line sets anywhere (CDPATH changes what `cd name` means). */
  assigned: Set<string>;
  /** Functions defined in the line, with the names their bodies call (for call cycles). */
  functions: Map<string, string[]>;
  /** Why the line is not read-only, when something other than its commands says so. */
  notReadOnly: string[];
  /** Symlinks the line creates, and where they lead (`ln -s ~/x l && rm -rf l/`). */
  links: { path: string; to: Location }[];
}

export async function classifyCommand(command: string, ctx: ClassifyContext): Promise<Classification> {
  return classifyWith(await loadShellParser(), command, ctx);
}

/** The synchronous core, for a parser that is already loaded. */
export function classifyWith(parse: ShellParser, command: string, ctx: ClassifyContext): Classification {
  const { result, state } = decide(parse, command, ctx);
  const leaves = state.leaves.map((l) => l.words);
  const readOnly = result.verdict === "allow" && !result.rule && lineIsReadOnly(state);
  return { ...result, leaves, ...(readOnly ? { readOnly } : {}) };
}

/** Read-only: every command on the list, only harmless wrappers and assignments, no file written. */
function lineIsReadOnly(state: State): boolean {
  if (state.leaves.length === 0 || state.notReadOnly.length > 0 || state.findings.length > 0) return false;
  const leafSet = new Set(state.leaves.map((l) => l.words));
  if (state.layers.some((l) => !leafSet.has(l.words) && !READ_ONLY_WRAPPERS.has(basename(l.words[0])))) return false;
  if ([...state.assigned].some((name) => !isHarmlessAssignment(name))) return false;
  return state.leaves.every((l) => isReadOnly(l.words));
}

function decide(parse: ShellParser, command: string, ctx: ClassifyContext): { result: Classification; state: State } {
  const places: Places = { workspace: path.resolve(ctx.workspace), home: ctx.home ?? os.homedir() };
  const cwd = ctx.cwd ? path.resolve(places.workspace, ctx.cwd) : places.workspace;
  const state: State = {
    parse, places, cwd, cwds: [cwd], findings: [], leaves: [], layers: [],
    vars: new Map(), assigned: new Set(), functions: new Map(), notReadOnly: [], links: [],
  };
  analyzeScript(command, state, 0);
  checkFunctionCycles(state);
  const leaves = state.leaves.map((l) => l.words);
  const commands = leaves.map((words) => words.map((w) => w.value));
  const rules = ctx.rules ?? EMPTY_RULES;

  for (const layer of state.layers) {
    const rule = findRule(rules.deny, layer.words);
    if (rule) {
      return { state, result: {
        verdict: "deny",
        reason: `the project rules (${rule.file}) deny \`${rule.text}\`${rule.reason ? `: ${rule.reason}` : ""} (it matches \`${shorten(layer.text)}\`)`,
        rule,
        commands,
      } };
    }
  }
  if (ctx.rulesError) return { result: { verdict: "ask", reason: `cannot apply the project rules: ${ctx.rulesError}`, commands }, state };
  const danger = unique(state.findings.filter((f) => f.kind === "danger").map((f) => f.text));
  const opaque = unique(state.findings.filter((f) => f.kind === "opaque").map((f) => f.text));
  if (danger.length > 0) return { state, result: { verdict: "ask", reason: `dangerous command: ${danger.join("; ")}`, commands } };
  if (opaque.length > 0) return { state, result: { verdict: "ask", reason: `cannot check this command: ${opaque.join("; ")}`, commands } };
  for (const layer of state.layers) {
    const rule = findRule(rules.ask, layer.words);
    if (rule) {
      return { state, result: {
        verdict: "ask",
        reason: `the project rules (${rule.file}) ask before \`${rule.text}\`${rule.reason ? `: ${rule.reason}` : ""}`,
        rule,
        commands,
      } };
    }
  }
  if (state.leaves.length > 0) {
    const covering = state.leaves.map((leaf) => findRule(rules.allow, leaf.words));
    if (covering.every((r): r is CommandRule => r !== undefined)) {
      const texts = unique(covering.map((r) => `\`${r.text}\``));
      return { state, result: { verdict: "allow", reason: `allowed by the project rules (${texts.join(", ")})`, rule: covering[0], commands } };
    }
  }
  return { state, result: { verdict: "allow", reason: "nothing dangerous found", commands } };
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
  // `${x@P}` expands x as a prompt, which runs the command substitutions its value holds.
  if (/\$\{[^}]*@P\}/.test(script)) opaque(state, "`${…@P}` prompt expansion runs commands hidden in a variable's value");
  for (const fn of parsed.functions) {
    state.functions.set(fn.name, [...(state.functions.get(fn.name) ?? []), ...fn.calls]);
    if (SHADOWED.has(fn.name) || fn.name in WRAPPERS || fn.name in LEAF_CHECKS || SHELLS.has(fn.name)) {
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
    const bad = places.find((p) => isOutside(p.kind)) ?? places.find((p) => p.kind === "unknown") ?? places.find((p) => isGitDir(p, state));
    if (!bad) continue;
    if (bad.kind === "unknown") {
      opaque(state, `\`${write.op} ${write.target.raw}\` writes to a file only known at run time`);
      continue;
    }
    if (isGitDir(bad, state)) {
      danger(state, `\`${write.op} ${write.target.raw}\` changes the repository's own files (.git), where hooks and settings run programs`);
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
      opaque(state, name.dynamic ? `the command name is computed at run time (\`${shorten(name.raw, 40)}\`)` : `the command name is a file pattern (\`${shorten(name.raw, 40)}\`)`);
      state.leaves.push({ words: current, text });
      state.layers.push({ words: current, text });
      restore();
      return;
    }
    state.layers.push({ words: current, text });
    const unwrap = WRAPPERS[basename(name)];
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
  const delegated = checkLeaf(current, stdin, text, state, depth);
  if (!delegated) state.leaves.push({ words: current, text });
  restore();
}

interface Unwrapped {
  words: Word[];
  danger?: string;
  /** The directory the inner command runs in (`env -C DIR`). */
  cwd?: Word;
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

/** Skips `NAME=value` words (`env A=1 cmd`), recording them as the line's assignments. */
const skipAssignments = (args: Word[], from: number, state?: State) => {
  let i = from;
  while (i < args.length && !args[i]!.dynamic && /^[A-Za-z_][A-Za-z0-9_]*=/.test(args[i]!.value)) {
    const [name] = args[i]!.value.split("=", 1);
    if (state) {
      state.assigned.add(name!);
      checkProgramVariable(name!, { ...args[i]!, value: args[i]!.value.slice(name!.length + 1) }, state, 0);
    }
    i++;
  }
  return i;
};

/** The value of the last of `names` among options (`-C DIR`, `--chdir=DIR`). */
function optionValue(options: Word[], names: readonly string[]): Word | undefined {
  let found: Word | undefined;
  options.forEach((a, i) => {
    const [flag, inline] = a.value.split(/=(.*)/s, 2);
    if (!names.includes(flag!)) return;
    found = inline !== undefined ? { ...a, value: inline, raw: a.raw.replace(/^[^=]*=/, "") } : options[i + 1];
  });
  return found;
}

/** A wrapper that runs the words after its options (`valued` options take a value). */
const afterOptions =
  (valued: readonly string[]): Unwrapper =>
  (args) => ({ words: args.slice(skipOptions(args, valued)) });

/** `npx` / `npm exec`: the command after the options (and `--`), or the `-c` script. */
function npmExec(args: Word[], state: State, depth: number): Unwrapped {
  const i = skipOptions(args, ["-p", "--package", "-c", "--call", "-w", "--workspace"]);
  const script = optionValue(args.slice(0, i), ["-c", "--call"]);
  if (script) return { words: [], delegated: runScript(script, "npx -c", state, depth) };
  return { words: args.slice(i) };
}

/** strace / ltrace: the traced command, and the log file `-o` writes. */
function traced(args: Word[], state: State, valued: readonly string[]): Unwrapped {
  const i = skipOptions(args, valued);
  const options = args.slice(0, i);
  const log = optionValue(options, ["-o", "--output"]);
  if (log) checkTarget(log, "the trace log writes to", state);
  if (options.some((a) => a.value === "-p" || a.value.startsWith("--attach"))) return { words: [] };
  return { words: args.slice(i) };
}

const STDIN_WORDS: Word = { value: "<stdin>", dynamic: true, raw: "(arguments from stdin)", kind: "xargs" };

const ADMIN = "runs it with administrator rights";

const WRAPPERS: Record<string, Unwrapper> = {
  sudo: (args, state) => {
    const options = skipOptions(args, ["-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-T", "-U", "--user", "--group", "--chdir", "--host", "--prompt", "--role", "--type", "--command-timeout", "--other-user", "--close-from"]);
    const i = skipAssignments(args, options, state);
    return { words: args.slice(i), danger: `sudo ${ADMIN}`, cwd: optionValue(args.slice(0, options), ["-D", "--chdir"]) };
  },
  doas: (args) => ({ words: args.slice(skipOptions(args, ["-u", "-C"])), danger: `doas ${ADMIN}` }),
  run0: (args) => ({ words: args.slice(skipOptions(args, ["-u", "--user", "-g", "--group", "-D", "--chdir", "--setenv", "--nice", "--property", "--unit", "--slice"])), danger: `run0 ${ADMIN}` }),
  runuser: (args, state, depth) => {
    const c = args.findIndex((a) => a.value === "-c" || a.value === "--command");
    if (c !== -1) return { words: [], danger: "runuser runs it as another user", delegated: args[c + 1] !== undefined && runScript(args[c + 1]!, "runuser -c", state, depth) };
    return { words: args.slice(skipOptions(args, ["-u", "--user", "-g", "--group", "-G", "--supp-group", "-s", "--shell", "-w", "--whitelist-environment"])), danger: "runuser runs it as another user" };
  },
  chroot: (args) => {
    const rest = args.slice(skipOptions(args, ["--userspec", "--groups"]));
    return { words: rest.slice(1), danger: `chroot ${ADMIN} in another root` };
  },
  nsenter: (args) => {
    const i = skipOptions(args, ["-t", "--target", "-S", "--setuid", "-G", "--setgid", "-w", "--wd", "-r", "--root", "-W"]);
    return { words: args.slice(i), cwd: optionValue(args.slice(0, i), ["-w", "--wd"]) };
  },
  unshare: (args) => {
    const i = skipOptions(args, ["-S", "--setuid", "-G", "--setgid", "--propagation", "-R", "--root", "-w", "--wd", "--map-user", "--map-group", "--map-users", "--map-groups", "--load-interp"]);
    return { words: args.slice(i), cwd: optionValue(args.slice(0, i), ["-w", "--wd"]) };
  },
  flock: (args, state, depth) => {
    const i = skipOptions(args, ["-w", "--timeout", "-E", "--conflict-exit-code"]);
    const rest = args.slice(i + 1); // after the lock file (or descriptor)
    const c = rest.findIndex((a) => a.value === "-c" || a.value === "--command");
    if (c !== -1) return { words: [], delegated: rest[c + 1] !== undefined && runScript(rest[c + 1]!, "flock -c", state, depth) };
    return { words: rest[0]?.value === "--" ? rest.slice(1) : rest };
  },
  taskset: (args) => {
    const i = skipOptions(args, []);
    if (args.slice(0, i).some((a) => /^-[a-z]*p/.test(a.value) || a.value === "--pid")) return { words: [] };
    return { words: args.slice(i + 1) }; // after the CPU mask or list
  },
  chrt: (args) => {
    const i = skipOptions(args, ["-T", "--sched-runtime", "-P", "--sched-period", "-D", "--sched-deadline"]);
    if (args.slice(0, i).some((a) => /^-[a-z]*p/.test(a.value) || a.value === "--pid")) return { words: [] };
    return { words: args.slice(i + 1) }; // after the priority
  },
  setpriv: afterOptions(["--ruid", "--euid", "--reuid", "--rgid", "--egid", "--regid", "--groups", "--inh-caps", "--ambient-caps", "--bounding-set", "--securebits", "--pdeathsig", "--selinux-label", "--apparmor-profile", "--landlock-access", "--landlock-rule", "--seccomp-filter"]),
  prlimit: (args) => {
    const i = skipOptions(args, ["-p", "--pid", "-o", "--output"]);
    if (args.slice(0, i).some((a) => a.value === "-p" || a.value.startsWith("--pid"))) return { words: [] };
    return { words: args.slice(i) };
  },
  strace: (args, state) => traced(args, state, ["-e", "-o", "-p", "-s", "-u", "-a", "-b", "-E", "-I", "-O", "-P", "-S", "-X", "-U", "--output", "--attach", "--user", "--env", "--string-limit"]),
  ltrace: (args, state) => traced(args, state, ["-e", "-o", "-p", "-s", "-u", "-a", "-A", "-D", "-F", "-L", "-l", "-n", "-x", "--output", "--library"]),
  script: (args, state, depth) => {
    // `-qc CMD`: short flags bundled with -c last, which takes the next word.
    args = args.map((a) => (/^-[a-zA-Z]+c$/.test(a.value) && !a.dynamic ? { ...a, value: "-c" } : a));
    const valued = ["-c", "--command", "-E", "--echo", "-I", "--log-in", "-O", "--log-out", "-B", "--log-io", "-T", "--log-timing", "-m", "--logging-format"];
    const options = args.slice(0, skipOptions(args, valued));
    for (const log of [positional(args, valued)[0], optionValue(options, ["-O", "--log-out", "-B", "--log-io", "-I", "--log-in", "-T", "--log-timing"])]) {
      if (log) checkTarget(log, "script writes its log to", state);
    }
    const command = optionValue(options, ["-c", "--command"]);
    if (!command) {
      opaque(state, "script without -c starts a shell that reads commands from its input");
      return { words: [], delegated: true };
    }
    return { words: [], delegated: runScript(command, "script -c", state, depth) };
  },
  parallel: (args, state, depth) => {
    const i = skipOptions(args, ["-j", "--jobs", "-S", "--sshlogin", "-a", "--arg-file", "-d", "--delimiter", "-I", "-n", "--max-args", "-N", "-L", "--max-lines", "--joblog", "--results", "--tmpdir", "--workdir", "--wd", "-E", "--colsep", "-C", "--env", "--timeout", "--delay", "--retries", "--tag-string", "--basefile", "--return", "--transfer-file", "--sshloginfile", "--load", "--memfree"]);
    const rest = args.slice(i);
    const separator = (w: Word) => /^:{3,4}\+?$/.test(w.value);
    const at = rest.findIndex(separator);
    const template = at === -1 ? rest : rest.slice(0, at);
    const inputs = at === -1 ? [] : rest.slice(at + 1).filter((w) => !separator(w));
    if (template.length === 0) {
      opaque(state, "parallel runs commands read from its input");
      return { words: [], delegated: true };
    }
    // Without `:::` the arguments come from stdin, as with xargs.
    if (inputs.length === 0) return { words: [...template, STDIN_WORDS] };
    for (const input of inputs) {
      const filled = template.some((w) => w.value.includes("{}"))
        ? template.map((w) => ({ ...w, value: w.value.split("{}").join(input.value), dynamic: w.dynamic || input.dynamic }))
        : [...template, input];
      runScript(joinWords(filled), "parallel", state, depth);
    }
    return { words: [], delegated: true };
  },
  "systemd-run": (args) => {
    const i = skipOptions(args, ["-p", "--property", "-E", "--setenv", "-u", "--unit", "--slice", "--description", "--working-directory", "-M", "--machine", "-H", "--host", "--uid", "--gid", "--nice", "--on-calendar", "--on-active", "--timer-property", "--path-property", "--socket-property"]);
    return { words: args.slice(i), cwd: optionValue(args.slice(0, i), ["--working-directory"]) };
  },
  firejail: afterOptions([]),
  cgexec: afterOptions(["-g"]),
  numactl: afterOptions(["-N", "-C", "-m", "-i", "-p", "-P", "--cpunodebind", "--physcpubind", "--membind", "--interleave", "--preferred"]),
  faketime: (args) => ({ words: args.slice(skipOptions(args, ["-m", "-f", "-p"]) + 1) }),
  fakeroot: afterOptions(["-l", "--lib", "--faked", "-s", "-i"]),
  eatmydata: afterOptions([]),
  catchsegv: afterOptions([]),
  rlwrap: afterOptions(["-a", "-b", "-C", "-D", "-e", "-f", "-F", "-H", "-l", "-O", "-p", "-P", "-q", "-s", "-S", "-t", "-w", "-z"]),
  proxychains: afterOptions(["-f"]),
  proxychains4: afterOptions(["-f"]),
  torsocks: afterOptions(["-u", "-p", "-a", "-P"]),
  "dbus-run-session": afterOptions(["--config-file", "--dbus-daemon"]),
  "xvfb-run": afterOptions(["-n", "--server-num", "-s", "--server-args", "-f", "--auth-file", "-e", "--error-file", "-p", "--xauth-protocol", "-w", "--wait"]),
  valgrind: afterOptions([]),
  caffeinate: afterOptions(["-t", "-w"]),
  toybox: (args) => ({ words: args }),
  direnv: (args) => (args[0]?.value === "exec" ? { words: args.slice(2) } : undefined),
  pkexec: (args) => ({ words: args.slice(skipOptions(args, ["--user"])), danger: `pkexec ${ADMIN}` }),
  su: (args, state, depth) => {
    const c = args.findIndex((a) => a.value === "-c" || a.value === "--command");
    const delegated = c !== -1 && args[c + 1] !== undefined && runScript(args[c + 1]!, "su -c", state, depth);
    return { words: [], danger: "su runs it as another user", delegated };
  },
  env: (args, state) => {
    let i = 0;
    let cwd: Word | undefined;
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
      if (a.value === "-C" || a.value === "--chdir") cwd = args[i + 1];
      else if (/^-C./.test(a.value) || a.value.startsWith("--chdir=")) cwd = { ...a, value: a.value.replace(/^(-C|--chdir=)/, "") };
      i += ["-u", "--unset", "-C", "--chdir"].includes(a.value) ? 2 : 1;
    }
    const words = [...split, ...args.slice(skipAssignments(args, i, state))];
    // `env` alone prints the environment: a program of its own, not a wrapper.
    return words.length === 0 && !cwd ? undefined : { words, cwd };
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
  // Package runners: `uv run CMD`, `poetry run CMD`, `bundle exec CMD`, `pnpm exec CMD`...
  uv: (args) => (args[0]?.value === "run" ? { words: args.slice(1 + skipOptions(args.slice(1), ["--with", "--python", "-p", "--directory", "--project", "--env-file", "--package", "--extra", "--group"])) } : undefined),
  poetry: (args) => (args[0]?.value === "run" ? { words: args.slice(1 + skipOptions(args.slice(1), [])) } : undefined),
  pipenv: (args) => (args[0]?.value === "run" ? { words: args.slice(1) } : undefined),
  bundle: (args) => (args[0]?.value === "exec" ? { words: args.slice(1) } : undefined),
  pnpm: (args) => (["exec", "dlx"].includes(args[0]?.value ?? "") ? { words: args.slice(1 + skipOptions(args.slice(1), ["--package"])) } : undefined),
  yarn: (args) => (["exec", "dlx"].includes(args[0]?.value ?? "") ? { words: args.slice(1 + skipOptions(args.slice(1), ["-p", "--package"])) } : undefined),
  // `npx rimraf ~` runs the package's command with those arguments; `npx -c '…'` runs a script.
  npx: (args, state, depth) => npmExec(args, state, depth),
  bunx: afterOptions(["-p", "--package"]),
  npm: (args, state, depth) => (["exec", "x"].includes(args[0]?.value ?? "") ? npmExec(args.slice(1), state, depth) : undefined),
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

/** Names whose redefinition as a function changes what later commands in the line mean. */
const SHADOWED = new Set(["cd", "pushd", "popd", "ls", "cat", "echo", "printf", "test", "[", "true", "false", "rm", "git", "grep", "rg", "sed", "find", "head", "tail", "pwd", "alias", "unalias", "set", "shopt", "export", "source", ".", "trap", "read", "type", "hash"]);

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
  "GIT_EXTERNAL_DIFF", "GIT_SSH_COMMAND", "GIT_SSH", "GIT_PAGER", "PAGER", "MANPAGER", "GIT_EDITOR", "EDITOR", "VISUAL",
  "GIT_SEQUENCE_EDITOR", "GIT_ASKPASS", "SSH_ASKPASS", "SUDO_ASKPASS", "BASH_ENV", "ENV", "PROMPT_COMMAND", "GIT_PROXY_COMMAND",
  "LESSOPEN", "LESSCLOSE", "GIT_EXEC_PATH", "GIT_TEMPLATE_DIR", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM",
]);

function checkProgramVariable(name: string, value: Word, state: State, depth: number): void {
  if (/^GIT_CONFIG_(COUNT|KEY_\d+|VALUE_\d+|PARAMETERS)$/.test(name)) {
    opaque(state, `\`${name}\` sets git options on the command line, which can run programs`);
    return;
  }
  if (!PROGRAM_VARIABLES.has(name)) return;
  state.notReadOnly.push(name);
  runScript(value, `\`${name}=\``, state, depth);
}

/** Functions that call each other in a cycle (`a(){ b|b& }; b(){ a|a& }; a`): a fork bomb. */
function checkFunctionCycles(state: State): void {
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
function throughLinks(at: Location, state: State): Location {
  if (!at.path) return at;
  const link = state.links.find((l) => at.path === l.path || at.path!.startsWith(`${l.path}/`));
  return link ? link.to : at;
}

/** `ln -s TARGET LINK`: remember links that lead out of the workspace (or to a path known only at run time). */
function recordLink(args: Word[], state: State): void {
  const files = positional(args, ["-t", "--target-directory", "-S", "--suffix"]);
  const target = files[0];
  if (!target) return;
  const to = locate(target, state.cwd, state.places);
  if (!isOutside(to.kind) && to.kind !== "unknown") return;
  const name = files.length > 1 ? files[files.length - 1]! : { ...target, value: path.basename(target.value), dynamic: false };
  const at = locate(name, state.cwd, state.places);
  if (at.path) state.links.push({ path: at.path, to: to.kind === "unknown" ? { kind: "unknown" } : to });
  else opaque(state, `\`ln\` creates a link at a path only known at run time`);
}

/** Inside the workspace's `.git` folder: history, hooks and settings. */
function isGitDir(at: Location, state: State): boolean {
  if (!at.path) return false;
  const git = path.join(state.places.workspace, ".git");
  return at.path === git || at.path.startsWith(`${git}/`);
}

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
  if (["blkdiscard", "hdparm", "mdadm", "lvremove", "vgremove", "pvremove", "cryptsetup", "zpool", "zfs", "dmsetup", "badblocks"].includes(name)) {
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
  /** The repository's `.git` folder asks (deletes, moves and writes: history, hooks, settings). */
  gitAsks?: boolean;
}

/** Writes or deletes at `word`: asks when that is outside the workspace. */
function checkTarget(word: Word, verb: string, state: State, options: TargetOptions = {}): void {
  const at = throughLinks(locate(word, state.cwd, state.places), state);
  if ((options.gitAsks ?? true) && isGitDir(at, state)) {
    danger(state, `${verb} ${word.raw} (the repository's history, hooks and settings in .git)`);
    return;
  }
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
    // A variable or substitution the line could not read may name anything (`rm -f "$(echo ~/.x)"`).
    const computed = /[$`]/.test(target.raw);
    checkTarget(target, `${verb} deletes`, state, { unknownAsks: recursive || computed, wholeWorkspaceAsks: recursive, tempIsOutside: true, gitAsks: true });
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
    else if (a.value.startsWith("--config-env")) pair = (a.value.includes("=") ? a.value.split(/=(.*)/s)[1] : globals[j + 1]?.value) ?? "";
    if (pair === undefined) return;
    const [key, value = "true"] = pair.split(/=(.*)/s);
    config.set(key!.toLowerCase(), value);
    if (GIT_PROGRAM_KEYS.test(key!)) danger(state, `\`git -c ${shorten(pair, 50)}\` makes git run a program`);
  });
  if (globals.some((a) => a.value.startsWith("--exec-path") && a.value.includes("="))) opaque(state, "git --exec-path runs git's commands from another folder");
  const sub = args[i]?.value;
  const rest = args.slice(i + 1);
  const values = rest.map((a) => a.value);
  const has = (...flags: string[]) => values.some((v) => flags.includes(v.split("=")[0]!));
  const hasLong = (option: string, shortest: number) => values.some((v) => isLong(v, option, shortest));
  for (const a of rest) {
    if (/^--(upload-pack|receive-pack|exec)(=|$)/.test(a.value)) opaque(state, `git ${sub ?? ""} ${a.value.split("=")[0]} runs a program`);
    if (/^--(ext-diff|textconv)$/.test(a.value)) opaque(state, `git ${sub ?? ""} ${a.value} runs programs set in git's configuration`);
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
      if (forced && !hasFlag(rest, "n") && !hasLong("--dry-run", 3)) danger(state, "git clean -f deletes untracked files");
      break;
    }
    case "push":
      if (hasFlag(rest, "f") || hasFlag(rest, "d") || hasLong("--force", 5) || hasLong("--force-with-lease", 9) || hasLong("--force-if-includes", 9) || hasLong("--mirror", 4) || hasLong("--delete", 4) || hasLong("--prune", 5)) {
        danger(state, "git push --force (or --delete) rewrites or deletes history on the remote");
      } else if (positional(rest).slice(1).some((a) => a.value.startsWith("+") || a.value.startsWith(":"))) {
        danger(state, "git push with a +refspec or :refspec rewrites or deletes history on the remote");
      }
      break;
    case "checkout":
      if (has("--", ".", "--ours", "--theirs") || hasFlag(rest, "f") || hasLong("--force", 5) || hasFlag(rest, "p") || hasLong("--patch", 4)) {
        danger(state, "git checkout of paths (or -f) discards uncommitted changes");
      }
      break;
    case "switch":
      if (hasFlag(rest, "f") || hasLong("--force", 5) || hasLong("--discard-changes", 4) || has("-C")) danger(state, "git switch --discard-changes discards uncommitted changes");
      break;
    case "restore":
      if (!(has("--staged", "-S") || hasLong("--staged", 5)) || has("--worktree", "-W")) danger(state, "git restore discards uncommitted changes");
      break;
    case "stash":
      if (values[0] === "drop" || values[0] === "clear") danger(state, `git stash ${values[0]} deletes saved changes`);
      break;
    case "branch":
      if (hasFlag(rest, "D") || hasFlag(rest, "M") || hasFlag(rest, "C") || ((hasFlag(rest, "d") || hasLong("--delete", 4)) && (hasFlag(rest, "f") || hasLong("--force", 4)))) {
        danger(state, "git branch -D (or -M) deletes or overwrites a branch that may not be merged");
      }
      break;
    case "tag":
      if (hasFlag(rest, "d") || hasLong("--delete", 4) || hasFlag(rest, "f") || hasLong("--force", 4)) danger(state, "git tag -d (or -f) deletes or moves a tag");
      break;
    case "rebase":
      if (!values.some((v) => ["--abort", "--quit", "--show-current-patch", "--continue", "--skip", "--edit-todo"].includes(v))) danger(state, "git rebase rewrites the branch's history");
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
      if (values[0] === "expire" || values[0] === "delete") danger(state, `git reflog ${values[0]} deletes recovery points`);
      break;
    case "gc":
      if (values.some((v) => v.startsWith("--prune"))) danger(state, "git gc --prune deletes unreachable commits, the last way to recover lost work");
      break;
    case "prune":
      danger(state, "git prune deletes unreachable commits, the last way to recover lost work");
      break;
    case "update-ref":
      if (hasFlag(rest, "d") || has("--stdin")) danger(state, "git update-ref changes or deletes branches directly");
      break;
    case "rm":
      if (hasFlag(rest, "f") || hasLong("--force", 4)) danger(state, "git rm -f deletes files with uncommitted changes");
      break;
    case "worktree":
      if (values[0] === "remove" && (has("-f", "--force") || hasFlag(rest, "f"))) danger(state, "git worktree remove --force deletes uncommitted changes");
      break;
    case "checkout-index":
    case "read-tree":
      if (hasFlag(rest, "f") || has("--reset", "-u")) danger(state, `git ${sub} overwrites files in the working tree`);
      break;
    case "config": {
      const words = positional(rest, ["-f", "--file", "--blob", "--type", "--default", "--comment"]);
      const key = ["set", "unset", "get", "list", "edit"].includes(words[0]?.value ?? "") ? words[1] : words[0];
      const writes = words.length >= 2 || has("--unset", "--unset-all", "--add", "--replace-all", "--edit", "-e") || words[0]?.value === "set";
      if (writes && key && GIT_PROGRAM_KEYS.test(key.value)) danger(state, `git config ${key.value} makes git run a program`);
      if (writes && has("--global", "--system")) danger(state, "git config --global changes settings outside the workspace");
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
      if (values[0] === "foreach") runScript(joinWords(positional(rest.slice(1))), "git submodule foreach", state, depth);
      break;
    case "bisect":
      if (values[0] === "run" && rest.length > 1) examine(rest.slice(1), undefined, `git bisect ${values.join(" ")}`, state, depth);
      break;
  }
}

/** Tests that pick files by name: without one, `find . -delete` empties the workspace. */
const FIND_NAME_TESTS = ["-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex", "-lname", "-ilname", "-newer", "-samefile", "-inum", "-links"];

function checkFind(args: Word[], state: State, depth: number, info: LeafInfo): void {
  let i = 0;
  const roots: Word[] = [];
  while (i < args.length && !(args[i]!.value.startsWith("-") || ["(", "!", ")"].includes(args[i]!.value))) roots.push(args[i++]!);
  if (roots.length === 0) roots.push({ value: ".", dynamic: false, raw: ".", kind: "word" });
  const under = (root: Word): Word => ({ ...root, value: `${root.value.replace(/\/+$/, "")}/{}`, raw: `${root.raw.replace(/\/+$/, "")}/{}` });
  for (; i < args.length; i++) {
    const a = args[i]!.value;
    if (a === "-delete") {
      const filtered = args.some((w) => FIND_NAME_TESTS.includes(w.value));
      for (const root of roots) {
        const at = locate(root, state.cwd, state.places);
        if (!filtered && at.kind === "workspace") danger(state, `find ${root.raw} -delete deletes the whole workspace`);
        else checkTarget(under(root), "find -delete deletes files under", state, { unknownAsks: true, tempIsOutside: true });
      }
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

function checkInterpreter(name: string, family: string, args: Word[], stdin: StdinSource | undefined, state: State): void {
  const inlineFlags = INLINE_CODE[family] ?? [];
  const inline = args.findIndex((a) => inlineFlags.includes(a.value));
  if (inline !== -1) {
    // `python3 -c "$(curl …)"`: code that only exists once something has run.
    const code = args[inline + 1];
    if (code?.dynamic) opaque(state, `${name} ${args[inline]!.value} runs code only known at run time (\`${shorten(code.raw, 60)}\`)`);
    return;
  }
  const rest = positional(args, INTERPRETER_VALUED);
  const first = rest[0];
  if (first && first.value !== "-" && !isStdinPath(first.value)) {
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
  // `cat <<EOF | sh`: cat prints the heredoc.
  const input = from[0]!.stdin;
  if (name === "cat" && args.length === 0 && input?.kind === "text" && !input.dynamic) return input.text;
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
    if (targets.some((t) => t.value === "-1") || all.some((t) => t.value === "-1")) danger(state, "kill -1 stops every process the user can signal");
  },
  killall5: (_args, state) => danger(state, "killall5 stops every process"),
  crontab: (args, state) => {
    if (hasFlag(args, "r")) danger(state, "crontab -r deletes every scheduled job");
  },
  systemctl: (args, state) => {
    const [sub, ...units] = positional(args, ["-H", "--host", "-M", "--machine", "-p", "--property", "-t", "--type", "-s", "--signal", "--state", "-n", "--lines", "-o", "--output", "--root", "--job-mode"]).map((w) => w.value);
    if (STOPS_MACHINE.includes(sub ?? "")) danger(state, `systemctl ${sub} stops the machine`);
    else if (["start", "isolate", "restart", "reload-or-restart", "try-restart", "enable", "link"].includes(sub ?? "") && units.some((u) => STOPS_MACHINE.includes(u.replace(/\.target$/, "")) || u === "ctrl-alt-del.target" || u === "shutdown.target")) {
      danger(state, `systemctl ${sub} ${units.join(" ")} stops the machine`);
    }
  },
  loginctl: (args, state) => {
    const sub = positional(args)[0]?.value ?? "";
    if (STOPS_MACHINE.includes(sub) || ["terminate-user", "kill-user", "terminate-session", "kill-session"].includes(sub)) danger(state, `loginctl ${sub} stops the machine or a user's session`);
  },
  init: (args, state) => checkRunlevel("init", args, state),
  telinit: (args, state) => checkRunlevel("telinit", args, state),
  alias: (args, state) => {
    if (args.some((a) => a.value.includes("="))) opaque(state, "defines an alias, so later commands in the line may run something else");
  },
  shopt: (args, state) => {
    if (args.some((a) => a.value === "expand_aliases")) opaque(state, "turns on aliases, so later commands in the line may run something else");
  },
  touch: (args, state) => {
    for (const t of positional(args, ["-r", "--reference", "-d", "--date", "-t"])) checkTarget(t, "touch changes", state);
  },
  rg: (args, state) => {
    const runner = args.find((a) => /^--(pre|hostname-bin)(=|$)/.test(a.value));
    if (runner) opaque(state, `rg ${runner.value.split("=")[0]} runs a program on what it searches`);
  },
  tar: checkTar,
  sort: (args, state) => {
    checkOutputOption("sort", args, ["-o", "--output"], state);
    if (args.some((a) => a.value.startsWith("--compress-program"))) opaque(state, "sort --compress-program runs a program");
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
    for (const t of positional(args, ["-t", "--target-directory", "-S", "--suffix"])) checkTarget(t, "mv moves", state, { tempIsOutside: true });
    checkTargetDirectory(args, "mv moves files into", state);
  },
  cp: (args, state) => checkCopy("cp", args, state),
  install: (args, state) => checkCopy("install", args, state),
  ln: (args, state) => {
    checkCopy("ln", args, state);
    recordLink(args, state);
  },
  rsync: (args, state, depth) => {
    const shell = optionValue(args, ["-e", "--rsh"]);
    if (shell) runScript(shell, "rsync -e", state, depth);
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
  sed: (args, state) => {
    checkInPlace("sed", args, state);
    checkSedScript(args, state);
  },
  perl: (args, state) => checkInPlace("perl", args, state),
  curl: (args, state) => checkOutputOption("curl", args, ["-o", "--output"], state),
  wget: (args, state) => checkOutputOption("wget", args, ["-O", "--output-document", "-P", "--directory-prefix"], state),
};

/** /dev/stdin and its other names: a program reading code from there reads it from a pipe. */
const isStdinPath = (p: string) => ["/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"].includes(p);

function checkSourced(name: string, args: Word[], state: State, depth: number, stdin: StdinSource | undefined): boolean {
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

const STOPS_MACHINE = ["poweroff", "reboot", "halt", "kexec", "suspend", "hibernate", "hybrid-sleep", "suspend-then-hibernate", "rescue", "emergency", "soft-reboot", "default"];

/** `init 0`, `telinit 6`, `telinit 1`: change the runlevel, which stops the machine or its services. */
function checkRunlevel(name: string, args: Word[], state: State): void {
  const level = positional(args)[0]?.value ?? "";
  if (/^[0-6sSqQuU]$/.test(level) && !/^[qQuU]$/.test(level)) danger(state, `${name} ${level} stops the machine or its services`);
}

/** GNU tar: options that run programs, and extraction or archives outside the workspace. */
function checkTar(args: Word[], state: State): void {
  const first = args[0]?.value ?? "";
  // `tar xzf a.tgz` (an old-style bundle without a dash) or `tar -xzf a.tgz`.
  const bundles = args.filter((a, i) => (i === 0 && /^[A-Za-z]+$/.test(first)) || /^-[A-Za-z]+$/.test(a.value)).map((a) => a.value.replace(/^-/, ""));
  const values = args.map((a) => a.value);
  const extracting = bundles.some((b) => b.includes("x")) || values.some((v) => /^--(extract|get)$/.test(v));
  const creating = bundles.some((b) => /[cru]/.test(b)) || values.some((v) => /^--(create|append|update)$/.test(v));
  const runner = values.find((v) => /^--(to-command|checkpoint-action|use-compress-program|rsh-command|info-script|new-volume-script)(=|$)/.test(v) || v === "-I" || v === "-F");
  if (runner) opaque(state, `tar ${runner.split("=")[0]} runs a program`);
  if (extracting && (values.includes("-P") || values.includes("--absolute-names") || bundles.some((b) => b.includes("P")))) {
    danger(state, "tar -P extracts to absolute paths, anywhere on the machine");
  }
  const dir = optionValue(args, ["-C", "--directory"]);
  if (extracting && dir) checkTarget(dir, "tar extracts into", state);
  if (creating) {
    const file = optionValue(args, ["-f", "--file"]) ?? (bundles[0]?.endsWith("f") ? args[args.findIndex((a) => a.value.replace(/^-/, "") === bundles[0]) + 1] : undefined);
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
    const m = /^\s*(ProxyCommand|LocalCommand|KnownHostsCommand|RemoteCommand|PermitLocalCommand|Include|Match)\s*[= ]\s*(.*)$/is.exec(option);
    if (!m) return;
    const key = m[1]!.toLowerCase();
    if (key === "proxycommand" || key === "localcommand" || key === "knownhostscommand") runScript({ ...a, value: m[2]!, dynamic: a.dynamic || Boolean(args[i + 1]?.dynamic && a.value === "-o") }, `${name} -o ${m[1]}`, state, depth);
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
    if (/(^|[;{}\n]\s*)([0-9,$/!]*\s*)?e(\s|$|;)/.test(script.value) || /(^|[;{}\n\s])s(.).*\2.*\2[gpiImM0-9w]*e/.test(script.value)) {
      opaque(state, "the sed script runs commands (`e`)");
    }
    const write = /(?:^|[;{}\n\s])(?:[0-9,$!]*\s*)?[wW]\s+(\S+)|s(.).*\2.*\2[gpiImM0-9e]*w\s*(\S+)/.exec(script.value);
    const target = write?.[1] ?? write?.[3];
    if (target) checkTarget({ ...script, value: target, raw: target }, "the sed script writes to", state);
  }
}
