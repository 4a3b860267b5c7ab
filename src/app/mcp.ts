import { isStdioServer, McpConfigError, readUserMcpConfig, type McpServerSpec } from "../security/mcp-config.js";
import { isSecretName } from "../security/env.js";
import { addGatedSecrets } from "../workspace/output-gate.js";
import { jsonLine } from "../ui/output.js";
import type { McpHub } from "../mcp/hub.js";
import { formatMcpStatus, type UntrustedServer } from "../mcp/status.js";
import { loadProjectRules, RulesError } from "../security/rules.js";
import { childEnvironment } from "../secret-env.js";
import type { Settings } from "../settings.js";
import { commandEnvironment } from "../workspace/processes.js";
import { redactedValues } from "./tools.js";

/**
 * The MCP servers a session may use: the workspace's trusted rules files first, then the
 * user's own config file (a project server of the same name wins). Untrusted files' servers
 * are left out (config-trust.ts asks about them before a run).
 */
export function configuredMcpServers(settings: Pick<Settings, "workspace" | "trustStore" | "mcp">): McpServerSpec[] {
  let project: McpServerSpec[] = [];
  try {
    project = loadProjectRules(settings.workspace, { trustStore: settings.trustStore }).mcpServers ?? [];
  } catch (err) {
    if (!(err instanceof RulesError)) throw err; // the CLI reports an invalid rules file before it gets here
  }
  const user = readUserMcpConfig(settings.mcp.userConfig).servers;
  return [...project, ...user.filter((s) => !project.some((p) => p.name === s.name))];
}

/**
 * Builds the session's MCP hub, or nothing when no server is configured (then the MCP
 * libraries are not even loaded: they cost start-up time a run without servers should not
 * pay). A server whose tools are cached is not started here; see mcp/cache.ts.
 * Throws McpConfigError when the user's config file is invalid.
 */
export async function prepareMcp(
  settings: Settings,
  note: (text: string) => void,
  fresh = false,
  /** Said when a server takes longer than MINI_CURSOR_WAIT_NOTICE_MS to start (default: `note`). */
  wait: (text: string) => void = note,
): Promise<McpHub | undefined> {
  const servers = configuredMcpServers(settings);
  if (servers.length === 0) return undefined;
  // A server's secret variables and headers are masked wherever its command line, stderr or errors are shown.
  addGatedSecrets([...redactedValues(settings), ...serverSecrets(servers)]);
  const { createMcpHub } = await import("../mcp/hub.js");
  return createMcpHub(servers, {
    workspace: settings.workspace,
    env: childEnvironment(settings.passEnv, commandEnvironment().base),
    cacheFile: settings.mcp.cacheFile,
    startTimeoutMs: settings.mcp.startTimeoutMs,
    callTimeoutMs: settings.mcp.callTimeoutMs,
    note,
    waitNoticeMs: settings.waitNoticeMs,
    onWait: wait,
    fresh,
    redact: redactedValues(settings),
  });
}

/** Values of secret-named variables and of headers in servers' configs (`env`, `headers`). */
function serverSecrets(servers: readonly McpServerSpec[]): string[] {
  return servers.flatMap(({ config }) =>
    isStdioServer(config)
      ? Object.entries(config.env ?? {})
          .filter(([name]) => isSecretName(name))
          .map(([, value]) => value)
      : Object.values(config.headers ?? {}).map((value) => value.replace(/^(?:Bearer|Basic|Token)\s+/i, "")),
  );
}

/** Servers named in rules files the user has not trusted (they are not started). */
export function untrustedMcpServers(settings: Pick<Settings, "workspace" | "trustStore">): UntrustedServer[] {
  try {
    const untrusted = loadProjectRules(settings.workspace, { trustStore: settings.trustStore }).untrusted ?? [];
    return untrusted.flatMap((u) => (u.mcpServers ?? []).map((name) => ({ name, file: u.file })));
  } catch {
    return [];
  }
}

/**
 * `--mcp-list`: starts every configured server, lists its tools (refreshing the cache), stops
 * it again, and returns the report (text, or JSON Lines: one server per line).
 */
export async function mcpListReport(settings: Settings, json: boolean, note: (text: string) => void): Promise<string> {
  const hub = await prepareMcp(settings, note, true);
  try {
    const servers = hub?.status() ?? [];
    const untrusted = untrustedMcpServers(settings);
    if (json) {
      const rows = [
        ...servers,
        ...untrusted.map((u) => ({ name: u.name, file: u.file, state: "not trusted", tools: [] })),
      ];
      return rows.map(jsonLine).join("");
    }
    return `${formatMcpStatus(servers, untrusted)}\n`;
  } finally {
    await hub?.close();
  }
}

export { McpConfigError };
