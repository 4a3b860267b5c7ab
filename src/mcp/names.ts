import type { Tool } from "@modelcontextprotocol/sdk/types.js";

/** The separator of `server__tool`, as Claude Code and the adapters write it. */
export const MCP_TOOL_SEPARATOR = "__";

/** The metadata every MCP tool carries, read by the approval decision. */
export interface McpToolMetadata {
  mcpServer: string;
  mcpTool: string;
  annotations?: Tool["annotations"];
}
