import type { Tool } from "@modelcontextprotocol/sdk/types.js";

/** The separator of `server__tool`, as Claude Code and the adapters write it. */
export const MCP_TOOL_SEPARATOR = "__";

/** The metadata every MCP tool carries, read by the approval decision. */
export interface McpToolMetadata {
  mcpServer: string;
  mcpTool: string;
  annotations?: Tool["annotations"];
}

/** What providers accept as a function name (OpenAI: letters, digits, _ and -, at most 64). */
const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

export interface OfferedName {
  /** The name the model would see (`server__tool`). */
  name: string;
  server: string;
  tool: string;
}

/**
 * Which MCP tools may be offered under their prefixed names. Two tools whose names meet after
 * prefixing (`a_` + `__` + `c` and `a` + `__` + `_c` are both `a___c`; a server listing one tool
 * twice) would make a call ambiguous, and approval rules name tools by that name: every tool of
 * such a name is refused, with a sentence saying which and what to do. A name providers cannot
 * take (other characters, too long) is refused too.
 */
export function refuseAmbiguousNames<T extends OfferedName>(tools: readonly T[]): { refused: Set<T>; notes: string[] } {
  const byName = new Map<string, T[]>();
  for (const t of tools) byName.set(t.name, [...(byName.get(t.name) ?? []), t]);
  const refused = new Set<T>();
  const notes: string[] = [];
  const describe = (t: OfferedName) => `tool "${t.tool}" of MCP server "${t.server}"`;
  for (const [name, same] of byName) {
    if (!TOOL_NAME.test(name)) {
      for (const t of same) refused.add(t);
      notes.push(
        `The ${describe(same[0]!)} is not offered: its name "${name}" is not 1 to 64 letters, digits, _ or -, which model providers require.`,
      );
    } else if (same.length > 1) {
      for (const t of same) refused.add(t);
      notes.push(
        `MCP tools collide as "${name}": ${same.map(describe).join(" and ")}. Neither is offered; rename one of the servers in its config file so no server name ends with "_" next to a tool name starting with "_".`,
      );
    }
  }
  return { refused, notes };
}
