import { EMPTY_MCP_RULES, type McpApprovalRules } from "../security/mcp-config.js";
import { MCP_TOOL_SEPARATOR, type McpToolMetadata } from "./names.js";
import type { ToolWithMetadata as ToolLike } from "./paths.js";

/**
 * Whether an MCP tool call asks before it runs. An MCP tool can do anything its server can
 * (write files, call APIs), so it asks in `suggest` and `auto-edit` like a command, unless an
 * allow rule names its server (`fs`) or the tool itself (`fs__read_text_file`), this thread
 * answered "always" for it, or the user opted in to trusting read-only hints
 * (`mcp.trustReadOnlyHints`) and the server marks the tool `readOnlyHint: true`. A hint is the
 * server's own claim, so it counts only where the user said so.
 */

type McpCall = { name: string };

/** The MCP metadata of a call's tool, when the toolset has it. */
export function mcpToolOf(name: string, tools: readonly ToolLike[] | undefined): McpToolMetadata | undefined {
  const meta = tools?.find((t) => t.name === name)?.metadata as Partial<McpToolMetadata> | undefined;
  return meta?.mcpServer ? (meta as McpToolMetadata) : undefined;
}

/**
 * Calls to MCP tools: by their metadata when the toolset is known (a made-up `a__b` is then an
 * unknown tool, answered as such, not a question to the user), else by the `server__tool` name
 * (built-in tool names never hold `__`).
 */
export function isMcpCall(call: McpCall, tools?: readonly ToolLike[]): boolean {
  if (tools) return mcpToolOf(call.name, tools) !== undefined;
  return call.name.includes(MCP_TOOL_SEPARATOR);
}

/**
 * Why an MCP call must be approved, or null when it may run. `server` is the tool's server
 * (from its metadata, else the name's first part) and `readOnly` its `readOnlyHint`.
 */
export function mcpNeedsApproval(
  call: McpCall,
  mode: string,
  always: readonly string[],
  rules: McpApprovalRules = EMPTY_MCP_RULES,
  tool?: Pick<McpToolMetadata, "mcpServer" | "annotations">,
): string | null {
  const server = tool?.mcpServer ?? call.name.slice(0, call.name.indexOf(MCP_TOOL_SEPARATOR));
  if (mode === "full-auto") return null;
  if (rules.allow.includes(server) || rules.allow.includes(call.name)) return null;
  if (always.includes(call.name)) return null;
  const hints = rules.trustReadOnlyHints;
  const trustsHints = hints === true || (Array.isArray(hints) && hints.includes(server));
  if (trustsHints && tool?.annotations?.readOnlyHint === true) return null;
  return `calls a tool of MCP server "${server}", which can do anything that server can (approval mode ${mode})`;
}
