import { lstatSync, readdirSync } from "node:fs";
import path from "node:path";
import { FileTooLargeError, NotRegularFileError, readRegularTextSync } from "../regular-file.js";
import { contentHash, isTrusted } from "../security/trust.js";
import { foldBlockScalars, unquote } from "./command-template.js";
import { offeredToolNames } from "../tools/index.js";
import { BUILT_IN_SUBAGENTS, type SubagentSource, type SubagentType } from "../tools/task.js";

/**
 * Agent types from Markdown files, in Claude Code's `.claude/agents/*.md` shape: front matter
 * with `name`, `description`, `tools` (a comma-separated list or a YAML list; absent: all of the
 * parent's), `disallowedTools` (taken away) and `model` (absent, `inherit` or one of Claude's
 * aliases sonnet/opus/haiku: the parent's), then the instructions as the body.
 * Other keys (Claude Code's `permissionMode`, `color`, anything claiming approvals) are ignored:
 * no agent file sets an approval mode, every sub-agent runs in its parent's.
 *
 * The person's own files are in `<user config folder>/agents/` and Claude Code's `~/.claude/agents/`;
 * a repository's in `.mini-cursor/agents/` and `.claude/agents/`. A repository's file is untrusted
 * content: it is used only once the person has trusted its exact content (the trust store, as for
 * the rules file), and even then it can narrow the tools and never loosen an approval.
 *
 * A tool list is honoured or narrowed, never widened: a name with a pattern (`Bash(git status:*)`)
 * cannot be limited that way here, so that tool is left out; a tool mini-cursor lacks (WebFetch)
 * is left out; each is named in a warning at load, and so is a list that leaves the agent no tools.
 */

/** The repository's agent folders, relative to the workspace, in the order read (first wins for a name). */
export const PROJECT_AGENTS_DIR = ".mini-cursor/agents";
export const CLAUDE_AGENTS_DIR = ".claude/agents";
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
  BashOutput: "process_output",
  KillShell: "stop_process",
  KillBash: "stop_process",
};
/** Claude Code's MCP tool names are `mcp__server__tool`; ours are `server__tool`. */
const CLAUDE_MCP_PREFIX = "mcp__";
/** Our built-in tools: another name (not an MCP tool's `server__tool`) is one we do not have. */
const OUR_TOOLS = new Set([...offeredToolNames("edit_file"), ...offeredToolNames("apply_patch")]);
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
  /** What of the file will not be honoured (said with the trust question). */
  warnings: string[];
}

export interface AgentCatalog {
  types: SubagentType[];
  problems: AgentFileProblem[];
  /** Agent files used with less than they ask for (a tool left out), one sentence each. */
  warnings: AgentFileProblem[];
  untrusted: UntrustedAgentFile[];
}

/** Front matter's `key: value` lines (a value may be a `[a, b]` or `- item` list); the body after it. */
export function parseAgentFile(text: string): { fields: Record<string, string | string[]>; body: string } | undefined {
  const match = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?([\s\S]*)$/.exec(text.replace(/^\uFEFF/, ""));
  if (!match) return undefined;
  const fields: Record<string, string | string[]> = {};
  let listKey: string | undefined;
  for (const raw of foldBlockScalars(match[1]!)) {
    const item = /^\s+-\s+(.*)$/.exec(raw);
    if (item && listKey) {
      (fields[listKey] as string[]).push(unquote(item[1]!));
      continue;
    }
    const pair = /^([A-Za-z][\w-]*):\s*(.*)$/.exec(raw);
    if (!pair) continue;
    const [, key, value] = pair;
    const trimmed = value!.trim();
    listKey = trimmed === "" ? key : undefined;
    if (trimmed === "") fields[key!] = [];
    else if (trimmed.startsWith("[") && trimmed.endsWith("]"))
      fields[key!] = trimmed.slice(1, -1).split(",").map(unquote).filter(Boolean);
    else fields[key!] = unquote(trimmed);
  }
  return { fields, body: match[2]!.trim() };
}

/**
 * A front matter tool list as our tool names, and what of it is not honoured. `narrows`: the list
 * gives tools (a left-out name is then left out); otherwise it takes them away (disallowedTools),
 * and a name with a pattern takes the whole tool away, which is the safe side there too.
 */
function toolList(
  value: string | string[] | undefined,
  key: string,
  warnings: string[],
  narrows: boolean,
): string[] | undefined {
  if (value === undefined) return undefined;
  // Split at commas outside parentheses: `Bash(git diff:*, git log:*)` is one entry.
  const entries = (Array.isArray(value) ? value : (value.match(/(?:[^,(]|\([^)]*\))+/g) ?? []))
    .map((n) => n.trim())
    .filter(Boolean);
  const names: string[] = [];
  const patterned: string[] = [];
  const missing: string[] = [];
  for (const entry of entries) {
    const pattern = /^([\w-]+)\s*\((.*)\)$/.exec(entry);
    const bare = pattern ? pattern[1]! : entry;
    const ours = bare.startsWith(CLAUDE_MCP_PREFIX)
      ? bare.slice(CLAUDE_MCP_PREFIX.length)
      : (CLAUDE_TOOL_NAMES[bare] ?? bare);
    if (!OUR_TOOLS.has(ours) && !ours.includes("__")) {
      missing.push(bare);
      continue;
    }
    if (pattern && narrows) {
      patterned.push(entry);
      continue;
    }
    names.push(ours);
  }
  if (patterned.length > 0)
    warnings.push(
      `${key}: ${patterned.join(", ")} cannot be limited to those uses here, so the agent does not get ${[...new Set(patterned.map((p) => p.replace(/\s*\(.*$/, "")))].join(", ")} at all`,
    );
  if (missing.length > 0)
    warnings.push(
      `${key}: ${missing.join(", ")} ${missing.length > 1 ? "are tools" : "is a tool"} mini-cursor does not have; left out`,
    );
  if (narrows && entries.length > 0 && names.length === 0)
    warnings.push("so this agent has no tools at all: it can only answer from its brief");
  return names;
}

