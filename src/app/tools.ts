import { loadProjectRules } from "../security/rules.js";
import { loadShellParser } from "../security/shell-parse.js";
import { planSandbox, type SandboxPlan } from "../security/sandbox.js";
import { childEnvironment, secretValues } from "../secret-env.js";
import type { Settings } from "../settings.js";
import { commandEnvironment } from "../workspace/processes.js";
import { createTools, type OutputChunk, type Toolset } from "../tools/index.js";
import type { McpHub } from "../mcp/hub.js";
import { addGatedSecrets } from "../workspace/output-gate.js";
import type { CommandLaunch } from "./hooks.js";
import { warmUpWhileModelThinks } from "./warm-up.js";

/** Variables the project's rules file passes through to commands (none when it cannot be read). */
function rulesPassEnv(workspace: string, trustStore: string): string[] {
  try {
    return loadProjectRules(workspace, { trustStore }).passEnv;
  } catch {
    return [];
  }
}

/** What every tool result is cleaned of: the API key and the secret values found in the workspace. */
export function redactedValues(settings: Pick<Settings, "apiKey" | "workspace">): string[] {
  return [
    ...(settings.apiKey ? [settings.apiKey] : []),
    ...secretValues(settings.workspace, commandEnvironment().base),
  ];
}

/**
 * The toolset as every front end (CLI, Studio) builds it: commands get the user's environment
 * without secrets, run in bubblewrap when available, and never show the API key.
 * MCP servers' tools (`mcp`, see app/mcp.ts) come after the built-in ones, redacted the same way.
 * Throws SandboxUnavailableError for `--sandbox on` without a usable bubblewrap.
 */
export function createAgentTools(
  settings: Settings,
  onOutput?: (chunk: OutputChunk) => void,
  mcp?: McpHub,
): { tools: Toolset; sandbox: SandboxPlan; launch: CommandLaunch } {
  // The command classifier's parser (WASM) loads while the model thinks about the first step,
  // once the request is out, so that its ~10 ms of loading do not hold it up (a command the
  // model asks for before then loads it on demand).
  warmUpWhileModelThinks(loadShellParser);
  const passEnv = [...settings.passEnv, ...rulesPassEnv(settings.workspace, settings.trustStore)];
  const sandbox = planSandbox(settings.sandbox, {
    workspace: settings.workspace,
    network: settings.network,
    ...settings.host,
    keepSshAgent: passEnv.includes("SSH_AUTH_SOCK"),
  });
  const redact = redactedValues(settings);
  // Whatever is printed or traced is cleaned of the same values (workspace/output-gate.ts).
  addGatedSecrets(redact);
  const env = childEnvironment(passEnv, commandEnvironment().base);
  const tools = createTools({
    workspace: settings.workspace,
    env,
    spawnSpec: sandbox.sandbox?.spawnSpec,
    redact,
    onOutput,
    editTool: settings.editTool,
  });
  // MCP tools come guarded (errors, secrets, size) by mcp/hub.ts with the same values.
  tools.push(...(mcp?.tools ?? []));
  // Hooks (app/hooks.ts) start as commands do: the same environment, sandbox and redaction.
  return { tools, sandbox, launch: { env, spawnSpec: sandbox.sandbox?.spawnSpec, redact } };
}
