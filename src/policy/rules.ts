import { statSync } from "node:fs";
import path from "node:path";
import { savedAnswersFile } from "../memory/state-dir.js";
import { mergeMcpRules, McpConfigError, readUserMcpConfig, type McpApprovalRules } from "../security/mcp-config.js";
import { configFiles, loadProjectRules, RulesError, rulesFilePaths, type ProjectRules } from "../security/rules.js";

/**
 * The rules a decision reads besides the call: the project's rules files (with their trust
 * records and the person's saved answers) and the MCP rules of those files and the person's
 * config. Loaded once per workspace and loaded again only when one of their files changed:
 * judging a call stats them, and reads none.
 */
export interface PolicyRules {
  /** The project's rules, or why its rules file cannot be used (a command then asks). */
  project?: ProjectRules;
  projectError?: string;
  mcp: McpApprovalRules;
}

/** Where the trust records and the person's MCP config are (AgentRuntime.configFiles). */
export interface ConfigFiles {
  trustStore: string;
  mcpUserConfig: string;
}

/** A file's identity and content stamp; "" when it is not there. */
function stamp(file: string): string {
  try {
    const s = statSync(file, { bigint: true });
    return `${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`;
  } catch {
    return "";
  }
}

function load(workspace: string, files: ConfigFiles): PolicyRules {
  const mcp: McpApprovalRules = { allow: [], trustReadOnlyHints: false };
  const rules: PolicyRules = { mcp };
  try {
    rules.project = loadProjectRules(workspace, { trustStore: files?.trustStore });
    mergeMcpRules(mcp, rules.project.mcp);
  } catch (err) {
    if (!(err instanceof RulesError)) throw err;
    rules.projectError = err.message;
  }
  try {
    mergeMcpRules(mcp, readUserMcpConfig(files.mcpUserConfig).rules);
  } catch (err) {
    if (!(err instanceof McpConfigError)) throw err;
  }
  return rules;
}

const loaded = new Map<string, { stamps: string; rules: PolicyRules }>();

/**
 * The workspace's rules as its files now are (loaded again only when a stamp changed). A run
 * names its config files (AgentRuntime.configFiles); without them, settings.ts's defaults.
 */
export function policyRules(workspace: string, given?: ConfigFiles): PolicyRules {
  const files = given ?? configFiles();
  let answers: string[] = [];
  try {
    answers = [savedAnswersFile(workspace)];
  } catch {
    // No state folder: nothing was saved.
  }
  const watched = [...rulesFilePaths(workspace), ...answers, files.trustStore, files.mcpUserConfig];
  // The scripts the files' hooks run are in their trust hash (security/rules.ts): a changed script
  // makes its file untrusted, and its allow rules must go at once, not at the next change of a rules file.
  const scriptStamps = (rules: PolicyRules | undefined) =>
    (rules?.project?.hookScripts ?? []).map((s) => stamp(path.join(workspace, s))).join("|");
  const key = JSON.stringify([workspace, files]);
  const known = loaded.get(key);
  const before = watched.map(stamp).join("|");
  if (known && known.stamps === `${before}#${scriptStamps(known.rules)}`) return known.rules;
  const rules = load(workspace, files);
  // A file changed while it loaded leaves no stamp: the next call loads again.
  const unchanged = watched.map(stamp).join("|") === before;
  loaded.set(key, { stamps: unchanged ? `${before}#${scriptStamps(rules)}` : "", rules });
  return rules;
}
