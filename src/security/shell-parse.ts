import { createRequire } from "node:module";
import type { Node } from "web-tree-sitter";

/**
 * Reads a bash command line with tree-sitter's bash grammar (WASM, no native build) and turns
 * it into what the classifier needs: every simple command with its words after quote removal,
 * the redirections that write files, where each command's stdin comes from, and the functions
 * it defines. The parser is loaded once, on first use.
 */

/** One word of a command after quote removal. */
export interface Word {
  /**
   * The word as bash would see it, where that is known: quotes removed, escapes applied,
   * `$HOME` / `${HOME}` written as `~`. Parts only known at run time keep their source text.
   */
  value: string;
  /** True when part of the word is only known at run time (a variable, a substitution...). */
  dynamic: boolean;
  /** The source text. */
  raw: string;
  /** The tree-sitter node type of the whole word (e.g. `process_substitution`). */
  kind: string;
}

/** A redirection that may write a file: `>`, `>>`, `&>`, `>|`, `<>`... */
export interface WriteRedirect {
  op: string;
  target: Word;
}

/** Where a command's standard input comes from, when the command line says. */
export type StdinSource =
  | { kind: "pipe"; from: SimpleCommand[] }
  | { kind: "text"; text: string; dynamic: boolean; via: "heredoc" | "herestring" | "process" };

export interface SimpleCommand {
  /** Name and arguments (assignments such as `FOO=1` in front are not included). */
  words: Word[];
  /** Its source text. */
  text: string;
  /** Where it starts in the script (a character offset). */
  at: number;
  stdin?: StdinSource;
  /**
   * "and": it runs right after the command before it, in the folder that one left: the right
   * side of `&&` (`cd x && rm y`), the first command of a substitution. "pipe": a later stage of
   * a pipeline, which starts where the stage before it started (`cd x | rm y` never leaves).
   * Any other command may run where an earlier one failed (`cd x; rm y` runs in the old folder
   * when `cd x` fails).
   */
  joined?: "and" | "pipe";
  /** It is in a loop or a function body: it may run again after the commands that follow it. */
  repeats?: true;
}

/** A variable the line sets (`X=1`, `export X=1`, `CDPATH=~ cd d`), with its value as a word. */
export interface Assignment {
  name: string;
  value: Word;
  /** Where it starts in the script (a character offset). */
  at: number;
}

export interface FunctionDefinition {
  name: string;
  /** Names of the commands its body runs. */
  calls: string[];
}

export interface ParsedScript {
  /** Every simple command, in source order, including those inside substitutions and functions. */
  commands: SimpleCommand[];
  /** Redirections that write, wherever they appear. */
  writes: WriteRedirect[];
  functions: FunctionDefinition[];
  /** Every variable assignment, wherever it appears. */
  assignments: Assignment[];
  /** Parts the parser could not read (syntax errors, missing tokens). */
  errors: string[];
}

export type ShellParser = (script: string) => ParsedScript;

let loading: Promise<ShellParser> | undefined;

/** The bash parser, loaded once (the WASM files come from web-tree-sitter and tree-sitter-bash). */
export function loadShellParser(): Promise<ShellParser> {
  loading ??= (async () => {
    const require = createRequire(import.meta.url);
    // Required here, not imported: its JavaScript (a large file outside the CLI's bundle and
    // code cache) then loads only when a parser is wanted, not with the module.
    const { Language, Parser } = require("web-tree-sitter") as typeof import("web-tree-sitter");
    await Parser.init();
    const language = await Language.load(require.resolve("tree-sitter-bash/tree-sitter-bash.wasm"));
    const parser = new Parser();
    parser.setLanguage(language);
    return (script: string) => {
      const tree = parser.parse(script);
      if (!tree)
        return { commands: [], writes: [], functions: [], assignments: [], errors: ["the parser returned nothing"] };
      try {
        return readProgram(tree.rootNode);
      } finally {
        tree.delete();
      }
    };
  })();
  loading.catch(() => (loading = undefined));
  return loading;
}

// ---------------------------------------------------------------------------------------------
// Words

const SIMPLE_ESCAPES: Record<string, string> = {
  a: "\x07",
  b: "\b",
  e: "\x1b",
  E: "\x1b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
  v: "\v",
  "\\": "\\",
  "'": "'",
  '"': '"',
  "?": "?",
};

/** `$'...'` as bash decodes it. */
export function decodeAnsiC(body: string): string {
  return body.replace(
    /\\(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|U[0-9a-fA-F]{1,8}|[0-7]{1,3}|c.|.)/gs,
    (all, esc: string) => {
      const head = esc[0]!;
      if (head === "x" || head === "u" || head === "U") return String.fromCodePoint(parseInt(esc.slice(1), 16));
      if (/[0-7]/.test(head)) return String.fromCharCode(parseInt(esc, 8) & 0xff);
      if (head === "c" && esc.length === 2) return String.fromCharCode(esc.charCodeAt(1) & 0x1f);
      return SIMPLE_ESCAPES[esc] ?? all;
    },
  );
}

