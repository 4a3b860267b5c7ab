import { createHash } from "node:crypto";
import { lstatSync } from "node:fs";
import path from "node:path";
import { MAX_CONFIG_BYTES, readRegularFileSync } from "../regular-file.js";

/**
 * The workspace files a hooks block runs (`bash .hooks/post.sh`,
 * `"$CLAUDE_PROJECT_DIR"/.claude/hooks/check.sh`).
 * Their content is part of what the person trusts with the block (security/rules.ts hashes them
 * with the file), and a write to one asks in every mode (policy/protected-paths.ts): otherwise a
 * trusted hook would run whatever the model last wrote there, unasked.
 */

/** The variables a hook's command may name the workspace by (set for hooks as Claude Code and Gemini CLI set them). */
const PROJECT_DIR = /\$\{?(?:CLAUDE|GEMINI)_PROJECT_DIR\}?/g;
/** The most scripts taken from one block: a block naming more is trusted on its own content beyond them. */
const MAX_SCRIPTS = 64;

/** Every `command` string anywhere in a hooks block, whatever its format (ours, Claude Code's, Gemini CLI's). */
function commandsOf(block: unknown, out: string[] = []): string[] {
  if (Array.isArray(block)) for (const item of block) commandsOf(item, out);
  else if (block && typeof block === "object")
    for (const [key, value] of Object.entries(block)) {
      if (key === "command" && typeof value === "string") out.push(value);
      else commandsOf(value, out);
    }
  return out;
}

/** Programs that run the file named after their options: the file is the script. */
const INTERPRETERS = new Set([
  "sh",
  "bash",
  "zsh",
  "dash",
  "ksh",
  "fish",
  "source",
  ".",
  "node",
  "tsx",
  "ts-node",
  "deno",
  "bun",
  "python",
  "python3",
  "ruby",
  "perl",
  "php",
  "pwsh",
]);
/** Words an interpreter takes before its script (`deno run x.ts`, `bun run x.ts`). */
const SUBCOMMANDS = new Set(["run"]);

/** The word of one simple command that names the program it runs from a file: the program, or an interpreter's script. */
function scriptWord(words: readonly string[]): string | undefined {
  let i = 0;
  while (i < words.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[i]!)) i++; // VAR=value before the program
  const program = words[i];
  if (!program || !INTERPRETERS.has(path.basename(program))) return program;
  for (i++; i < words.length; i++) {
    const word = words[i]!;
    if (word.startsWith("-") || SUBCOMMANDS.has(word)) continue;
    return word;
  }
  return undefined;
}

/**
 * The workspace-relative paths (`/`-separated, sorted) of the files a hooks block runs: in each
 * simple command of each hook's command line, the program when it is a workspace file, or the
 * script an interpreter (bash, node, python …) is given. A file a hook only reads or checks
 * (`eslint src/a.ts`) is not one: it is the project's content, not the hook's code.
 */
export function hookScripts(workspace: string, block: unknown): string[] {
  const root = path.resolve(workspace);
  const found = new Set<string>();
  for (const command of commandsOf(block)) {
    for (const simple of command.replace(PROJECT_DIR, root).split(/[;&|()\n]+/)) {
      const words = simple
        .split(/\s+/)
        .map((w) => w.replace(/["'`]/g, ""))
        .filter(Boolean);
      const word = scriptWord(words);
      if (!word || found.size >= MAX_SCRIPTS) continue;
      const absolute = path.resolve(root, word);
      const rel = path.relative(root, absolute);
      if (!rel || rel.startsWith("..") || path.isAbsolute(rel)) continue;
      try {
        if (lstatSync(absolute).isFile()) found.add(rel.split(path.sep).join("/"));
      } catch {
        // Not there: nothing to trust yet (a script made later is judged when the file is loaded again).
      }
    }
  }
  return [...found].sort();
}

/** What the scripts hold, for the trust hash: each path with the SHA-256 of its bytes (unreadable: "-"). */
export function scriptsFingerprint(workspace: string, scripts: readonly string[]): string {
  return scripts
    .map((rel) => {
      let digest = "-";
      try {
        digest = createHash("sha256")
          .update(readRegularFileSync(path.join(workspace, rel), { maxBytes: MAX_CONFIG_BYTES }))
          .digest("hex");
      } catch {
        // Gone, not a regular file or too big: its absence is what was trusted.
      }
      return `${rel}\0${digest}`;
    })
    .join("\0");
}
