import { declarationOf } from "../contracts/tools.js";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";

/**
 * The workspace paths an MCP tool's call touches, so that calls on the same path in one turn run
 * in the model's order (guard/order.ts) and each holds the per-path lock while it runs
 * (tools/path-lock.ts), as the built-in file tools do. An MCP server declares no paths, so they
 * are read from the tool's input schema: a top-level argument whose name PATH_ARGUMENT matches and a string (or an array of strings) as its type holds paths. Relative paths are taken
 * from the workspace root.
 */

/**
 * Argument names that hold a path in the tools of other agents and of the reference MCP servers:
 * one of these names, or a name that ends in path, file, dir, directory or folder (`file_path`,
 * `targetPath`, `output_dir`). Broad on purpose: an argument taken for a path only orders calls
 * that did not need it, while a path argument missed lets a call on the same file run beside
 * another (a `target` next to a `path` raced an edit_file of the target).
 */
export const PATH_ARGUMENT =
  /^(paths?|files?|filenames?|source|sources|destination|target|targets|src|dest|dst|from|to|cwd|root|uri)$|(path|file|filename|dir|directory|folder)s?$/i;

interface SchemaProperty {
  type?: unknown;
  items?: { type?: unknown };
}

const isString = (p: SchemaProperty | undefined) => p?.type === "string";

/** The arguments of a tool that hold paths, from its input schema (empty: none). */
export function pathArgumentsOf(inputSchema: Tool["inputSchema"] | undefined): string[] {
  const properties = (inputSchema?.properties ?? {}) as Record<string, SchemaProperty>;
  return Object.keys(properties).filter((name) => {
    const p = properties[name];
    return PATH_ARGUMENT.test(name) && (isString(p) || (p?.type === "array" && isString(p.items)));
  });
}

export interface ToolWithMetadata {
  name: string;
  metadata?: Record<string, unknown>;
}

/**
 * The paths a call names through its tool's declared path arguments (set where the tool is made:
 * mcp/hub.ts); undefined when the tool has none or the call gives none, so the call may touch
 * anything and takes no path lock.
 */
export function mcpCallPaths(
  call: { name: string; args?: Record<string, unknown> },
  tools: readonly ToolWithMetadata[] | undefined,
): string[] | undefined {
  const names = Object.keys(declarationOf(tools?.find((t) => t.name === call.name)).paths ?? {});
  if (names.length === 0) return undefined;
  const paths = names.flatMap((name) => {
    const value = call.args?.[String(name)];
    if (typeof value === "string") return [value];
    return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
  });
  const named = paths.filter((p) => p.length > 0);
  return named.length > 0 ? named : undefined;
}
