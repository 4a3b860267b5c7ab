import path from "node:path";
import type { Cond } from "./classify-tables.js";
import type { Link, LocationKind, Places } from "./locations.js";
import type { CommandRule, ProjectRules } from "./rules.js";
import type { ShellParser, Word } from "./shell-parse.js";

/** What classify.ts and its parts share: the verdict types, the state of one classification, word helpers. */
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
  /** What the line touches and why it is dangerous (not on a deny: the project's rule decided). */
  facts?: CommandFacts;
}

/** A path a command names, and where it lies. */
export interface PathFact {
  /** The word as written (`~/.bashrc`, `"$X"`). */
  word: string;
  where: LocationKind;
  /** The absolute path, when known. */
  path?: string;
  /** What is done to it: "rm deletes", "`>` writes to", "names". */
  verb: string;
}

export interface CommandFacts {
  /** Every path a command or redirection writes, creates, changes, moves or deletes, as far as the line shows. */
  writes: PathFact[];
  /** Paths outside the workspace the line names without writing them (it may read them). */
  reads: PathFact[];
  /** A write may land outside the workspace (a temporary folder too) or somewhere only known at run time. */
  writesOutside: boolean;
  /** A command of the line reaches the network, as far as the tables know (curl, ssh, git fetch…). */
  network: boolean;
  /** Why it asks: each dangerous or unreadable part, with its reason. */
  findings: Finding[];
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

export interface Finding {
  /** danger: it does something that needs a person; opaque: it cannot be read, so it may. */
  kind: "danger" | "opaque";
  reason: string;
}

interface Leaf {
  words: Word[];
  text: string;
}

/** A folder the line may be in; null when only known at run time. */
export type Folder = string | null;

/** Where the line is, for locating the words of a command: what matchers may read, never change. */
export interface Where {
  readonly here: readonly Folder[];
  readonly places: Places;
  /** Symlinks the line creates, and where they lead (`ln -s ~/x l && rm -rf l/`). */
  readonly links: readonly Link[];
}

export interface State extends Where {
  parse: ShellParser;
  /** Every folder the current command may run in. */
  here: Folder[];
  /** Every folder the line may be in at some point (redirections and git's repository are judged from all). */
  reached: Folder[];
  /** Every folder the current script's shell may have been in so far (its own `cd`s, not a wrapper's `-C`). */
  visited: Folder[];
  /** Every folder the current script's shell may visit at all: where loop bodies and trap handlers may run. */
  later: Folder[];
  /** A first pass that only finds folders (`later`): it reports nothing. */
  scratch?: boolean;
  findings: Finding[];
  /** The innermost commands (what allow rules must cover). */
  leaves: Leaf[];
  /** Every layer of every command, wrappers included (what deny and ask rules are tried on). */
  layers: Leaf[];
  /** Variables the line sets to a value known now (`X=~/.profile`), so `"$X"` can be read. */
  vars: Map<string, Word>;
  /** Variables the line binds more than once or to a value known only at run time: never read. */
  unknownVars: Set<string>;
  /** Every variable name the line sets anywhere (CDPATH changes what `cd name` means). */
  assigned: Set<string>;
  /** Functions defined in the line, with the names their bodies call (for call cycles). */
  functions: Map<string, string[]>;
  /** Why the line is not read-only, when something other than its commands says so. */
  notReadOnly: string[];
  /**
   * Writes that leave the workspace without being dangerous on their own (`> /tmp/x`): an allow
   * rule for the command does not cover them, so the approval mode decides.
   */
  outsideWrites: string[];
  links: Link[];
  writes: PathFact[];
  reads: PathFact[];
  network: boolean;
}

/** The state of a classification that starts in the folders `here`. */
export function newState(parse: ShellParser, places: Places, here: readonly Folder[]): State {
  const state = { parse, places, here: [...here], reached: [...here], visited: [...here], later: [], network: false };
  return {
    ...state,
    findings: [],
    leaves: [],
    layers: [],
    vars: new Map(),
    unknownVars: new Set(),
    assigned: new Set(),
    functions: new Map(),
    notReadOnly: [],
    outsideWrites: [],
    links: [],
    writes: [],
    reads: [],
  };
}

/** How a write or delete at a path is judged. */
export interface TargetOptions {
  /** A path only known at run time asks (recursive deletes, dd). */
  unknownAsks?: boolean;
  /** The workspace root itself asks (recursive deletes). */
  wholeWorkspaceAsks?: boolean;
  /** Temporary folders count as outside (deletes: anything outside the workspace asks). */
  tempIsOutside?: boolean;
}

/**
 * What a row or matcher says a command does. The engine (classify-engine.ts) judges each one
 * against where the line is, so the tables and matchers never call back into it.
 */
export type Effect =
  | { danger: string }
  | { opaque: string }
  | { notReadOnly: string }
  | { write: Word; verb: string; how?: TargetOptions }
  /** A command it runs (`find -exec`, `git bisect run`). */
  | { run: Word[]; text?: string }
  /** A command line it runs (`sh -c WORD`, `ssh -o ProxyCommand=…`). */
  | { script: Word; what: string; later?: boolean }
  /** `ln` arguments: a link the line creates. */
  | { link: Word[] }
  /** A variable a wrapper sets (`sudo A=1 cmd`). */
  | { assign: string; value: Word }
  | { network: true };

/** What a wrapper runs. */
export interface Unwrapped {
  /** The command it runs (empty: the wrapper is itself the command). */
  words: Word[];
  /** The folder the command runs in (`env -C DIR`). */
  cwd?: Word;
  /** It ran a script that was read (`watch 'cmd'`, `su -c 'cmd'`): no command of its own. */
  delegated?: boolean;
  effects: Effect[];
}

export function unique<T>(items: T[]): T[] {
  return [...new Set(items)];
}

export function shorten(text: string, max = 80): string {
  const one = text.replace(/\s+/g, " ").trim();
  return one.length > max ? `${one.slice(0, max - 1)}…` : one;
}

// ---------------------------------------------------------------------------------------------
// Words

const SPLIT = new Map<string, readonly string[]>();
/** A table's list (`"-u --user"`) as words. */
export function list(text: string | undefined): readonly string[] {
  if (!text) return [];
  let words = SPLIT.get(text);
  if (!words) SPLIT.set(text, (words = text.split(" ").filter(Boolean)));
  return words;
}

export const word = (value: string): Word => ({ value, dynamic: false, raw: value, kind: "word" });
export const basename = (w: Word | undefined) => (w ? path.basename(w.value) : "");
export const isOption = (w: Word) => !w.dynamic && w.value.length > 1 && w.value.startsWith("-");

/** Skips options: `valued` take the next word (or `--opt=value`), `--` ends them. Returns the first non-option's index. */
export function skipOptions(args: readonly Word[], valued: readonly string[]): number {
  let i = 0;
  while (i < args.length) {
    const a = args[i]!;
    if (a.dynamic) return i;
    if (a.value === "--") return i + 1;
    if (!a.value.startsWith("-") || a.value === "-") return i;
    const [flag] = a.value.split("=", 1);
    i += valued.includes(flag!) && !a.value.includes("=") ? 2 : 1;
  }
  return i;
}

/** Every value of `names` (`-o FILE`, `--output=FILE`), in order. */
export function optionValues(args: readonly Word[], names: readonly string[]): Word[] {
  const out: Word[] = [];
  args.forEach((a, i) => {
    const [flag, inline] = a.value.split(/=(.*)/s, 2);
    if (!names.includes(flag!)) return;
    const value = inline !== undefined ? { ...a, value: inline, raw: a.raw.replace(/^[^=]*=/, "") } : args[i + 1];
    if (value) out.push(value);
  });
  return out;
}

/** The value of the last of `names` among options (`-C DIR`, `--chdir=DIR`). */
export const optionValue = (options: readonly Word[], names: readonly string[]) => optionValues(options, names).at(-1);

/** The words that are not options (nor the values of `valued` ones); `--` ends the options. */
export function positional(args: readonly Word[], valued: readonly string[] = []): Word[] {
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

/** The short option `letter`, alone or bundled (`-fdx`), or one of the long options. */
export const hasFlag = (args: readonly Word[], letter: string, long: readonly string[] = []) =>
  args.find(
    (a) =>
      !a.dynamic &&
      ((/^-[A-Za-z]+$/.test(a.value) && a.value.slice(1).includes(letter)) || long.includes(a.value.split("=")[0]!)),
  );

/** A long option as git reads it: any unique prefix of at least `shortest` characters (`--ha` is `--hard`). */
export const isLong = (value: string, option: string, shortest: number) => {
  const flag = value.split("=")[0]!;
  return flag.startsWith("--") && flag.length >= shortest && option.startsWith(flag);
};

export function joinWords(words: readonly Word[]): Word {
  return {
    value: words.map((w) => w.value).join(" "),
    dynamic: words.some((w) => w.dynamic),
    raw: words.map((w) => w.raw).join(" "),
    kind: "joined",
  };
}

/** A table's text with `{name}`, `{1}` (the first argument) and `{arg}` (the argument that matched) filled in. */
export function fill(text: string, name: string, args: readonly Word[], matched?: Word | boolean): string {
  const arg = typeof matched === "object" ? matched.value.split("=")[0]! : "";
  return text
    .replace("{name}", name)
    .replace("{1}", args[0]?.value ?? "")
    .replace("{arg}", arg);
}

// ---------------------------------------------------------------------------------------------
// Conditions (the grammar is in classify-tables.ts)

const PATTERNS = new Map<string, RegExp>();

/** Whether `cond` holds for the arguments: the argument that made it hold, or true/false. */
export function holds(cond: Cond, args: readonly Word[], valued = ""): Word | boolean {
  if (typeof cond === "string" && cond.includes(" ") && !cond.startsWith("/")) return holds(list(cond), args, valued);
  if (typeof cond === "string") return atom(cond, args, valued);
  if (Array.isArray(cond)) {
    for (const c of cond as readonly Cond[]) {
      const found = holds(c, args, valued);
      if (found) return found;
    }
    return false;
  }
  if ("all" in cond) {
    let found: Word | boolean = true;
    for (const c of cond.all) if (!(found = holds(c, args, valued))) return false;
    return found;
  }
  return !holds((cond as { not: Cond }).not, args, valued);
}

function atom(a: string, args: readonly Word[], valued: string): Word | boolean {
  if (a === "@-") return args[0]?.value.startsWith("-") ? args[0] : false;
  const first = positional(args, list(valued))[0];
  if (a === "@") return first === undefined;
  if (a.startsWith("@")) return first?.value === a.slice(1) ? first : false;
  if (a.startsWith("#")) return positional(args, list(valued)).length <= Number(a.slice(1));
  if (a.startsWith("/") && a.endsWith("/") && a.length > 1) {
    let re = PATTERNS.get(a);
    if (!re) PATTERNS.set(a, (re = new RegExp(a.slice(1, -1))));
    return args.find((w) => re!.test(w.value)) ?? false;
  }
  if (a.startsWith("=")) return args.find((w) => w.value.split("=")[0] === a.slice(1)) ?? false;
  const abbreviated = /^(--[\w-]+)~(\d+)$/.exec(a);
  if (abbreviated) return args.find((w) => isLong(w.value, abbreviated[1]!, Number(abbreviated[2]))) ?? false;
  if (/^-[A-Za-z0-9]$/.test(a)) return hasFlag(args, a[1]!) ?? false;
  return args.find((w) => w.value.split("=")[0] === a) ?? false;
}