/** One agent file as a type (with what of it is not honoured), or why it cannot be one. */
export function agentTypeFromFile(
  text: string,
  file: string,
  source: SubagentSource,
): { type: SubagentType; warnings: string[] } | { problem: string } {
  const parsed = parseAgentFile(text);
  if (!parsed) return { problem: "no front matter (a --- block with name and description)" };
  const { fields, body } = parsed;
  const name = typeof fields.name === "string" ? fields.name : path.basename(file, ".md");
  if (!NAME_PATTERN.test(name))
    return { problem: `name ${JSON.stringify(name)} is not lowercase letters, digits, - or _` };
  if (typeof fields.description !== "string" || !fields.description)
    return { problem: "no description in the front matter" };
  const warnings: string[] = [];
  // Claude's own model ids (claude-sonnet-4-5-20250929) are Claude Code's: sent to another provider they fail.
  const claude = typeof fields.model === "string" && /^claude-/i.test(fields.model);
  if (claude) warnings.push(`model ${fields.model} is Claude Code's: this sub-agent uses the session's model`);
  const model =
    typeof fields.model === "string" && !claude && !CLAUDE_MODEL_ALIASES.has(fields.model) ? fields.model : undefined;
  const tools = toolList(fields.tools, "tools", warnings, true);
  // Claude Code's `disallowedTools` narrows too.
  const disallowed = toolList(fields.disallowedTools, "disallowedTools", warnings, false);
  return {
    warnings,
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

function isSymlink(target: string): boolean {
  try {
    return lstatSync(target).isSymbolicLink();
  } catch {
    return false;
  }
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
    // Opened without following a link or blocking: a FIFO in the folder is refused, never waited on.
    return readRegularTextSync(file, { maxBytes: MAX_AGENT_FILE_BYTES });
  } catch (err) {
    const problem =
      err instanceof NotRegularFileError
        ? "not a regular file"
        : err instanceof FileTooLargeError
          ? `larger than ${MAX_AGENT_FILE_BYTES} bytes`
          : (err as Error).message;
    return void problems.push({ file, problem });
  }
}

export interface AgentCatalogOptions {
  workspace: string;
  /** The person's agent folder (`<user config folder>/agents`; settings' agentsDir). */
  agentsDir: string;
  /** Claude Code's user folder (`~/.claude`), whose `agents/` are the person's too; absent: not read. */
  claudeHome?: string;
  trustStore: string;
}

/**
 * The agent types of a session: the built-in ones, then the person's (ours, then Claude Code's
 * user folder), then the repository's trusted ones (`.mini-cursor/agents`, then `.claude/agents`).
 * A later file never replaces an earlier type of the same name (a repository cannot redefine
 * `general` or a person's agent).
 */
export function loadAgentCatalog(options: AgentCatalogOptions): AgentCatalog {
  const types: SubagentType[] = [...BUILT_IN_SUBAGENTS];
  const problems: AgentFileProblem[] = [];
  const warnings: AgentFileProblem[] = [];
  const untrusted: UntrustedAgentFile[] = [];
  const folders: Array<[string, SubagentSource]> = [
    [options.agentsDir, "user"],
    ...(options.claudeHome ? [[path.join(options.claudeHome, "agents"), "user"] as [string, SubagentSource]] : []),
    [path.join(options.workspace, PROJECT_AGENTS_DIR), "project"],
    [path.join(options.workspace, CLAUDE_AGENTS_DIR), "project"],
  ];
  for (const [dir, source] of folders) {
    // A repository's `.claude` or `.mini-cursor` that is a symlink could lead anywhere: not read.
    const top = path.join(options.workspace, path.relative(options.workspace, dir).split(path.sep)[0]!);
    if (source === "project" && isSymlink(top)) {
      problems.push({ file: dir, problem: `${top} is a symlink, and must be a plain folder` });
      continue;
    }
    for (const file of agentFiles(dir)) {
      const text = readAgentFile(file, problems);
      if (text === undefined) continue;
      const read = agentTypeFromFile(text, file, source);
      if ("problem" in read) {
        problems.push({ file, problem: read.problem });
        continue;
      }
      const hash = contentHash(text);
      const { type, warnings: found } = read;
      if (source === "project" && !isTrusted(options.trustStore, file, hash))
        untrusted.push({ file, hash, name: type.name, warnings: found });
      else if (types.some((t) => t.name === type.name))
        problems.push({ file, problem: `an agent named ${type.name} already exists` });
      else {
        types.push(type);
        if (found.length > 0) warnings.push({ file, problem: found.join("; ") });
      }
    }
  }
  return { types, problems, warnings, untrusted };
}
