import { existsSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { isRefusedFile, MAX_CONFIG_BYTES, readRegularTextSync, reportSkippedFile } from "../regular-file.js";
import path from "node:path";
import { z } from "zod";
import { savedAnswersFile, STATE_DIR_NAME } from "../memory/state-dir.js";
import {
  mcpRulesSchema,
  mcpServersSchema,
  mergeMcpRules,
  type McpApprovalRules,
  type McpServerSpec,
} from "./mcp-config.js";
import { startSlot, type ConfigFileSlice } from "../contracts/start-slices.js";
import { contentHash, isTrusted } from "./trust.js";
import { parseConfig } from "./files.js";
import { hookScripts, scriptsFingerprint } from "./hook-scripts.js";
import type { Word } from "./shell-parse.js";

/**
 * Project rules for commands: allow / ask / deny lists in `.mini-cursor/config.json` (personal,
 * git-ignored; "always" answers are saved here) and `mini-cursor.config.json` (meant to be
 * committed). Both are read and merged. A rule is a command's first words — `npm test`,
 * `git push`, `rm` — and matches a parsed simple command that starts with them, never the raw
 * string, so `npm test && rm -rf ~` does not match `npm test`.
 *
 *   { "commands": { "allow": ["npm test", "git status"], "ask": ["git push"],
 *                   "deny": [{ "command": "rm", "reason": "use git rm" }] },
 *     "passEnv": ["NPM_TOKEN"] }
 *
 * They also configure MCP servers (`mcpServers`, `mcp`: see security/mcp-config.ts); starting a server
 * and allowing its tools loosen like allow rules, so they too wait for the user's trust.
 */

/** Where rules are read from, relative to the workspace root: the repository's content, trusted only after the trust question. */
export const RULES_FILES = [`${STATE_DIR_NAME}/config.json`, "mini-cursor.config.json"] as const;
/**
 * Claude Code's project settings: only their `hooks` are read (its other keys, `permissions`,
 * `env`, …, are Claude Code's own and ignored), under the same content-hash trust as a rules file.
 */
export const CLAUDE_SETTINGS_FILES = [".claude/settings.json", ".claude/settings.local.json"] as const;
/**
 * "Always for this project" answers are saved outside the workspace, in the workspace's state
 * folder (memory/state-dir.ts): the person chose them, so they apply without a trust question,
 * and nothing in the repository can add to them. Shown as this name.
 */
export const LOCAL_RULES_FILE = "this workspace's saved answers";
/** How rules from the saved answers name their file. */
const SAVED_ANSWERS = "saved answers";

export type RuleKind = "allow" | "ask" | "deny";

export interface CommandRule {
  kind: RuleKind;
  /** The rule as written, e.g. `npm test`. */
  text: string;
  words: string[];
  reason?: string;
  /** The file it came from, relative to the workspace. */
  file: string;
}

export interface ProjectRules {
  allow: CommandRule[];
  ask: CommandRule[];
  deny: CommandRule[];
  /** Environment variables passed to commands even though their names look secret. */
  passEnv: string[];
  /** Rules files that exist, relative to the workspace. */
  files: string[];
  /** MCP servers of trusted files (the first file naming a server wins). */
  mcpServers?: McpServerSpec[];
  /** MCP approval rules of trusted files. */
  mcp?: McpApprovalRules;
  /** Loosening rules left out because the user has not trusted that file's content. */
  untrusted?: UntrustedRules[];
  /** The `hooks` blocks of trusted files (security/hooks-config.ts parses them), with their file. */
  hooks?: { block: unknown; file: string }[];
  /** The workspace files the hooks of these files run (trusted or not): a write to one asks in every mode. */
  hookScripts?: string[];
}

export interface UntrustedRules {
  /** Relative to the workspace. */
  file: string;
  /** Absolute path, and the SHA-256 of the content that would be trusted. */
  path: string;
  hash: string;
  allow: string[];
  passEnv: string[];
  /** MCP servers it would start (only when it names some). */
  mcpServers?: string[];
  /** Events it would run hooks on (only when it has a `hooks` block). */
  hooks?: string[];
  /** The workspace files those hooks run, whose content is trusted with the file. */
  scripts?: string[];
}

/** The rules file is not valid JSON or not in the expected shape. */
export class RulesError extends Error {
  override name = "RulesError";
}

const ruleSchema = z.union([
  z.string().trim().min(1),
  z.object({ command: z.string().trim().min(1), reason: z.string().optional() }).strict(),
]);

const fileSchema = z
  .object({
    commands: z
      .object({
        allow: z.array(ruleSchema).optional(),
        ask: z.array(ruleSchema).optional(),
        deny: z.array(ruleSchema).optional(),
      })
      .strict()
      .optional(),
    passEnv: z.array(z.string().min(1)).optional(),
    mcpServers: mcpServersSchema.optional(),
    mcp: mcpRulesSchema.optional(),
    /** Hooks run programs on every matching call, so like MCP servers they wait for trust. */
    hooks: z.record(z.string(), z.unknown()).optional(),
  })
  .passthrough();

type RulesFile = z.infer<typeof fileSchema>;

/** Claude Code's settings file: its `hooks` only, whatever else it holds. */
const claudeSettingsSchema = z.looseObject({ hooks: z.record(z.string(), z.unknown()).optional() });

export const EMPTY_RULES: ProjectRules = { allow: [], ask: [], deny: [], passEnv: [], files: [] };

const cache = new Map<string, { stamp: string; parsed: RulesFile; hash: string }>();

function readRulesFileWithHash(
  absolute: string,
  relative: string,
  schema: z.ZodType<RulesFile> = fileSchema,
): { parsed: RulesFile; hash: string } | undefined {
  let stamp: string;
  try {
    const st = statSync(absolute);
    stamp = `${st.mtimeMs}:${st.size}`;
  } catch {
    return undefined;
  }
  const hit = cache.get(absolute);
  if (hit && hit.stamp === stamp) return hit;
  let text: string;
  try {
    // Without blocking: a FIFO or device in its place is skipped and said, never waited on.
    text = readRegularTextSync(absolute, { follow: true, maxBytes: MAX_CONFIG_BYTES });
  } catch (err) {
    if (isRefusedFile(err)) reportSkippedFile(absolute, err);
    return undefined;
  }
  const entry = { stamp, parsed: parseConfig(text, relative, schema, RulesError), hash: contentHash(text) };
  cache.set(absolute, entry);
  return entry;
}

/** A rule as written in a rules file, without the spaces around it. */
const ruleText = (entry: z.infer<typeof ruleSchema>) => (typeof entry === "string" ? entry : entry.command).trim();

/** Splits a rule into words (whitespace separated). */
export function ruleWords(text: string): string[] {
  return text.trim().split(/\s+/).filter(Boolean);
}

/** The person's config files (trust store, user config), handed over once at start (app/configure.ts). */
const files = startSlot<ConfigFileSlice>("the person's config files (trust store, MCP config)");
export const useConfigFiles = files.set;
/** Where trust answers and the person's MCP config are, as handed over at start. */
export const configFiles = files.get;

/**
 * Reads and merges the rules files of a workspace; throws RulesError when one is invalid. A
 * file's allow rules and passEnv apply only when the trust store (default: the one handed over at start, `configFiles()`)
 * holds its current content — a cloned repository may commit either file; mini-cursor trusts
 * what it saves itself — otherwise they are left out and described in `untrusted`.
 */
export function loadProjectRules(workspace: string, options: { trustStore?: string } = {}): ProjectRules {
  const rules: ProjectRules = { allow: [], ask: [], deny: [], passEnv: [], files: [] };
  const trusts = (absolute: string, hash: string) =>
    isTrusted(options.trustStore ?? configFiles().trustStore, absolute, hash);
  addSavedAnswers(rules, workspace);
  for (const relative of RULES_FILES) {
    const absolute = path.join(workspace, relative);
    const read = readRulesFileWithHash(absolute, relative);
    if (!read) continue;
    const { parsed } = read;
    rules.files.push(relative);
    const { hash, scripts } = withHookScripts(rules, workspace, read.hash, parsed.hooks);
    const servers = Object.keys(parsed.mcpServers ?? {});
    const events = Object.keys(parsed.hooks ?? {});
    const allow = (parsed.commands?.allow ?? []).map(ruleText);
    const loosening =
      allow.length > 0 ||
      (parsed.passEnv ?? []).length > 0 ||
      servers.length > 0 ||
      events.length > 0 ||
      (parsed.mcp?.allow ?? []).length > 0 ||
      (parsed.mcp?.trustReadOnlyHints ?? false) !== false;
    const trusted = !loosening || trusts(absolute, hash);
    if (!trusted) {
      const entry = { file: relative, path: absolute, hash, allow, passEnv: parsed.passEnv ?? [] };
      leaveOut(rules, { ...entry, ...(servers.length > 0 ? { mcpServers: servers } : {}) }, events, scripts);
    }
    for (const kind of ["allow", "ask", "deny"] as const) {
      if (kind === "allow" && !trusted) continue;
      for (const entry of parsed.commands?.[kind] ?? []) {
        const text = ruleText(entry);
        const reason = typeof entry === "string" ? undefined : entry.reason;
        rules[kind].push({ kind, text, words: ruleWords(text), reason, file: relative });
      }
    }
    if (trusted) {
      rules.passEnv.push(...(parsed.passEnv ?? []));
      for (const [name, config] of Object.entries(parsed.mcpServers ?? {})) {
        rules.mcpServers ??= [];
        if (!rules.mcpServers.some((s) => s.name === name)) rules.mcpServers.push({ name, config, file: relative });
      }
      if (parsed.mcp) mergeMcpRules((rules.mcp ??= { allow: [], trustReadOnlyHints: false }), parsed.mcp);
      if (events.length > 0) (rules.hooks ??= []).push({ block: parsed.hooks, file: relative });
    }
  }
  for (const relative of CLAUDE_SETTINGS_FILES) {
    const absolute = path.join(workspace, relative);
    const read = readRulesFileWithHash(absolute, relative, claudeSettingsSchema);
    const events = Object.keys(read?.parsed.hooks ?? {});
    if (!read || events.length === 0) continue;
    rules.files.push(relative);
    const { hash, scripts } = withHookScripts(rules, workspace, read.hash, read.parsed.hooks);
    if (trusts(absolute, hash)) (rules.hooks ??= []).push({ block: read.parsed.hooks, file: relative });
    else leaveOut(rules, { file: relative, path: absolute, hash, allow: [], passEnv: [] }, events, scripts);
  }
  return rules;
}

/** A file whose loosening rules wait for the person's trust: what it would add. */
function leaveOut(rules: ProjectRules, entry: UntrustedRules, events: string[], scripts: string[]): void {
  (rules.untrusted ??= []).push({
    ...entry,
    ...(events.length > 0 ? { hooks: events } : {}),
    ...(scripts.length > 0 ? { scripts } : {}),
  });
}

/**
 * The scripts a file's hooks run are trusted with it: its trust hash covers their content, so a
 * changed script is a changed file, and they are protected paths from then on.
 */
function withHookScripts(
  rules: ProjectRules,
  workspace: string,
  fileHash: string,
  hooks: Record<string, unknown> | undefined,
): { hash: string; scripts: string[] } {
  const scripts = hooks ? hookScripts(workspace, hooks) : [];
  if (scripts.length === 0) return { hash: fileHash, scripts };
  rules.hookScripts = [...new Set([...(rules.hookScripts ?? []), ...scripts])];
  return { hash: contentHash(`${fileHash}\0${scriptsFingerprint(workspace, scripts)}`), scripts };
}

/** The person's saved "always for this project" answers: allow rules only, trusted by where they live. */
function addSavedAnswers(rules: ProjectRules, workspace: string): void {
  let file: string;
  try {
    file = savedAnswersFile(workspace);
  } catch {
    return; // no state folder: nothing was saved
  }
  const read = readRulesFileWithHash(file, SAVED_ANSWERS);
  for (const entry of read?.parsed.commands?.allow ?? []) {
    const text = ruleText(entry);
    rules.allow.push({ kind: "allow", text, words: ruleWords(text), file: SAVED_ANSWERS });
  }
}

/** The absolute paths of the rules files (whether or not they exist). */
export function rulesFilePaths(workspace: string): string[] {
  return RULES_FILES.map((f) => path.join(workspace, f));
}

function globToRegExp(glob: string): RegExp {
  const body = glob
    .replace(/[.+^${}()|[\]\\]/g, "\\$&")
    .replace(/\*/g, ".*")
    .replace(/\?/g, ".");
  return new RegExp(`^${body}$`, "s");
}

function wordMatches(pattern: string, word: Word, first: boolean): boolean {
  if (pattern === "*") return true;
  if (word.dynamic) return false;
  const candidates = first && !pattern.includes("/") ? [word.value, path.basename(word.value)] : [word.value];
  if (/[*?]/.test(pattern)) {
    const re = globToRegExp(pattern);
    return candidates.some((c) => re.test(c));
  }
  return candidates.includes(pattern);
}

/** Whether a rule's words are a prefix of the command's words (`*` matches any one word). */
export function ruleMatches(rule: Pick<CommandRule, "words">, words: readonly Word[]): boolean {
  if (rule.words.length === 0 || rule.words.length > words.length) return false;
  return rule.words.every((pattern, i) => wordMatches(pattern, words[i]!, i === 0));
}

export function findRule(rules: readonly CommandRule[], words: readonly Word[]): CommandRule | undefined {
  return rules.find((rule) => ruleMatches(rule, words));
}

/** Programs whose first argument names what they do (`npm test`, `git status`). */
const SUBCOMMAND_PROGRAMS = new Set(
  (
    "npm pnpm yarn bun npx git cargo go docker kubectl make pip pip3 poetry uv dotnet mvn gradle deno rustup brew " +
    "apt apt-get gh terraform"
  ).split(" "),
);

/** Subcommands whose next word names what runs (`npm run build`, `cargo run --bin x`). */
const NAMED_RUNNERS = new Set(["run", "run-script", "exec", "x"]);

/**
 * The allow rule an "always" answer covers for one command: its exact prefix — the program,
 * its subcommand for tools such as npm and git (`npm test`, `git log`), the script name after
 * `npm run`, and the options shown before the first other argument (`git log -5`). It never
 * widens to other options, so "always" for `git status` does not cover `git -c … log`.
 */
export function ruleForCommand(argv: readonly string[]): string | undefined {
  const program = argv[0] ? path.basename(argv[0]) : "";
  if (!program || !plainWord(program)) return undefined;
  const words = [program];
  let i = 1;
  if (SUBCOMMAND_PROGRAMS.has(program) && argv[1] && /^[A-Za-z0-9][\w:.-]*$/.test(argv[1])) {
    words.push(argv[1]);
    i = 2;
    if (NAMED_RUNNERS.has(argv[1]) && argv[2] && plainWord(argv[2]) && !argv[2].startsWith("-")) words.push(argv[i++]!);
  }
  for (; i < argv.length && argv[i]!.startsWith("-") && argv[i] !== "--" && plainWord(argv[i]!); i++)
    words.push(argv[i]!);
  return words.join(" ");
}

/** A word a rule can hold as written: no spaces, quotes, or the `*`/`?` that rules read as patterns. */
const plainWord = (w: string) => w.length > 0 && !/[\s*?'"\\$`]/.test(w);

/**
 * Adds allow rules to the workspace's saved answers in its state folder (created if needed;
 * other content kept). Returns the rules that were new.
 */
export function addAllowRules(workspace: string, rules: readonly string[]): string[] {
  const file = savedAnswersFile(workspace);
  const before = existsSync(file) ? readRulesFileWithHash(file, SAVED_ANSWERS) : undefined;
  const current: RulesFile = before?.parsed ?? {};
  const allow = [...(current.commands?.allow ?? [])];
  const existing = new Set(allow.map((r) => (typeof r === "string" ? r : r.command)));
  const added = rules.filter((r, i) => !existing.has(r) && rules.indexOf(r) === i);
  if (added.length === 0) return [];
  const next = { ...current, commands: { ...current.commands, allow: [...allow, ...added] } };
  const tmp = `${file}.${process.pid}.tmp`;
  const text = `${JSON.stringify(next, null, 2)}\n`;
  // "wx" after removing a leftover: never writes through a symlink planted under that name.
  rmSync(tmp, { force: true });
  writeFileSync(tmp, text, { flag: "wx" });
  renameSync(tmp, file);
  return added;
}
