import path from "node:path";
import { commandEffects, commandRow, isReadOnly, isWrapper, unwrap } from "./classify-rows.js";
import {
  type Effect,
  type Folder,
  MAX_NESTING,
  type State,
  type TargetOptions,
  newState,
  basename,
  joinWords,
  list,
  positional,
  shorten,
} from "./classify-state.js";
import {
  GIT_CONFIG_VARIABLES,
  HOME_SECRETS,
  INTERPRETER_VALUED,
  PROGRAM_VARIABLES,
  SHADOWED,
  STDIN_PATHS,
} from "./classify-tables.js";
import { describeLocation, isOutside, type Location, locate, locateAll } from "./locations.js";
import { decodeAnsiC, type SimpleCommand, type StdinSource, type Word } from "./shell-parse.js";

/**
 * The classifier's engine: scripts into commands, wrappers into the command they run (by the
 * wrapper table), each command's effects (by the command table, classify-rows.ts) judged against
 * where the line is, variables, functions, and the code shells and interpreters are given inline
 * or on stdin. It imports the tables; nothing it imports calls back into it.
 */

const danger = (state: State, reason: string) => state.findings.push({ kind: "danger", reason });
const opaque = (state: State, reason: string) => state.findings.push({ kind: "opaque", reason });

// ---------------------------------------------------------------------------------------------
// Scripts and commands

export function analyzeScript(script: string, state: State, depth: number): void {
  if (depth > MAX_NESTING) {
    opaque(state, `scripts nested more than ${MAX_NESTING} levels deep`);
    return;
  }
  const parsed = state.parse(script);
  // The script starts where its shell runs; what it visits stays visited for the rest of the line.
  const outer = { visited: state.visited, later: state.later };
  state.visited = [...state.here];
  // Loop and function bodies and trap handlers may run after any later command, from any folder
  // the script visits: a first pass finds those folders.
  if (!state.scratch && (parsed.commands.some((c) => c.repeats) || /\btrap\b/.test(script)))
    state.later = union(state.later, foldersVisited(script, state, depth));
  for (const error of parsed.errors) opaque(state, error);
  // `${x@P}` expands x as a prompt, which runs the command substitutions its value holds.
  if (/\$\{[^}]*@P\}/.test(script))
    opaque(state, "`${…@P}` prompt expansion runs commands hidden in a variable's value");
  for (const fn of parsed.functions) {
    state.functions.set(fn.name, [...(state.functions.get(fn.name) ?? []), ...fn.calls]);
    if (list(SHADOWED).includes(fn.name) || isWrapper(fn.name) || commandRow(fn.name))
      opaque(state, `defines a function named \`${fn.name}\`, so later \`${fn.name}\` commands may run something else`);
  }
  // A variable is read as its value only when the line binds it once, to a value known now, and
  // only after that: `X=~/.x; rm "$X"; X=a` is not `rm a`, nor is `rm "$X"; X=a`.
  const setAt = new Map<string, number>();
  for (const a of parsed.assignments) {
    state.assigned.add(a.name);
    if (a.value.dynamic || !boundOnce(a.name, script, parsed.assignments)) state.unknownVars.add(a.name);
    if (state.unknownVars.has(a.name)) state.vars.delete(a.name);
    else {
      state.vars.set(a.name, a.value);
      setAt.set(a.name, a.at);
    }
    checkProgramVariable(a.name, a.value, state, depth);
  }
  let start = state.here;
  for (const command of parsed.commands) {
    // After `;` (or `||`, or a new line) an earlier `cd` may have failed: any folder visited so far.
    if (command.repeats) state.here = union(state.visited, state.later);
    else if (command.joined === "pipe") state.here = start;
    else if (!command.joined) state.here = [...state.visited];
    start = state.here;
    // Arguments only: a command name from a variable stays unreadable (`$a`).
    const known = (name: string) => (setAt.get(name) ?? -1) < command.at;
    const words = command.words.map((w, i) => (i === 0 ? w : resolveVariable(w, state, known)));
    examine(words, command.stdin, command.text, state, depth);
  }
  state.visited = union(outer.visited, state.visited);
  state.later = outer.later;
  // Redirections are checked against every folder the line may be in by then.
  for (const write of parsed.writes) {
    const where = `\`${write.op} ${write.target.raw}\``;
    const places = locateAll(write.target, { ...state, here: state.reached });
    for (const at of places) record(state, write.target, at, `\`${write.op}\` writes to`);
    if (places.some((p) => p.kind !== "null-device")) state.notReadOnly.push(`${write.op} ${write.target.raw}`);
    if (places.some((p) => p.kind === "temp")) state.outsideWrites.push(`${write.op} ${write.target.raw}`);
    const bad =
      places.find((p) => isOutside(p.kind)) ??
      places.find((p) => p.kind === "unknown") ??
      places.find((p) => isGitDir(p, state));
    if (!bad) continue;
    if (bad.kind === "unknown") opaque(state, `${where} writes to a file only known at run time`);
    else if (isGitDir(bad, state))
      danger(state, `${where} changes the repository's own files (.git), where hooks and settings run programs`);
    else danger(state, `${where} writes to ${describe(bad, write.target)}`);
  }
}

