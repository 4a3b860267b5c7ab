import { shellSplit } from "../shell-quote.js";

/**
 * A custom slash command's file: Markdown with optional front matter, as Claude Code's
 * `.claude/commands/*.md` and Codex's prompts are written:
 *
 *   ---
 *   description: Review a file for bugs
 *   argument-hint: <file> [focus]
 *   ---
 *   Review $1 for bugs, looking hardest at $2. Everything typed: $ARGUMENTS
 *
 * `/name args` sends the body with the arguments put in: `$ARGUMENTS` (also Gemini CLI's
 * `{{args}}`) is everything typed after the name, as typed; `$1` … `$9` are its words, split as a
 * shell splits them (quotes group words, nothing is expanded: app/custom-commands.ts says so in
 * /help). A template that names none of them gets the arguments after a blank line.
 *
 * Claude Code's other two forms in a body: `` !`cmd` `` is a command whose output takes its place
 * (app/custom-commands.ts runs it through the approval of a model's execute_command call before
 * the prompt is sent), and `@path` attaches a workspace file (app/mentions.ts, as for a typed
 * request). The front matter's `allowed-tools` and `model` are read and named as not honoured.
 */

export interface CommandTemplate {
  /** One line for /help. */
  description?: string;
  /** How /help shows the arguments, e.g. `<file> [focus]`. */
  argumentHint?: string;
  /** The prompt, front matter removed. */
  body: string;
  /** Front matter fields that would change what the command does and that mini-cursor does not honour. */
  ignored?: string[];
}

/** Claude Code's front matter fields that change behaviour, which a command here does not honour, and why. */
export const IGNORED_FIELDS: Readonly<Record<string, string>> = {
  "allowed-tools": "every call asks as in the session's approval mode",
  model: "the session's model answers",
};

/** `` !`cmd` `` in a body: a command whose output is put in its place. */
const SHELL_LINE = /!`([^`\n]+)`/g;
/** Where command `i`'s output goes in an expanded body (NUL never comes from a file or the prompt line). */
export const shellMark = (i: number): string => `\u0000${i}\u0000`;
const SHELL_MARK = /\u0000(\d+)\u0000/g;

/** Characters of a description or hint kept for /help. */
const MAX_LABEL_CHARS = 200;

const PLACEHOLDER = /\$ARGUMENTS\b|\{\{args\}\}|\$([1-9])/g;

/** A value without the quotes around it. */
export function unquote(value: string): string {
  const v = value.trim();
  if (v.length >= 2 && (v[0] === '"' || v[0] === "'") && v.endsWith(v[0])) return v.slice(1, -1);
  return v;
}

/**
 * Front matter's lines with YAML's block scalars (`description: >` or `|`, then indented lines) as
 * one `key: value` line each, the lines joined by spaces: what the line readers here (and
 * agent-files.ts) understand. Claude Code's files use them for long descriptions.
 */
export function foldBlockScalars(front: string): string[] {
  const lines = front.split(/\r?\n/);
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const block = /^([A-Za-z][\w-]*)\s*:\s*[>|][-+]?\s*$/.exec(lines[i]!);
    if (!block) out.push(lines[i]!);
    else {
      const body: string[] = [];
      while (i + 1 < lines.length && /^(\s+\S|\s*$)/.test(lines[i + 1]!)) body.push(lines[++i]!.trim());
      out.push(`${block[1]}: ${body.filter(Boolean).join(" ")}`);
    }
  }
  return out;
}

/** Splits off the front matter (`---` lines at the very top) and reads its `key: value` lines. */
export function parseCommandTemplate(text: string): CommandTemplate {
  const normalised = text.replace(/^\uFEFF/, "").replace(/\r\n/g, "\n");
  const front = /^---\n([\s\S]*?)\n---[ \t]*(?:\n|$)/.exec(normalised);
  if (!front) return { body: normalised.trim() };
  const fields = new Map<string, string>();
  for (const line of foldBlockScalars(front[1]!)) {
    const m = /^([A-Za-z][\w-]*)\s*:\s*(.*)$/.exec(line);
    if (m) fields.set(m[1]!.toLowerCase(), unquote(m[2]!));
  }
  const label = (key: string) => {
    const v = fields.get(key)?.replace(/\s+/g, " ").trim();
    return v ? v.slice(0, MAX_LABEL_CHARS) : undefined;
  };
  const description = label("description");
  const argumentHint = label("argument-hint");
  const ignored = Object.keys(IGNORED_FIELDS).filter((key) => fields.get(key));
  return {
    ...(description ? { description } : {}),
    ...(argumentHint ? { argumentHint } : {}),
    ...(ignored.length > 0 ? { ignored } : {}),
    body: normalised.slice(front[0].length).trim(),
  };
}

/** The body with the arguments put in (see above). */
export function expandTemplate(body: string, args: string): string {
  return expandCommandBody(body, args).text;
}

/**
 * The body with the arguments put in, its `` !`cmd` `` commands taken out (the arguments put in
 * them too, as Claude Code does) and a shellMark left where each one's output goes.
 */
export function expandCommandBody(body: string, args: string): { text: string; shell: string[] } {
  const raw = args.replaceAll("\u0000", "").trim();
  const words = shellSplit(raw);
  let used = false;
  const fill = (text: string) =>
    text.replace(PLACEHOLDER, (_match, digit: string | undefined) => {
      used = true;
      return digit ? (words[Number(digit) - 1] ?? "") : raw;
    });
  const shell: string[] = [];
  const marked = body.replaceAll("\u0000", "").replace(SHELL_LINE, (_match, command: string) => {
    shell.push(fill(command).trim());
    return shellMark(shell.length - 1);
  });
  const text = fill(marked);
  return { text: used || raw === "" ? text : `${text}\n\n${raw}`, shell };
}

/** An expanded body with each command's output (by index) in its mark's place. */
export function fillShellOutputs(text: string, outputs: readonly string[]): string {
  return text.replace(SHELL_MARK, (_match, i: string) => outputs[Number(i)] ?? "");
}