/** An unquoted word: line continuations dropped, `\x` becomes `x`. */
function unescapeUnquoted(text: string): string {
  return text.replace(/\\\n/g, "").replace(/\\(.)/gs, "$1");
}

/** Inside double quotes only `\$ \` \" \\` and a newline are escapes. */
function unescapeDoubleQuoted(text: string): string {
  return text.replace(/\\\n/g, "").replace(/\\([$`"\\])/g, "$1");
}

const HOME_EXPANSIONS = new Set(["$HOME", "${HOME}"]);

function wordOf(node: Node): Word {
  const { value, dynamic } = evaluate(node);
  return { value, dynamic, raw: node.text, kind: node.type };
}

function evaluate(node: Node): { value: string; dynamic: boolean } {
  switch (node.type) {
    case "word":
    case "command_name":
      if (node.type === "command_name" && node.namedChildren.length === 1) return evaluate(node.namedChildren[0]!);
      return { value: unescapeUnquoted(node.text), dynamic: false };
    case "number":
    case "file_descriptor":
      return { value: node.text, dynamic: false };
    case "raw_string":
      return { value: node.text.slice(1, -1), dynamic: false };
    case "ansi_c_string":
      return { value: decodeAnsiC(node.text.slice(2, -1)), dynamic: false };
    case "string":
    case "translated_string":
      return joinParts(node.children.filter((c) => c.type !== '"' && c.type !== '$"'));
    case "concatenation":
      return joinParts(node.children);
    case "simple_expansion":
    case "expansion":
      return HOME_EXPANSIONS.has(node.text) ? { value: "~", dynamic: false } : { value: node.text, dynamic: true };
    default:
      // Substitutions, arithmetic, brace expansions, globs of other shapes: known only at run time.
      return { value: node.text, dynamic: true };
  }
}

function joinParts(parts: Node[]): { value: string; dynamic: boolean } {
  let value = "";
  let dynamic = false;
  for (const part of parts) {
    if (part.type === "string_content") value += unescapeDoubleQuoted(part.text);
    else if (!part.isNamed) value += part.text;
    else {
      const inner = evaluate(part);
      value += inner.value;
      dynamic ||= inner.dynamic;
    }
  }
  return { value, dynamic };
}

// ---------------------------------------------------------------------------------------------
// Commands

const WRITE_OPS = new Set([">", ">>", "&>", "&>>", ">|", "<>"]);
const SUBSTITUTIONS = new Set(["command_substitution", "process_substitution"]);

function readProgram(root: Node): ParsedScript {
  const out: ParsedScript = { commands: [], writes: [], functions: [], assignments: [], errors: [] };
  if (root.hasError) out.errors.push(describeError(root));
  visit(root, out, undefined);
  return out;
}

function describeError(root: Node): string {
  const bad = findFirst(root, (n) => n.isError || n.isMissing);
  if (!bad) return "the shell parser could not read it";
  if (bad.isMissing) return `the shell parser could not read it (missing \`${bad.type}\`)`;
  const text = bad.text.length > 40 ? `${bad.text.slice(0, 40)}…` : bad.text;
  return `the shell parser could not read it (near \`${text}\`)`;
}

function findFirst(node: Node, test: (n: Node) => boolean): Node | undefined {
  if (test(node)) return node;
  for (const child of node.children) {
    const found = findFirst(child, test);
    if (found) return found;
  }
  return undefined;
}

/** Visits a subtree; returns the commands it runs directly (not those in substitutions). */
function visit(node: Node, out: ParsedScript, stdin: StdinSource | undefined): SimpleCommand[] {
  switch (node.type) {
    case "command":
      return [readCommand(node, out, stdin)];
    case "pipeline": {
      const all: SimpleCommand[] = [];
      let previous: SimpleCommand[] | undefined;
      for (const stage of node.namedChildren) {
        const cmds = within(out, previous ? "pipe" : undefined, () =>
          visit(stage, out, previous ? { kind: "pipe", from: previous } : stdin),
        );
        all.push(...cmds);
        previous = cmds;
      }
      return all;
    }
    case "list": {
      const all: SimpleCommand[] = [];
      let and = false;
      for (const child of node.children) {
        if (!child.isNamed) and = child.type === "&&";
        else all.push(...within(out, and ? "and" : undefined, () => visit(child, out, stdin)));
      }
      return all;
    }
    case "for_statement":
    case "c_style_for_statement":
    case "while_statement":
      return repeating(out, () => visitChildren(node, out, stdin));
    case "redirected_statement": {
      const body = node.childForFieldName("body");
      let input = stdin;
      for (const child of node.namedChildren) {
        if (child === body || child.id === body?.id) continue;
        input = readRedirect(child, out) ?? input;
      }
      const cmds = body ? visit(body, out, input) : [];
      // The rest of the line after `<<EOF` sits inside the heredoc node: `cat <<EOF > f`,
      // `cat <<EOF | sh`, `cat <<EOF && rm …`.
      for (const child of node.namedChildren) {
        if (child.type !== "heredoc_redirect") continue;
        for (const rest of child.namedChildren) {
          if (["heredoc_start", "heredoc_body", "heredoc_end"].includes(rest.type)) continue;
          if (rest.type === "file_redirect" || rest.type === "herestring_redirect") readRedirect(rest, out);
          else if (rest.type === "pipeline" || rest.type === "command")
            cmds.push(...visit(rest, out, { kind: "pipe", from: cmds.slice() }));
          else visit(rest, out, undefined);
        }
      }
      return cmds;
    }
    case "function_definition": {
      const name = node.childForFieldName("name");
      const body = node.childForFieldName("body");
      const cmds = repeating(out, () => (body ? visit(body, out, undefined) : []));
      if (name) out.functions.push({ name: name.text, calls: cmds.map((c) => c.words[0]?.value ?? "") });
      return cmds;
    }
    case "command_substitution":
    case "process_substitution":
      within(out, "and", () => visitChildren(node, out, undefined));
      return [];
    case "heredoc_body":
      visitChildren(node, out, undefined);
      return [];
    case "variable_assignment":
      recordAssignment(node, out);
      visitSubstitutions(node, out);
      return [];
    default:
      return visitChildren(node, out, stdin);
  }
}

/** Visits with `visit`, marking the first command it records as `joined` (see SimpleCommand). */
function within(out: ParsedScript, joined: SimpleCommand["joined"], visit: () => SimpleCommand[]): SimpleCommand[] {
  const first = out.commands.length;
  const cmds = visit();
  if (joined && out.commands[first]) out.commands[first].joined = joined;
  return cmds;
}

/** Visits with `visit`, marking every command it records as one that `repeats` (a loop's or a function's body). */
function repeating(out: ParsedScript, visit: () => SimpleCommand[]): SimpleCommand[] {
  const first = out.commands.length;
  const cmds = visit();
  for (const c of out.commands.slice(first)) c.repeats = true;
  return cmds;
}

function visitChildren(node: Node, out: ParsedScript, stdin: StdinSource | undefined): SimpleCommand[] {
  const all: SimpleCommand[] = [];
  for (const child of node.namedChildren) all.push(...visit(child, out, stdin));
  return all;
}

/** Records a write redirection; returns the stdin a heredoc or herestring gives. */
function readRedirect(node: Node, out: ParsedScript): StdinSource | undefined {
  visitSubstitutions(node, out);
  if (node.type === "file_redirect") {
    const op = node.children.find((c) => !c.isNamed)?.type ?? "";
    const destination =
      node.childForFieldName("destination") ?? node.namedChildren.find((c) => c.type !== "file_descriptor");
    // `>&2` and `2>&1` duplicate descriptors; they write no file.
    // `< <(curl …)`: stdin is the output of a command, known only at run time.
    if (op === "<" && destination?.type === "process_substitution")
      return { kind: "text", text: destination.text, dynamic: true, via: "process" };
    if (WRITE_OPS.has(op) && destination) out.writes.push({ op, target: wordOf(destination) });
    else if (op === ">&" && destination && destination.type !== "number" && destination.text !== "-") {
      out.writes.push({ op, target: wordOf(destination) });
    }
    return undefined;
  }
  if (node.type === "herestring_redirect") {
    const word = node.namedChildren[node.namedChildren.length - 1];
    if (!word) return undefined;
    const w = wordOf(word);
    return { kind: "text", text: w.value, dynamic: w.dynamic, via: "herestring" };
  }
  if (node.type === "heredoc_redirect") {
    const body = node.namedChildren.find((c) => c.type === "heredoc_body");
    const text = body?.text ?? "";
    const dynamic = Boolean(body?.namedChildren.some((c) => c.type !== "heredoc_content"));
    return { kind: "text", text, dynamic, via: "heredoc" };
  }
  return undefined;
}

function visitSubstitutions(node: Node, out: ParsedScript): void {
  for (const child of node.namedChildren) {
    if (SUBSTITUTIONS.has(child.type) || child.type === "heredoc_body") visit(child, out, undefined);
    else visitSubstitutions(child, out);
  }
}

function readCommand(node: Node, out: ParsedScript, stdin: StdinSource | undefined): SimpleCommand {
  const words: Word[] = [];
  let input = stdin;
  const command: SimpleCommand = { words, text: node.text, at: node.startIndex };
  out.commands.push(command);
  for (const child of node.namedChildren) {
    switch (child.type) {
      case "variable_assignment":
        visit(child, out, undefined);
        break;
      case "file_redirect":
      case "herestring_redirect":
      case "heredoc_redirect":
        input = readRedirect(child, out) ?? input;
        break;
      default:
        words.push(wordOf(child));
        if (SUBSTITUTIONS.has(child.type)) visit(child, out, undefined);
        else visitSubstitutions(child, out);
    }
  }
  if (input) command.stdin = input;
  return command;
}

function recordAssignment(node: Node, out: ParsedScript): void {
  const name = node.childForFieldName("name")?.text;
  if (!name) return;
  const value = node.childForFieldName("value");
  const word = value ? wordOf(value) : { value: "", dynamic: false, raw: "", kind: "word" };
  out.assignments.push({ name, value: word, at: node.startIndex });
}
