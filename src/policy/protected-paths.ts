import { existsSync, statSync } from "node:fs";
import path from "node:path";
import { STATE_DIR_NAME } from "../memory/state-dir.js";
import { RULES_FILES } from "../security/rules.js";
import { openWorkspace, resolvePath } from "../workspace/paths.js";

/**
 * Paths whose change is code or policy, not content: a write there asks in every approval mode
 * (an "always" answer does not cover it), and the question names the path. They are
 * - any git directory at any depth: `.git/` (or a `.git` file), and any folder that is a git
 *   directory by its content (a bare repository: HEAD and objects/), since git runs the hooks,
 *   filters, fsmonitor and pager its config names, and a nested repository's config is run by
 *   a `git status` in it;
 * - the rules files (security/rules.ts), wherever a nested project keeps them;
 * - mini-cursor's own folder (`.mini-cursor/`), where its state and saved answers live;
 * - other agents' folders (`.claude/`, `.gemini/`), where hooks, commands and agents are read from;
 * - the scripts the project's hooks run (security/hook-scripts.ts): a trusted hook runs what the
 *   file holds, so a write there would be a command run later, unasked.
 * Both the path as written and where it leads through symlinks are judged.
 */

/** Folders other agents read hooks, commands and agents from, which mini-cursor reads too. */
const AGENT_FOLDERS = [".claude", ".gemini"];

const RULES_PARTS = RULES_FILES.map((f) => f.toLowerCase().split("/"));

/** Why changing this workspace-relative path is protected, or undefined. Case-insensitive: some file systems are. */
function relativeReason(rel: string, scripts: readonly string[]): string | undefined {
  const parts = rel.split(/[\\/]+/).filter((p) => p !== "" && p !== ".");
  const lower = parts.map((p) => p.toLowerCase());
  if (lower.includes(".git")) return "git";
  if (scripts.includes(parts.join("/"))) return "script";
  if (lower.some((p) => AGENT_FOLDERS.includes(p))) return "agents";
  if (RULES_PARTS.some((f) => f.length <= lower.length && f.every((p, i) => lower[lower.length - f.length + i] === p)))
    return "rules";
  if (lower.includes(STATE_DIR_NAME)) return "state";
  return undefined;
}

/** A folder git would take for a git directory (HEAD and objects/), as a bare repository is. */
function looksLikeGitDir(dir: string): boolean {
  try {
    return existsSync(path.join(dir, "HEAD")) && statSync(path.join(dir, "objects")).isDirectory();
  } catch {
    return false;
  }
}

/** The first folder from `absolute`'s parent up to `root` (inclusive) that is a git directory by content. */
function gitDirAbove(root: string, absolute: string): string | undefined {
  for (let dir = path.dirname(absolute); ; dir = path.dirname(dir)) {
    if (dir !== root && !dir.startsWith(`${root}${path.sep}`)) return undefined;
    if (looksLikeGitDir(dir)) return dir;
    if (dir === root || dir === path.dirname(dir)) return undefined;
  }
}

/** What each kind of protected path is, around the path as written (`via`). */
const DESCRIPTIONS: Readonly<Record<string, (via: string) => string>> = {
  git: (via) => `changes a git repository's own files${via}, where git hooks and settings run programs`,
  rules: (via) => `changes the project's command rules${via}`,
  script: (via) => `changes a script the project's hooks run${via}, which would run it after this call unasked`,
  agents: (via) => `changes another agent's settings folder${via}, where hooks, commands and agents are read from`,
  state: (via) => `changes mini-cursor's own files${via}, where its state and saved answers live`,
};

function describe(kind: string, file: string, rel?: string): string {
  return DESCRIPTIONS[kind]!(rel !== undefined && rel !== file ? ` (${file} is ${rel})` : ` (${file})`);
}

/**
 * Why a write to `file` (as a tool call names it) must ask in every mode, or undefined;
 * `hookScripts` are the workspace-relative scripts the project's hooks run. Paths
 * that cannot be resolved (outside the workspace, invalid) are judged as written: the tool
 * refuses them anyway.
 */
export async function protectedPathReason(
  workspace: string,
  file: string,
  hookScripts: readonly string[] = [],
): Promise<string | undefined> {
  if (typeof file !== "string" || file === "") return undefined;
  const root = path.resolve(workspace);
  const literal = path.relative(root, path.resolve(root, file));
  const direct = relativeReason(literal, hookScripts);
  if (direct) return describe(direct, file);
  try {
    const ws = await openWorkspace(workspace);
    const absolute = (await resolvePath(ws, file)).absolute;
    const rel = path.relative(ws.root, absolute);
    const linked = relativeReason(rel, hookScripts) ?? (gitDirAbove(ws.root, absolute) ? "git" : undefined);
    return linked ? describe(linked, file, rel) : undefined;
  } catch {
    return undefined;
  }
}