/** "~/x (in the home folder, outside the workspace)". */
const describe = (location: Location, word: Word) => `${word.raw} (${describeLocation(location.kind)})`;

/** Follows wrappers to the command that really runs, then checks it. */
function examine(words: Word[], stdin: StdinSource | undefined, text: string, state: State, depth: number): void {
  let current = words;
  // `env -C DIR`, `sudo -D DIR`...: the inner command runs there (and only it).
  const outer = state.here;
  let moved = false;
  const restore = () => {
    if (moved) state.here = outer;
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
      return restore();
    }
    state.layers.push({ words: current, text });
    const inner = unwrap(basename(name), current.slice(1));
    if (!inner) break;
    apply(inner.effects, state, depth);
    if (inner.cwd) {
      moveTo(state, (cwd) => folderOf(inner.cwd!, cwd, state), false);
      moved = true;
    }
    if (inner.delegated) return restore();
    if (inner.words.length === 0) break;
    current = inner.words.map((w, i) => (i === 0 ? w : resolveVariable(w, state)));
  }
  if (current.length === 0) return restore();
  // A shell running a script we could read is not a command of its own: the script's are.
  const delegated = checkCommand(current, stdin, text, state, depth);
  if (!delegated) state.leaves.push({ words: current, text });
  restore();
}

const union = (a: readonly Folder[], b: readonly Folder[]): Folder[] => [...new Set([...a, ...b])];

/** Every folder a script's shell may be in, from a first pass that keeps nothing else. */
function foldersVisited(script: string, state: State, depth: number): Folder[] {
  const scratch: State = {
    ...newState(state.parse, state.places, state.here),
    scratch: true,
    visited: [...state.visited],
    vars: new Map(state.vars),
    unknownVars: new Set(state.unknownVars),
    assigned: new Set(state.assigned),
    links: [...state.links],
  };
  analyzeScript(script, scratch, depth);
  return scratch.visited;
}

/** The folder `dir` names from `cwd`, when it is one known now (not computed, not relative to an unknown folder). */
function folderOf(dir: Word, cwd: Folder, state: State): Folder {
  if (dir.dynamic) return null;
  const at = locate(dir, cwd, state.places);
  return !at.path || !path.isAbsolute(at.path) ? null : at.path;
}

/** Moves every folder the command may be in, and remembers them as reached (and, for the shell's own `cd`, visited). */
function moveTo(state: State, next: (cwd: Folder) => Folder, shell: boolean): void {
  state.here = [...new Set(state.here.map(next))];
  state.reached = union(state.reached, state.here);
  if (shell) state.visited = union(state.visited, state.here);
}

/** Checks what the innermost command does; true when it only runs a script that was read. */
function checkCommand(
  words: Word[],
  stdin: StdinSource | undefined,
  text: string,
  state: State,
  depth: number,
): boolean {
  const name = basename(words[0]);
  const args = words.slice(1);
  checkNamedPaths(words, state);
  const row = commandRow(name);
  const found = state.findings.length;
  try {
    if (!row) return false;
    if (row.shell) return checkShell(name, args, stdin, state, depth);
    if (row.code !== undefined) checkInterpreter(name, list(row.code), args, stdin, state);
    else if (row.builtin === "eval") return args.length > 0 && runScript(joinWords(args), "eval", state, depth);
    else if (row.builtin === "source") return checkSourced(name, args, state, depth, stdin);
    else if (row.builtin === "cd") changeDirectory(args, state);
    else if (row.builtin === "popd") moveTo(state, () => null, true);
    apply(commandEffects(name, row, args, { at: state, stdin, text }), state, depth);
    return false;
  } finally {
    // Said only when nothing more precise was (`touch a` after `cd ~` names the file it changes).
    if (state.findings.length === found) checkWhereItRuns(name, words, row, state);
  }
}

