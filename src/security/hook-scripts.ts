import { createHash } from "node:crypto";
import { lstatSync, readlinkSync, realpathSync } from "node:fs";
import path from "node:path";
import { MAX_CONFIG_BYTES, readRegularFileSync } from "../regular-file.js";
import { kindAt } from "./files.js";

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
const INTERPRETERS = new Set(
  "sh bash zsh dash ksh fish source . node tsx ts-node deno bun python python3 ruby perl php pwsh".split(" "),
);
/** Words an interpreter takes before its script (`deno run x.ts`, `bun run x.ts`). */
const SUBCOMMANDS = new Set(["run"]);
/** Shell options that take the next word (`bash -o pipefail x.sh`). */
const OPTIONS_WITH_VALUE = new Set(["-o", "+o", "-O", "+O"]);
/**
 * Programs that run the rest of the line as a command (`env A=1 bash x.sh`, `timeout 5 ./x.sh`,
 * `npx tsx x.ts`), with the words of theirs to skip first: options, and for timeout its duration.
 */
const WRAPPERS = new Map([
  ...["env", "exec", "command", "nice", "nohup", "time", "setsid", "stdbuf", "npx", "bunx"].map((w) => [w, 0] as const),
  ["timeout", 1],
]);
/** Options of those wrappers that take the next word. */
const WRAPPER_OPTIONS_WITH_VALUE = new Set(["-n", "-u", "-s", "-k"]);
/** Package managers whose `run`/`test`/`exec`…: what runs is in package.json's scripts. */
const PACKAGE_RUNNERS = new Set(["npm", "pnpm", "yarn", "bun"]);

/**
 * The words of one simple command that may name a file it runs: the program, an interpreter's
 * script, past wrappers (`env`, `timeout 5`, `npx`) and into an interpreter's `-c` command;
 * package.json for a package manager's script.
 */
function scriptWords(words: readonly string[]): string[] {
  let i = 0;
  for (;;) {
    while (i < words.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[i]!)) i++; // VAR=value before the program
    const wrapper = WRAPPERS.get(path.basename(words[i] ?? ""));
    if (wrapper === undefined) break;
    for (i++; i < words.length && words[i]!.startsWith("-"); i++) if (WRAPPER_OPTIONS_WITH_VALUE.has(words[i]!)) i++; // `nice -n 5`, `env -u NAME`
    i += wrapper;
  }
  const program = words[i];
  if (!program) return [];
  const name = path.basename(program);
  // bun is both: `bun run lint` runs package.json's script, `bun x.ts` a file.
  const manifest = PACKAGE_RUNNERS.has(name) ? ["package.json"] : [];
  if (!INTERPRETERS.has(name)) return manifest.length > 0 ? manifest : [program];
  for (i++; i < words.length; i++) {
    const word = words[i]!;
    if (word === "-c") return [...manifest, ...scriptWords(words.slice(i + 1))];
    if (OPTIONS_WITH_VALUE.has(word)) i++;
    else if (!word.startsWith("-") && !SUBCOMMANDS.has(word)) return [...manifest, word];
  }
  return manifest;
}

/**
 * The workspace-relative paths (`/`-separated, sorted) of the files a hooks block runs: in each
 * simple command of each hook's command line, the program when it is a workspace file, or the
 * script an interpreter (bash, node, python …) is given, past wrappers and `cd`; a link's target
 * too. A file a hook only reads or checks (`eslint src/a.ts`) is not one: it is the project's
 * content, not the hook's code.
 */
export function hookScripts(workspace: string, block: unknown): string[] {
  const root = path.resolve(workspace);
  const found = new Set<string>();
  const add = (absolute: string) => {
    const rel = path.relative(root, absolute);
    if (!rel || rel.startsWith("..") || path.isAbsolute(rel) || found.size >= MAX_SCRIPTS) return false;
    found.add(rel.split(path.sep).join("/"));
    return true;
  };
  for (const command of commandsOf(block)) {
    // `cd dir && ./x.sh`: later words are relative to the folder the line went to.
    let cwd = root;
    for (const simple of command.replace(PROJECT_DIR, root).split(/[;&|()\n]+/)) {
      const words = simple
        .split(/\s+/)
        .map((w) => w.replace(/["'`]/g, ""))
        .filter(Boolean);
      if (words[0] === "cd" || words[0] === "pushd") {
        cwd = words[1] ? path.resolve(cwd, words[1]) : root;
        continue;
      }
      for (const word of scriptWords(words)) {
        const absolute = path.resolve(cwd, word);
        // Not there: nothing to trust yet (a script made later is judged when the file is loaded again).
        const kind = kindAt(absolute, false);
        if (kind === "file") add(absolute);
        else if (kind === "link") {
          // A link is trusted with what it points to: the link (where it points is in its path's
          // fingerprint) and its target, when that is a workspace file.
          if (!add(absolute)) continue;
          try {
            const target = realpathSync(absolute);
            if (kindAt(target, false) === "file") add(target);
          } catch {
            // A dangling link: the link itself is what was trusted.
          }
        }
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
      const absolute = path.join(workspace, rel);
      try {
        // A link: where it points (its target is listed, and hashed, on its own).
        digest = lstatSync(absolute).isSymbolicLink()
          ? `link:${readlinkSync(absolute)}`
          : createHash("sha256")
              .update(readRegularFileSync(absolute, { maxBytes: MAX_CONFIG_BYTES }))
              .digest("hex");
      } catch {
        // Gone, not a regular file or too big: its absence is what was trusted.
      }
      return `${rel}\0${digest}`;
    })
    .join("\0");
}
