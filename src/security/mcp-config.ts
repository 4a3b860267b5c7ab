import { z } from "zod";
import { parseConfig, readConfigText } from "./files.js";

/**
 * MCP servers in the rules files, in the shape Claude Code and Cursor use (`mcpServers`:
 * `command` + `args` + `env` for a local server over stdio, or `url` (+ `headers`) for one over
 * streamable HTTP), and the `mcp` block that loosens their approvals:
 *
 *   { "mcpServers": { "fs": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "."] },
 *                     "docs": { "url": "http://127.0.0.1:3000/mcp" } },
 *     "mcp": { "allow": ["docs", "fs__read_text_file"], "trustReadOnlyHints": true } }
 *
 * Project level: the workspace's rules files (security/rules.ts reads them, and their servers
 * and `mcp` block count only once the user trusted the file). User level: `Settings.mcpUserConfig`
 * (`~/.config/mini-cursor/config.json`), the user's own file, always trusted; a project server
 * of the same name wins.
 */

/** Server names become tool name prefixes (`server__tool`), so `__` would make them ambiguous. */
const SERVER_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;

const stdioServerSchema = z
  .object({
    type: z.literal("stdio").optional(),
    command: z.string().trim().min(1),
    args: z.array(z.string()).optional(),
    env: z.record(z.string(), z.string()).optional(),
    cwd: z.string().optional(),
  })
  .strict();

const httpServerSchema = z
  .object({
    type: z.enum(["http", "streamable-http", "streamableHttp"]).optional(),
    url: z.string().url(),
    headers: z.record(z.string(), z.string()).optional(),
  })
  .strict();

export const mcpServerSchema = z.union([stdioServerSchema, httpServerSchema]);

export const mcpServersSchema = z
  .record(z.string(), mcpServerSchema)
  .refine((servers) => Object.keys(servers).every((name) => SERVER_NAME.test(name) && !name.includes("__")), {
    message: "server names are letters, digits, - and _ (no double underscore, which separates server and tool)",
  });

export const mcpRulesSchema = z
  .object({
    /** Servers (`fs`) or single tools (`fs__read_text_file`) that run without asking. */
    allow: z.array(z.string().trim().min(1)).optional(),
    /** Tools a server marks `readOnlyHint: true` run without asking (true: every server; or a list of servers). */
    trustReadOnlyHints: z.union([z.boolean(), z.array(z.string().trim().min(1))]).optional(),
  })
  .strict();

export type McpServerConfig = z.infer<typeof mcpServerSchema>;
export type McpRulesConfig = z.infer<typeof mcpRulesSchema>;

/** One configured server, with where it came from. */
export interface McpServerSpec {
  name: string;
  config: McpServerConfig;
  /** The file it is configured in (relative to the workspace for project files, absolute for the user's). */
  file: string;
}

/** What the approval decision needs about MCP: allow rules and whether read-only hints count. */
export interface McpApprovalRules {
  allow: string[];
  trustReadOnlyHints: boolean | string[];
}

export const EMPTY_MCP_RULES: McpApprovalRules = { allow: [], trustReadOnlyHints: false };

export function isStdioServer(config: McpServerConfig): config is z.infer<typeof stdioServerSchema> {
  return "command" in config;
}

/** Merges `mcp` blocks: allow lists add up; read-only hints count where any trusted file says so. */
export function mergeMcpRules(into: McpApprovalRules, block: McpRulesConfig | undefined): void {
  if (!block) return;
  into.allow.push(...(block.allow ?? []));
  const hints = block.trustReadOnlyHints;
  if (into.trustReadOnlyHints === true || hints === true) into.trustReadOnlyHints = true;
  else if (Array.isArray(hints)) into.trustReadOnlyHints = [...(into.trustReadOnlyHints || []), ...hints];
}

/** The user's own config file: only its MCP parts are read. */
const userFileSchema = z
  .object({ mcpServers: mcpServersSchema.optional(), mcp: mcpRulesSchema.optional() })
  .passthrough();

/** The user's config file is not valid JSON or not in the expected shape. */
export class McpConfigError extends Error {
  override name = "McpConfigError";
}

/** Reads the user-level file (missing: nothing configured); throws McpConfigError when it is invalid. */
export function readUserMcpConfig(file: string): { servers: McpServerSpec[]; rules: McpApprovalRules } {
  const text = readConfigText(file, McpConfigError);
  const rules: McpApprovalRules = { allow: [], trustReadOnlyHints: false };
  if (text === undefined) return { servers: [], rules };
  const parsed = parseConfig(text, file, userFileSchema, McpConfigError);
  mergeMcpRules(rules, parsed.mcp);
  const servers = Object.entries(parsed.mcpServers ?? {}).map(([name, config]) => ({ name, config, file }));
  return { servers, rules };
}
