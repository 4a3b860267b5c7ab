import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import { readRegularTextSync } from "../regular-file.js";
import path from "node:path";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { contentHash } from "../security/trust.js";
import type { McpServerSpec } from "../security/mcp-config.js";

/**
 * Servers' tool lists, remembered between runs so a run can offer a server's tools without
 * starting it: the model must see every tool's name and schema on its first turn, and a server
 * started only to list its tools (npx may even download it) would slow every run that never
 * calls it. The key is the workspace, the server's name and its exact configuration, so a
 * changed command, URL or environment lists again. Kept outside every repository (the user's
 * cache folder): a repository cannot plant tool descriptions. A server started on first use
 * refreshes its entry, so a changed tool list shows from the next run on.
 */

/** What the model is offered for one tool (the MCP `Tool` as `tools/list` returns it). */
export type CachedTool = Pick<Tool, "name" | "description" | "inputSchema" | "annotations">;

interface CacheFile {
  servers: Record<string, { tools: CachedTool[]; listedAt: string }>;
}

export function cacheKey(workspace: string, server: McpServerSpec): string {
  return contentHash(JSON.stringify([path.resolve(workspace), server.name, server.config]));
}

function readCache(file: string): CacheFile {
  try {
    const parsed = JSON.parse(readRegularTextSync(file, { follow: true })) as Partial<CacheFile>;
    return parsed && typeof parsed.servers === "object" && parsed.servers
      ? { servers: parsed.servers }
      : { servers: {} };
  } catch {
    return { servers: {} };
  }
}

export function cachedTools(file: string, key: string): CachedTool[] | undefined {
  const entry = readCache(file).servers[key];
  return Array.isArray(entry?.tools) ? entry.tools : undefined;
}

/** Stores a server's tool list (atomically; a cache that cannot be written only costs a start next run). */
export function storeTools(file: string, key: string, tools: readonly Tool[]): void {
  const current = readCache(file);
  current.servers[key] = {
    tools: tools.map(({ name, description, inputSchema, annotations }) => ({
      name,
      description,
      inputSchema,
      ...(annotations ? { annotations } : {}),
    })),
    listedAt: new Date().toISOString(),
  };
  try {
    mkdirSync(path.dirname(file), { recursive: true });
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, `${JSON.stringify(current)}\n`, { mode: 0o600 });
    renameSync(tmp, file);
  } catch {
    // Read-only home or full disk: the next run lists the tools again.
  }
}