/** Judges what a row or matcher says a command does. */
function apply(effects: readonly Effect[], state: State, depth: number): void {
  for (const e of effects) {
    if ("danger" in e) danger(state, e.danger);
    else if ("opaque" in e) opaque(state, e.opaque);
    else if ("notReadOnly" in e) state.notReadOnly.push(e.notReadOnly);
    else if ("write" in e) checkTarget(e.write, e.verb, state, e.how);
    else if ("run" in e) examine(e.run, undefined, e.text ?? joinWords(e.run).raw, state, depth);
    else if ("script" in e && e.later) {
      // A trap's handler runs when the shell exits or gets a signal: in any folder the script visits.
      const here = state.here;
      state.here = union(state.visited, state.later);
      runScript(e.script, e.what, state, depth);
      state.here = here;
    } else if ("script" in e) runScript(e.script, e.what, state, depth);
    else if ("link" in e) recordLink(e.link, state);
    else if ("assign" in e) {
      state.assigned.add(e.assign);
      checkProgramVariable(e.assign, e.value, state, 0);
    } else state.network = true;
  }
}

function changeDirectory(args: Word[], state: State): void {
  const target = positional(args)[0];
  moveTo(
    state,
    (cwd) => {
      if (!target) return state.places.home;
      if (target.value === "-") return null;
      // With CDPATH set, `cd name` may go to a folder of that name anywhere CDPATH lists.
      if (state.assigned.has("CDPATH") && !/^(\/|\.\.?(\/|$)|~)/.test(target.value)) return null;
      return folderOf(target, cwd, state);
    },
    true,
  );
}

