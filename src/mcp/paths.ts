import type { Tool } from "@modelcontextprotocol/sdk/types.js";

/**
 * The workspace paths an MCP tool's call touches, so that calls on the same path in one turn run
 * in the model's order (agent/tool-schedule.ts) and each holds the per-path lock while it runs
 * (tools/path-lock.ts), as the built-in file tools do. An MCP server declares no paths, so they
 * are read from the tool's input schema: a top-level argument with one of PATH_ARGUMENTS as its
 * name and a string (or an array of strings) as its type holds paths. Relative paths are taken
 * from the workspace root.
 */

/** Argument names that hold a path in the tools of other agents and of the reference MCP servers. */
export const PATH_ARGUMENTS = [
  "path",
  "paths",
  "file",
  "file_path",
  "filePath",
  "filename",
  "source",
  "destination",
] as const;

interface SchemaProperty {
  type?: unknown;
  items?: { type?: unknown };
}

const isString = (p: SchemaProperty | undefined) => p?.type === "string";

/** The arguments of a tool that hold paths, from its input schema (empty: none). */
export function pathArgumentsOf(inputSchema: Tool["inputSchema"] | undefined): string[] {
  const properties = (inputSchema?.properties ?? {}) as Record<string, SchemaProperty>;
  return PATH_ARGUMENTS.filter((name) => {
    const p = properties[name];
    return isString(p) || (p?.type === "array" && isString(p.items));
  });
}

interface ToolWithMetadata {
  name: string;
  metadata?: Record<string, unknown>;
}

/**
 * The paths a call names through its tool's path arguments (metadata.pathArguments, set where
 * the tool is made: mcp/hub.ts); undefined when the tool has none or the call gives none, so the
 * call may touch anything and runs alone.
 */
export function mcpCallPaths(
  call: { name: string; args?: Record<string, unknown> },
  tools: readonly ToolWithMetadata[] | undefined,
): string[] | undefined {
  const names = tools?.find((t) => t.name === call.name)?.metadata?.pathArguments;
  if (!Array.isArray(names)) return undefined;
  const paths = names.flatMap((name) => {
    const value = call.args?.[String(name)];
    if (typeof value === "string") return [value];
    return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
  });
  const named = paths.filter((p) => p.length > 0);
  return named.length > 0 ? named : undefined;
}
