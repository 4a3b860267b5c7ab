import type { DynamicStructuredTool, StructuredToolInterface } from "@langchain/core/tools";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { guardTool } from "../tools/define.js";
import { ToolFailure } from "../tools/errors.js";
import { cachedTools, cacheKey, storeTools } from "./cache.js";
import { isStdioServer, type McpServerSpec } from "../security/mcp-config.js";
import { mcpLibraries } from "./libraries.js";
import { MCP_TOOL_SEPARATOR, type McpToolMetadata } from "./names.js";
import { mcpResultText } from "./result.js";
import { createServer, McpServerError, type McpServerHandle, type ServerOptions, type ServerState } from "./server.js";

/**
 * The MCP servers of one session and the LangChain tools they offer. Tools are built by
 * @langchain/mcp-adapters' `loadMcpTools` (names `server__tool`, the server's description,
 * its JSON schema simplified for LLM providers, its annotations in `metadata`) over a client
 * that starts the server only when a tool is called. Which tools exist comes from the cache
 * (cache.ts) or, for a server not seen before, from starting it now and listing them, all
 * servers in parallel within the start timeout.
 */

export interface McpHubOptions extends ServerOptions {
  /** The tool-list cache file (Settings.mcp.cacheFile). */
  cacheFile: string;
  /** Start every server and list its tools now, whatever the cache holds (--mcp-list). */
  fresh?: boolean;
  /** Values (the API key, secrets from the workspace) blanked in every result, as for built-in tools. */
  redact?: readonly string[];
}

export interface McpServerStatus {
  name: string;
  /** The file that configures it. */
  file: string;
  transport: "stdio" | "http";
  /** The command line or URL. */
  target: string;
  state: ServerState;
  error?: string;
  /** The tools offered to the model (`server__tool`). */
  tools: string[];
  /** Where the tool list came from: the cache (server not started for it), the server itself, or nowhere (it failed). */
  listedFrom: "cache" | "server" | "none";
}

export interface McpHub {
  readonly tools: StructuredToolInterface[];
  status(): McpServerStatus[];
  /** Stops every server (process groups of stdio servers, sessions of HTTP ones). */
  close(): Promise<void>;
}

/** A client with only what `loadMcpTools` and its tools call, starting the server on first use. */
function lazyClient(server: McpServerHandle, tools: readonly Tool[]) {
  return {
    listTools: async () => ({ tools: [...tools] }),
    callTool: (
      params: { name: string; arguments?: Record<string, unknown> },
      _schema?: unknown,
      options?: { signal?: AbortSignal },
    ) => server.callTool(params.name, params.arguments ?? {}, options?.signal),
    readResource: async (params: { uri: string }) => (await server.connect()).readResource(params),
  };
}

/** The adapter wraps errors as "Error calling tool x: Error: <ours>"; the model reads ours. */
function failureText(err: unknown): string {
  const message = (err as Error)?.message ?? String(err);
  return message.replace(/^Error calling tool [^:]*: (?:[A-Za-z]*Error: )?/, "");
}

/** Results become bounded text; failures become ToolFailure (status "error" via guardTool). */
function bounded(
  tool: DynamicStructuredTool,
  server: string,
  mcpTool: string,
  annotations: Tool["annotations"],
): DynamicStructuredTool {
  const call = tool.func.bind(tool);
  tool.responseFormat = "content";
  tool.metadata = { ...tool.metadata, mcpServer: server, mcpTool, annotations } satisfies McpToolMetadata;
  tool.func = (async (...args: Parameters<typeof call>) => {
    let output: unknown;
    try {
      output = await call(...args);
    } catch (err) {
      const signal = (args[2] as { signal?: AbortSignal } | undefined)?.signal;
      if (signal?.aborted) throw err;
      throw new ToolFailure(`Error: ${failureText(err)}`);
    }
    const content = Array.isArray(output) && output.length === 2 ? output[0] : output;
    return mcpResultText(content);
  }) as typeof tool.func;
  return tool;
}

async function toolsOf(
  server: McpServerHandle,
  list: readonly Tool[],
  redact: readonly string[] = [],
): Promise<StructuredToolInterface[]> {
  const client = lazyClient(server, list);
  const { loadMcpTools } = await mcpLibraries();
  const loaded = await loadMcpTools(server.spec.name, client as never, {
    prefixToolNameWithServerName: true,
    throwOnLoadError: false,
  });
  const byPrefixedName = new Map(list.map((t) => [`${server.spec.name}${MCP_TOOL_SEPARATOR}${t.name}`, t]));
  return loaded.map((tool) => {
    const source = byPrefixedName.get(tool.name);
    // Failures become results with status "error" (tools/define.ts), as for every other tool.
    return guardTool(bounded(tool, server.spec.name, source?.name ?? tool.name, source?.annotations), { redact });
  });
}

/** Starts the servers the cache does not know (in parallel, bounded by the start timeout) and builds every tool. */
export async function createMcpHub(specs: readonly McpServerSpec[], options: McpHubOptions): Promise<McpHub> {
  const entries = await Promise.all(
    specs.map(async (spec) => {
      const key = cacheKey(options.workspace, spec);
      // A server started on first use refreshes the cache, so the next run offers what it lists now.
      let refreshed = false;
      const server = createServer(spec, {
        ...options,
        onStarted: () => {
          if (refreshed) return;
          refreshed = true;
          void server.listTools().then(
            (tools) => storeTools(options.cacheFile, key, tools),
            () => undefined,
          );
        },
      });
      let list: readonly Tool[] | undefined = options.fresh
        ? undefined
        : (cachedTools(options.cacheFile, key) as Tool[] | undefined);
      let listedFrom: McpServerStatus["listedFrom"] = "cache";
      if (!list) {
        listedFrom = "server";
        refreshed = true;
        try {
          list = await server.listTools();
          storeTools(options.cacheFile, key, list);
        } catch (err) {
          if (!(err instanceof McpServerError))
            options.note(`MCP server "${spec.name}" could not list its tools: ${(err as Error).message}.`);
          options.note(`The tools of MCP server "${spec.name}" are not offered in this session.`);
          list = [];
          listedFrom = "none";
        }
      }
      const tools = await toolsOf(server, list, options.redact);
      return { server, tools, listedFrom };
    }),
  );
  const tools = entries.flatMap((e) => e.tools);
  return {
    tools,
    status: () =>
      entries.map(({ server, tools: offered, listedFrom }) => ({
        name: server.spec.name,
        file: server.spec.file,
        transport: isStdioServer(server.spec.config) ? "stdio" : "http",
        target: isStdioServer(server.spec.config)
          ? [server.spec.config.command, ...(server.spec.config.args ?? [])].join(" ")
          : server.spec.config.url,
        state: server.state(),
        ...(server.error() ? { error: server.error() } : {}),
        tools: offered.map((t) => t.name),
        listedFrom,
      })),
    async close() {
      await Promise.all(entries.map((e) => e.server.close()));
    },
  };
}