/** A command name with an unquoted glob (`/usr/bin/r[m]`, `/???/rm`): the shell picks the file. */
function isPattern(name: Word): boolean {
  return /^(?:[^'"\\]|\\.)*[*?[]/.test(name.raw.replace(/'[^']*'|"[^"]*"/g, "x"));
}

/**
 * Whether the script binds `name` once: one assignment, and no other word names it (`read X`,
 * `for X in`, `printf -v X`, `${X:=…}`, `((X=1))`); its `$X` expansions do not count.
 */
function boundOnce(name: string, script: string, assignments: readonly { name: string }[]): boolean {
  if (assignments.filter((a) => a.name === name).length !== 1) return false;
  if (script.includes(`\${${name}:=`) || script.includes(`\${${name}=`)) return false;
  return (script.match(new RegExp(`(?<![\\w$]|\\$\\{)${name}(?!\\w)`, "g")) ?? []).length === 1;
}

/** `"$X"` where the line set X to a known value (`X=~/.profile; rm -f "$X"`) reads as that value. */
function resolveVariable(word: Word, state: State, known: (name: string) => boolean = () => true): Word {
  if (!word.dynamic) return word;
  const m = /^\$(?:\{([A-Za-z_]\w*)\}|([A-Za-z_]\w*))(.*)$/s.exec(word.value);
  if (!m || !known(m[1] ?? m[2]!)) return word;
  const value = state.vars.get(m[1] ?? m[2]!);
  const rest = m[3] ?? "";
  if (!value || /[$`]/.test(rest) || /[$`]/.test(value.value)) return word;
  return { ...word, value: value.value + rest, dynamic: false };
}

function checkProgramVariable(name: string, value: Word, state: State, depth: number): void {
  if (GIT_CONFIG_VARIABLES.test(name)) {
    opaque(state, `\`${name}\` sets git options on the command line, which can run programs`);
    return;
  }
  if (!list(PROGRAM_VARIABLES).includes(name)) return;
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

/** `ln -s TARGET LINK`: remember links that lead out of the workspace (or to a path known only at run time). */
function recordLink(args: Word[], state: State): void {
  const files = positional(args, ["-t", "--target-directory", "-S", "--suffix"]);
  const target = files[0];
  if (!target) return;
  for (const cwd of state.here) {
    const to = locate(target, cwd, state.places);
    if (!isOutside(to.kind) && to.kind !== "unknown") continue;
    const name =
      files.length > 1 ? files[files.length - 1]! : { ...target, value: path.basename(target.value), dynamic: false };
    const at = locate(name, cwd, state.places);
    if (at.path) state.links.push({ path: at.path, to: to.kind === "unknown" ? { kind: "unknown" } : to });
    else opaque(state, "`ln` creates a link at a path only known at run time");
  }
}

/** Inside the workspace's `.git` folder: history, hooks and settings. */
function isGitDir(at: Location, state: State): boolean {
  if (!at.path) return false;
  const git = path.join(state.places.workspace, ".git");
  return at.path === git || at.path.startsWith(`${git}/`);
}

/** A path the line writes, and where it lies: what the facts report. */
function record(state: State, word: Word, at: Location, verb: string): void {
  state.writes.push({ word: word.raw, where: at.kind, ...(at.path ? { path: at.path } : {}), verb });
}

/** Writes or deletes at `word`: asks when that is outside the workspace. */
function checkTarget(word: Word, verb: string, state: State, options: TargetOptions = {}): void {
  for (const at of locateAll(word, state)) {
    record(state, word, at, verb);
    if (at.kind !== "null-device") state.notReadOnly.push(`${verb} ${word.raw}`);
    // The repository's `.git` folder asks whatever the command: history, hooks and settings.
    if (isGitDir(at, state))
      danger(state, `${verb} ${word.raw} (the repository's history, hooks and settings in .git)`);
    else if (at.kind === "unknown") {
      if (options.unknownAsks)
        danger(
          state,
          `${verb} ${word.raw === "(arguments from stdin)" ? "paths read from stdin" : `\`${shorten(word.raw, 60)}\``}, a path only known at run time`,
        );
    } else if (at.kind === "workspace") {
      if (options.wholeWorkspaceAsks)
        danger(
          state,
          `${verb} ${word.raw} (${/^[*?]+$/.test(path.basename(word.value)) || !isPattern(word) ? "the whole workspace" : "what it matches in the workspace's top folder"})`,
        );
    } else if (isOutside(at.kind) || (options.tempIsOutside && at.kind === "temp"))
      danger(state, `${verb} ${describe(at, word)}`);
    else if (at.kind === "temp") state.outsideWrites.push(`${verb} ${word.raw}`);
  }
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
// Paths a command names: credentials, and what lies outside the workspace

/**
 * Any argument naming a credentials file or folder asks: `cat ~/.ssh/id_rsa`, and the spellings
 * that do not name it literally: a pattern that can match it (`~/.ss?/id_rsa`), another user's
 * home (`~root/.ssh`, `/home/bob/.ssh`), a path up from the workspace (`../.ssh`), a relative
 * path after `cd ~` or after a `cd` into a folder only known at run time
 * (`cd "$(echo ~)" && cat .ssh/id_rsa`). Paths outside the workspace are facts (`reads`).
 */
function checkNamedPaths(words: Word[], state: State): void {
  const left = state.here.some((cwd) => cwd === null || !isInsideWorkspace(cwd, state));
  for (const w of words.slice(1)) {
    const value = w.value.includes("=") && w.value.startsWith("-") ? w.value.slice(w.value.indexOf("=") + 1) : w.value;
    const anchored = /^([~/]|\.\.(\/|$))/.test(value);
    if (value === "" || (!anchored && !left)) continue;
    const places = anchored ? locateAll({ ...w, value }, state) : [];
    const secret = places.some((at) => at.kind === "secret") || (!w.dynamic && reachesCredentials(value, state));
    for (const at of places.filter((p) => secret || p.kind === "temp" || (isOutside(p.kind) && p.path)))
      state.reads.push({
        word: w.raw,
        where: secret ? "secret" : at.kind,
        ...(at.path ? { path: at.path } : {}),
        verb: "names",
      });
    if (secret) danger(state, `\`${shorten(w.raw, 60)}\` touches credentials in the home folder`);
  }
}

/**
 * A program that is not read-only, run after a `cd` out of the workspace (or into a folder only
 * known at run time), may write where it runs though no argument names it: `cd ~ && npm init -y`,
 * `git init`, `xargs touch`. That is writing outside the workspace.
 */
function checkWhereItRuns(name: string, words: Word[], row: ReturnType<typeof commandRow>, state: State): void {
  // An inline script (`sh -c`, eval) is judged command by command, where it runs; a script file or `source` is not.
  const inline =
    row?.builtin === "eval" || (row?.shell && words.slice(1).some((w) => /^-[a-z]*c[a-z]*$/i.test(w.value)));
  if (row?.builtin === "cd" || row?.builtin === "popd" || inline || isReadOnly(words)) return;
  const away = state.here.find((cwd) => cwd === null || !isInsideWorkspace(cwd, state));
  if (away === undefined) return;
  const where = away === null ? describeLocation("unknown-folder") : `in ${away} (outside the workspace)`;
  danger(state, `${name} runs ${where}, where it may change files`);
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
        out += `[${segment
          .slice(i + 1, close)
          .replace(/^!/, "^")
          .replace(/\\/g, "\\\\")}]`;
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
  const inHome = (absolute: string) => (absolute.startsWith(`${home}/`) ? absolute.slice(home.length) : undefined);
  const user = /^~[^/]*(\/.*)?$/.exec(value);
  const other = /^\/(?:root|home\/[^/]+)(\/.*)?$/.exec(value);
  let rests: (string | undefined)[];
  if (user) rests = [user[1] ?? ""];
  else if (other) rests = [other[1] ?? ""];
  else if (value.startsWith("/")) rests = [inHome(value)];
  else
    rests = state.here.map((cwd) => {
      if (cwd === null) return `/${value}`;
      return isInsideWorkspace(cwd, state) ? undefined : inHome(path.resolve(cwd, value));
    });
  return rests.some((rest) => rest !== undefined && namesSecret(rest));
}

/** Whether a path under the home folder (maybe a pattern) names a secret, something inside one, or a folder holding one. */
function namesSecret(rest: string): boolean {
  const wanted = path.posix
    .normalize(rest === "" ? "/" : rest)
    .split("/")
    .filter((x) => x !== "" && x !== ".");
  if (wanted.length === 0) return false;
  const patterns = wanted.map(segmentPattern);
  // Through a pattern, a folder holding one counts (`cp -r ~/.c* /tmp`).
  return HOME_SECRETS.some((secret) => {
    const parts = secret.split("/");
    const n = Math.min(parts.length, patterns.length);
    for (let k = 0; k < n; k++) if (!patterns[k]!.test(parts[k]!)) return false;
    return patterns.length >= parts.length || wanted.slice(0, n).some((seg) => /[*?[]/.test(seg));
  });
}

// ---------------------------------------------------------------------------------------------
// Shells and interpreters: the code they are given inline, in a file or on stdin

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
      if (/^[-+][oO]$/.test(a.value)) {
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
    if (script.kind === "process_substitution") return producedLater(state, name, script);
    if (script.value !== "-" && !isStdinPath(script.value)) return false; // a script file: the approval mode decides
  }
  return codeFromStdin(name, true, stdin, state, depth);
}

function checkInterpreter(
  name: string,
  inlineFlags: readonly string[],
  args: Word[],
  stdin: StdinSource | undefined,
  state: State,
): void {
  const inline = args.findIndex((a) => inlineFlags.includes(a.value));
  if (inline !== -1) {
    // `python3 -c "$(curl …)"`: code that only exists once something has run.
    const code = args[inline + 1];
    if (code?.dynamic)
      opaque(state, `${name} ${args[inline]!.value} runs code only known at run time (\`${shorten(code.raw, 60)}\`)`);
    return;
  }
  const first = positional(args, list(INTERPRETER_VALUED))[0];
  if (first && first.value !== "-" && !isStdinPath(first.value)) {
    if (first.kind === "process_substitution") producedLater(state, name, first);
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
    const flags = args.filter((a) => /^-[neE]+$/.test(a.value));
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
    if (stdin.dynamic && (stdin.via !== "heredoc" || (!isShell && /\$\(|`/.test(stdin.text)))) {
      const source =
        stdin.via === "process"
          ? `\`< ${shorten(stdin.text, 60)}\``
          : `a ${stdin.via === "heredoc" ? "heredoc" : "here-string"} with a substitution`;
      opaque(state, `${name} runs ${isShell ? "a script" : "code"} only known at run time (${source})`);
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
const isStdinPath = (p: string) => list(STDIN_PATHS).includes(p);

function checkSourced(
  name: string,
  args: Word[],
  state: State,
  depth: number,
  stdin: StdinSource | undefined,
): boolean {
  const file = args[0];
  if (!file) return false;
  const fromStdin = file.kind !== "process_substitution" && isStdinPath(file.value);
  if (fromStdin && stdin) return codeFromStdin(name, true, stdin, state, depth);
  if (fromStdin || file.kind === "process_substitution") return producedLater(state, name, file);
  if (file.dynamic) opaque(state, `${name} runs a script only known at run time (\`${shorten(file.raw, 60)}\`)`);
  return false;
}

/** `sh <(curl …)`, `source /dev/stdin` with nothing piped in: a script that exists only once something ran. */
function producedLater(state: State, name: string, script: Word): false {
  opaque(state, `${name} runs a script produced at run time (\`${shorten(script.raw, 60)}\`)`);
  return false;
}
