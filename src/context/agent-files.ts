import { lstatSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { contentHash, isTrusted } from "../security/trust.js";
import { BUILT_IN_SUBAGENTS, type SubagentSource, type SubagentType } from "../tools/task.js";

/**
 * Agent types from Markdown files, in Claude Code's `.claude/agents/*.md` shape: front matter
 * with `name`, `description`, `tools` (a comma-separated list or a YAML list; absent: all of the
 * parent's), `disallowedTools` (taken away) and `model` (absent, `inherit` or one of Claude's
 * aliases sonnet/opus/haiku: the parent's), then the instructions as the body.
 * Other keys (Claude Code's `permissionMode`, `color`, anything claiming approvals) are ignored:
 * no agent file sets an approval mode, every sub-agent runs in its parent's.
 *
 * The person's own files are in `<user config folder>/agents/`; a repository's in
 * `.mini-cursor/agents/`. A repository's file is untrusted content: it is used only once the
 * person has trusted its exact content (the trust store, as for the rules file), and even then
 * it can narrow the tools and never loosen an approval.
 */

/** The repository's agent folder, relative to the workspace. */
export const PROJECT_AGENTS_DIR = ".mini-cursor/agents";
/** Files read per folder at most, and the largest one: agent files are short briefs. */
export const MAX_AGENT_FILES = 50;
export const MAX_AGENT_FILE_BYTES = 64 * 1024;
/** Claude Code's tool names, read as ours so its agent files work unchanged. */
const CLAUDE_TOOL_NAMES: Readonly<Record<string, string>> = {
  Read: "read_file",
  Write: "write_file",
  Edit: "edit_file",
  MultiEdit: "edit_file",
  Bash: "execute_command",
  Glob: "find_files",
  Grep: "search_files",
  LS: "list_directory",
  TodoWrite: "write_todos",
};
const NAME_PATTERN = /^[a-z0-9][a-z0-9_-]{0,63}$/;
/** Claude Code's model aliases: no model of ours goes by them, so they mean the parent's model. */
const CLAUDE_MODEL_ALIASES = new Set(["inherit", "sonnet", "opus", "haiku"]);

/** An agent file that was not used, and why (said once on the trace). */
export interface AgentFileProblem {
  file: string;
  problem: string;
}

/** A project agent file waiting for the person's trust. */
export interface UntrustedAgentFile {
  file: string;
  hash: string;
  name: string;
}

export interface AgentCatalog {
  types: SubagentType[];
  problems: AgentFileProblem[];
  untrusted: UntrustedAgentFile[];
}

/** Front matter's `key: value` lines (a value may be a `[a, b]` or `- item` list); the body after it. */
export function parseAgentFile(text: string): { fields: Record<string, string | string[]>; body: string } | undefined {
  const match = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?([\s\S]*)$/.exec(text.replace(/^\uFEFF/, ""));
  if (!match) return undefined;
  const fields: Record<string, string | string[]> = {};
  let listKey: string | undefined;
  for (const raw of match[1]!.split(/\r?\n/)) {
    const item = /^\s+-\s+(.*)$/.exec(raw);
    if (item && listKey) {
      (fields[listKey] as string[]).push(unquote(item[1]!));
      continue;
    }
    const pair = /^([A-Za-z][\w-]*):\s*(.*)$/.exec(raw);
    if (!pair) continue;
    const [, key, value] = pair;
    const trimmed = value!.trim();
    if (trimmed === "") {
      fields[key!] = [];
      listKey = key;
    } else if (trimmed.startsWith("[") && trimmed.endsWith("]")) {
      fields[key!] = trimmed.slice(1, -1).split(",").map(unquote).filter(Boolean);
      listKey = undefined;
    } else {
      fields[key!] = unquote(trimmed);
      listKey = undefined;
    }
  }
  return { fields, body: match[2]!.trim() };
}

function unquote(text: string): string {
  const t = text.trim();
  return /^(["']).*\1$/.test(t) ? t.slice(1, -1) : t;
}

function toolList(value: string | string[] | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  const names = (Array.isArray(value) ? value : value.split(",")).map((n) => n.trim()).filter(Boolean);
  return names.map((n) => CLAUDE_TOOL_NAMES[n] ?? n);
}

/** One agent file as a type, or why it cannot be one. */
export function agentTypeFromFile(
  text: string,
  file: string,
  source: SubagentSource,
): { type: SubagentType } | { problem: string } {
  const parsed = parseAgentFile(text);
  if (!parsed) return { problem: "no front matter (a --- block with name and description)" };
  const { fields, body } = parsed;
  const name = typeof fields.name === "string" ? fields.name : path.basename(file, ".md");
  if (!NAME_PATTERN.test(name))
    return { problem: `name ${JSON.stringify(name)} is not lowercase letters, digits, - or _` };
  if (typeof fields.description !== "string" || !fields.description)
    return { problem: "no description in the front matter" };
  const model = typeof fields.model === "string" && !CLAUDE_MODEL_ALIASES.has(fields.model) ? fields.model : undefined;
  const tools = toolList(fields.tools);
  // Claude Code's `disallowedTools` narrows too.
  const disallowed = toolList(fields.disallowedTools);
  return {
    type: {
      name,
      description: fields.description,
      ...(tools ? { tools } : {}),
      ...(disallowed?.length ? { disallowedTools: disallowed } : {}),
      ...(model ? { model } : {}),
      instructions: body,
      source,
      file,
    },
  };
}

function agentFiles(dir: string): string[] {
  try {
    if (!lstatSync(dir).isDirectory()) return [];
    return readdirSync(dir)
      .filter((f) => f.endsWith(".md"))
      .sort()
      .slice(0, MAX_AGENT_FILES)
      .map((f) => path.join(dir, f));
  } catch {
    return [];
  }
}

/** A regular file's text (never a symlink out of the folder), or undefined with the problem recorded. */
function readAgentFile(file: string, problems: AgentFileProblem[]): string | undefined {
  try {
    const stat = lstatSync(file);
    if (!stat.isFile()) return void problems.push({ file, problem: "not a regular file" });
    if (stat.size > MAX_AGENT_FILE_BYTES)
      return void problems.push({ file, problem: `larger than ${MAX_AGENT_FILE_BYTES} bytes` });
    return readFileSync(file, "utf8");
  } catch (err) {
    return void problems.push({ file, problem: (err as Error).message });
  }
}

export interface AgentCatalogOptions {
  workspace: string;
  /** The person's agent folder (`<user config folder>/agents`; settings' agentsDir). */
  agentsDir: string;
  trustStore: string;
}

/**
 * The agent types of a session: the built-in ones, then the person's, then the repository's
 * trusted ones. A later file never replaces an earlier type of the same name (a repository
 * cannot redefine `general` or a person's agent).
 */
export function loadAgentCatalog(options: AgentCatalogOptions): AgentCatalog {
  const types: SubagentType[] = [...BUILT_IN_SUBAGENTS];
  const problems: AgentFileProblem[] = [];
  const untrusted: UntrustedAgentFile[] = [];
  const add = (type: SubagentType, file: string) => {
    if (types.some((t) => t.name === type.name))
      problems.push({ file, problem: `an agent named ${type.name} already exists` });
    else types.push(type);
  };
  for (const file of agentFiles(options.agentsDir)) {
    const text = readAgentFile(file, problems);
    if (text === undefined) continue;
    const read = agentTypeFromFile(text, file, "user");
    if ("problem" in read) problems.push({ file, problem: read.problem });
    else add(read.type, file);
  }
  for (const file of agentFiles(path.join(options.workspace, PROJECT_AGENTS_DIR))) {
    const text = readAgentFile(file, problems);
    if (text === undefined) continue;
    const read = agentTypeFromFile(text, file, "project");
    if ("problem" in read) {
      problems.push({ file, problem: read.problem });
      continue;
    }
    const hash = contentHash(text);
    if (!isTrusted(options.trustStore, file, hash)) untrusted.push({ file, hash, name: read.type.name });
    else add(read.type, file);
  }
  return { types, problems, untrusted };
}
