import type { McpServerStatus } from "./hub.js";
import { gateText } from "../workspace/output-gate.js";

/** A configured server left out because its file is not trusted (security/rules.ts). */
export interface UntrustedServer {
  name: string;
  file: string;
}

/** `/mcp` and `--mcp-list`: each server, its state, where it is configured and its tools. */
export function formatMcpStatus(
  servers: readonly McpServerStatus[],
  untrusted: readonly UntrustedServer[] = [],
): string {
  if (servers.length === 0 && untrusted.length === 0) {
    return 'No MCP servers configured. Add "mcpServers" to mini-cursor.config.json or ~/.config/mini-cursor/config.json (see docs/tools-and-mcp.md, "MCP servers").';
  }
  const lines: string[] = [];
  for (const s of servers) {
    lines.push(
      `${s.name}  ${s.transport}  ${s.state === "not started" ? "not started (starts on first use)" : s.state}  ${s.target}  (${s.file})`,
    );
    if (s.error) lines.push(`  ${s.error}`);
    const from = s.listedFrom === "cache" ? " (from the cache of an earlier run)" : "";
    lines.push(s.tools.length > 0 ? `  tools${from}: ${s.tools.join(", ")}` : "  no tools offered");
  }
  for (const u of untrusted)
    lines.push(
      `${u.name}  not trusted: ${u.file} has not been trusted (run mini-cursor on a terminal here to be asked)`,
    );
  // Names, command lines, errors and stderr come from config files and servers: through the output gate.
  return gateText(lines.join("\n"));
}
