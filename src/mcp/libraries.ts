import type { loadMcpTools } from "@langchain/mcp-adapters";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { ReadBuffer, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";

/**
 * The MCP libraries, loaded on first need. They would add about 600 KB to the one-file bundle and load in
 * about half a second on a busy 2-core machine: a run without MCP servers should pay for neither,
 * so they stay out of the bundle (scripts/bundle.mjs) and are imported only here.
 */
export interface McpLibraries {
  loadMcpTools: typeof loadMcpTools;
  Client: typeof Client;
  StreamableHTTPClientTransport: typeof StreamableHTTPClientTransport;
  ReadBuffer: typeof ReadBuffer;
  serializeMessage: typeof serializeMessage;
}

let loading: Promise<McpLibraries> | undefined;

export function mcpLibraries(): Promise<McpLibraries> {
  loading ??= load();
  return loading;
}

type Importer = (specifier: string) => Promise<unknown>;

/**
 * scripts/start.mjs runs the bundle from a V8 code cache, where Node 20 loses the import()
 * callback; it lends its own import() under this symbol. Elsewhere (tsx, tests) import() works.
 */
const LAUNCHER_IMPORT = Symbol.for("mini-cursor.import");

function importer(): Importer {
  const lent = (globalThis as Record<symbol, unknown>)[LAUNCHER_IMPORT];
  return typeof lent === "function" ? (lent as Importer) : (specifier) => import(specifier);
}

// One after another: parallel dynamic imports of modules that share dependencies trip Jest's
// ESM loader ("request for 'zod/v4' is not in cache"), and the second ones are mostly cached.
async function load(): Promise<McpLibraries> {
  const load = importer();
  const adapters = (await load("@langchain/mcp-adapters")) as typeof import("@langchain/mcp-adapters");
  const client = (await load(
    "@modelcontextprotocol/sdk/client/index.js",
  )) as typeof import("@modelcontextprotocol/sdk/client/index.js");
  const http = (await load(
    "@modelcontextprotocol/sdk/client/streamableHttp.js",
  )) as typeof import("@modelcontextprotocol/sdk/client/streamableHttp.js");
  const stdio = (await load(
    "@modelcontextprotocol/sdk/shared/stdio.js",
  )) as typeof import("@modelcontextprotocol/sdk/shared/stdio.js");
  return {
    loadMcpTools: adapters.loadMcpTools,
    Client: client.Client,
    StreamableHTTPClientTransport: http.StreamableHTTPClientTransport,
    ReadBuffer: stdio.ReadBuffer,
    serializeMessage: stdio.serializeMessage,
  };
}

/** JSON-RPC error codes the SDK uses (its ErrorCode enum), kept here so matching them loads nothing. */
export const MCP_ERROR = { connectionClosed: -32000, requestTimeout: -32001, invalidParams: -32602 } as const;
