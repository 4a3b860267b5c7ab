import type { Location, Places } from "./locations.js";
import type { CommandRule, ProjectRules } from "./rules.js";
import type { ShellParser, StdinSource, Word } from "./shell-parse.js";
import type { Unwrapper } from "./classify-unwrap.js";

/** What classify.ts and its parts share: the verdict types and the state of one classification. */
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

/**
 * The per-command table (classify-commands.ts), handed in by classify.ts: a wrapper's inner
 * command (classify-unwrap.ts) is checked against it, and the table's checks unwrap nested
 * commands in turn. Passing it in keeps the two files from importing each other.
 */
export interface LeafCommands {
  /** The commands the table knows, by name. */
  names: Readonly<Record<string, unknown>>;
  /** Checks one innermost command; true when a shell running a readable script delegated to it. */
  check(words: Word[], stdin: StdinSource | undefined, text: string, state: State, depth: number): boolean;
}

export interface State {
  parse: ShellParser;
  leafCommands: LeafCommands;
  /** The wrapper table (classify-wrappers.ts), handed in by classify.ts for the same reason. */
  commandTables: { wrappers: Readonly<Record<string, Unwrapper>> };
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
  /**
   * Writes that leave the workspace without being dangerous on their own (`> /tmp/x`): an allow
   * rule for the command does not cover them, so the approval mode decides.
   */
  outsideWrites: string[];
  /** Symlinks the line creates, and where they lead (`ln -s ~/x l && rm -rf l/`). */
  links: { path: string; to: Location }[];
}

export function unique<T>(items: T[]): T[] {
  return [...new Set(items)];
}

export function shorten(text: string, max = 80): string {
  const one = text.replace(/\s+/g, " ").trim();
  return one.length > max ? `${one.slice(0, max - 1)}…` : one;
}

export const danger = (state: State, text: string) => state.findings.push({ kind: "danger", text });
export const opaque = (state: State, text: string) => state.findings.push({ kind: "opaque", text });
