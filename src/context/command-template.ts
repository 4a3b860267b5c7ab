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
 */

export interface CommandTemplate {
  /** One line for /help. */
  description?: string;
  /** How /help shows the arguments, e.g. `<file> [focus]`. */
  argumentHint?: string;
  /** The prompt, front matter removed. */
  body: string;
}

/** Characters of a description or hint kept for /help. */
const MAX_LABEL_CHARS = 200;

const PLACEHOLDER = /\$ARGUMENTS\b|\{\{args\}\}|\$([1-9])/g;

function unquote(value: string): string {
  const v = value.trim();
  if (v.length >= 2 && (v[0] === '"' || v[0] === "'") && v.endsWith(v[0])) return v.slice(1, -1);
  return v;
}

/** Splits off the front matter (`---` lines at the very top) and reads its `key: value` lines. */
export function parseCommandTemplate(text: string): CommandTemplate {
  const normalised = text.replace(/^\uFEFF/, "").replace(/\r\n/g, "\n");
  const front = /^---\n([\s\S]*?)\n---[ \t]*(?:\n|$)/.exec(normalised);
  if (!front) return { body: normalised.trim() };
  const fields = new Map<string, string>();
  for (const line of front[1]!.split("\n")) {
    const m = /^([A-Za-z][\w-]*)\s*:\s*(.*)$/.exec(line);
    if (m) fields.set(m[1]!.toLowerCase(), unquote(m[2]!));
  }
  const label = (key: string) => {
    const v = fields.get(key)?.replace(/\s+/g, " ").trim();
    return v ? v.slice(0, MAX_LABEL_CHARS) : undefined;
  };
  const description = label("description");
  const argumentHint = label("argument-hint");
  return {
    ...(description ? { description } : {}),
    ...(argumentHint ? { argumentHint } : {}),
    body: normalised.slice(front[0].length).trim(),
  };
}

/** The body with the arguments put in (see above). */
export function expandTemplate(body: string, args: string): string {
  const raw = args.trim();
  const words = shellSplit(raw);
  let used = false;
  const text = body.replace(PLACEHOLDER, (_match, digit: string | undefined) => {
    used = true;
    return digit ? (words[Number(digit) - 1] ?? "") : raw;
  });
  return used || raw === "" ? text : `${text}\n\n${raw}`;
}
