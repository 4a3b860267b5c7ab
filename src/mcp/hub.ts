import {
  ToolInputParsingException,
  type DynamicStructuredTool,
  type StructuredToolInterface,
} from "@langchain/core/tools";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { Validator } from "@langchain/core/utils/json_schema";
import type { ChecksArguments } from "../tools/arguments.js";
import { guardTool } from "../guard/guard.js";
import { resultsGuard } from "../guard/results.js";
import { declared } from "../contracts/tools.js";
import { withPathLocks } from "../tools/path-lock.js";
import { openWorkspace, type Workspace } from "../workspace/paths.js";
import { mcpCallPaths, pathArgumentsOf } from "./paths.js";
import { ToolFailure } from "../guard/failure.js";
import { cachedTools, cacheKey, storeTools } from "./cache.js";
import { isStdioServer, type McpServerSpec } from "../security/mcp-config.js";
import { MCP_ERROR, mcpLibraries } from "./libraries.js";
import { MCP_TOOL_SEPARATOR, refuseAmbiguousNames, type McpToolMetadata } from "./names.js";
import { mcpContentText, mcpResultText, schemaHint, type McpCallResult } from "./result.js";
import {
  createServer,
  McpServerError,
  serverTarget,
  type McpProgress,
  type McpServerHandle,
  type ServerOptions,
  type ServerState,
} from "./server.js";

/** Progress lines one call may put on the trace; the rest are dropped (a chatty server would flood it). */
export const MAX_PROGRESS_LINES = 20;

const INVALID_ARGUMENTS = /invalid (arguments|params|input)|input validation/i;

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

/** The adapter wraps errors as "Error calling tool x: Error: <ours>"; the model reads ours. */
function failureText(err: unknown): string {
  const message = (err as Error)?.message ?? String(err);
  return message.replace(/^Error calling tool [^:]*: (?:[A-Za-z]*Error: )?/, "");
}

/** One trace line per progress notification of a call (at most MAX_PROGRESS_LINES). */
function progressLines(server: string, tool: string, note: (text: string) => void): (p: McpProgress) => void {
  let lines = 0;
  return (p) => {
    if (++lines > MAX_PROGRESS_LINES) return;
    const amount =
      p.total !== undefined && p.total > 0
        ? `${Math.round((p.progress / p.total) * 100)}% (${p.progress}/${p.total})`
        : `${p.progress}`;
    note(`MCP ${server}__${tool}: progress ${amount}${p.message ? `: ${p.message}` : ""}`);
  };
}

const argsOf = (input: unknown): unknown =>
  input && typeof input === "object" && (input as { type?: string }).type === "tool_call"
    ? (input as { args?: unknown }).args
    : input;

const propertiesOf = (schema: unknown): Record<string, unknown> =>
  ((schema as { properties?: Record<string, unknown> } | undefined)?.properties ?? {}) as Record<string, unknown>;

/**
 * Argument names the tool's schema does not list, when it lists its properties and allows no
 * others by its own words (`additionalProperties` true or a schema, `patternProperties`).
 */
function unlistedArguments(schema: unknown, args: unknown): string[] {
  const s = schema as { additionalProperties?: unknown; patternProperties?: unknown; properties?: unknown } | undefined;
  if (
    !s?.properties ||
    s.patternProperties ||
    (s.additionalProperties !== undefined && s.additionalProperties !== false)
  )
    return [];
  const listed = propertiesOf(s);
  return args && typeof args === "object" ? Object.keys(args).filter((k) => !(k in listed)) : [];
}

/**
 * Calls go to the server directly (not through the adapter's conversion, which moves embedded
 * resources out of the model's sight): results become bounded text from the server's own
 * blocks, progress notifications become trace lines, failures become ToolFailure (status
 * "error" via guardTool), and arguments that do not fit say field by field what was expected.
 */
function bounded(
  tool: DynamicStructuredTool,
  server: McpServerHandle,
  source: Tool | undefined,
  note: (text: string) => void,
  workspace: () => Promise<Workspace>,
): DynamicStructuredTool {
  const mcpTool = source?.name ?? tool.name;
  const serverName = server.spec.name;
  tool.responseFormat = "content";
  tool.metadata = {
    ...tool.metadata,
    mcpServer: serverName,
    mcpTool,
    annotations: source?.annotations,
  } satisfies McpToolMetadata;
  // It declares no kind (an MCP tool can do anything its server can), only its path arguments.
  const pathArguments = pathArgumentsOf(source?.inputSchema);
  if (pathArguments.length > 0)
    declared(tool, { paths: Object.fromEntries(pathArguments.map((name) => [name, "path" as const])) });
  const hint = (args: unknown) => schemaHint(source?.inputSchema, args);
  const mismatch = (args: unknown) =>
    `Error: the arguments do not match the input schema of ${serverName}${MCP_TOOL_SEPARATOR}${mcpTool}.${hint(args)}`;
  tool.func = (async (args: Record<string, unknown>, _runManager?: unknown, config?: { signal?: AbortSignal }) => {
    const signal = config?.signal;
    let result: McpCallResult;
    try {
      const call = () => server.callTool(mcpTool, args, signal, progressLines(serverName, mcpTool, note));
      // Calls naming the same path wait for each other, as the built-in file tools do (mcp/paths.ts).
      const paths = mcpCallPaths({ name: tool.name, args }, [tool]);
      result = (await (paths ? withPathLocks(await workspace(), paths, call) : call())) as McpCallResult;
    } catch (err) {
      if (signal?.aborted) throw err;
      const code = (err as { code?: unknown })?.code;
      const message = failureText(err);
      const invalid = code === MCP_ERROR.invalidParams || INVALID_ARGUMENTS.test(message);
      throw new ToolFailure(`Error: ${message}${invalid ? hint(args) : ""}`);
    }
    if (result?.isError) {
      const text = mcpContentText(result) || "(no message)";
      throw new ToolFailure(
        `Error: MCP tool '${mcpTool}' on server '${serverName}' returned an error: ${text}${INVALID_ARGUMENTS.test(text) ? hint(args) : ""}`,
      );
    }
    return mcpResultText(result ?? {});
  }) as typeof tool.func;
  // Checked before any approval question too (agent/turn.ts): the check LangChain makes at
  // invoke, and names the schema does not list, which servers drop without a word.
  const validator = new Validator(tool.schema as never);
  (tool as ChecksArguments).checkArguments = (args) => {
    const stray = unlistedArguments(tool.schema, args);
    const lines =
      stray.length > 0 ? [`Error: ${tool.name} does not take ${stray.map((k) => `"${k}"`).join(", ")}.`] : [];
    if (!validator.validate(args ?? {}).valid) lines.push(mismatch(args));
    else if (lines.length > 0) lines.push(`Its arguments are: ${Object.keys(propertiesOf(tool.schema)).join(", ")}.`);
    return lines.length > 0
      ? `${lines.join("\n")}\nThe call was not run: call it again with valid arguments.`
      : undefined;
  };
  // Arguments LangChain's own check of the schema refuses never reach func: say the same there.
  const invoke = tool.invoke.bind(tool);
  tool.invoke = (async (input: unknown, config?: unknown) => {
    try {
      return await invoke(input as never, config as never);
    } catch (err) {
      if (!(err instanceof ToolInputParsingException)) throw err;
      throw new ToolFailure(mismatch(argsOf(input)));
    }
  }) as typeof tool.invoke;
  return tool;
}

async function toolsOf(
  server: McpServerHandle,
  list: readonly Tool[],
  note: (text: string) => void,
  workspace: () => Promise<Workspace>,
  redact: readonly string[] = [],
): Promise<StructuredToolInterface[]> {
  const { loadMcpTools } = await mcpLibraries();
  // A client with only what `loadMcpTools` calls: the list. Its tools' calls never reach the
  // client, since bounded() gives each tool a func that calls the server (started on first use).
  const client = { listTools: async () => ({ tools: [...list] }) };
  const loaded = await loadMcpTools(server.spec.name, client as never, {
    prefixToolNameWithServerName: true,
    throwOnLoadError: false,
  });
  const byPrefixedName = new Map(list.map((t) => [`${server.spec.name}${MCP_TOOL_SEPARATOR}${t.name}`, t]));
  return loaded.map((tool) => {
    const source = byPrefixedName.get(tool.name);
    // Failures become results with status "error" (guard/results.ts), as for every other tool.
    return guardTool(bounded(tool, server, source, note, workspace), [resultsGuard(redact)]);
  });
}

/** Starts the servers the cache does not know (in parallel, bounded by the start timeout) and builds every tool. */
export async function createMcpHub(specs: readonly McpServerSpec[], options: McpHubOptions): Promise<McpHub> {
  let opened: Promise<Workspace> | undefined;
  const workspace = () => (opened ??= openWorkspace(options.workspace));
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
      const tools = await toolsOf(server, list, options.note, workspace, options.redact);
      return { server, tools, listedFrom };
    }),
  );
  // Names that meet after prefixing, or that providers refuse, are not offered (names.ts).
  const offered = entries.flatMap((e) =>
    e.tools.map((built) => ({
      built,
      name: built.name,
      server: e.server.spec.name,
      tool: (built as { metadata?: McpToolMetadata }).metadata?.mcpTool ?? built.name,
    })),
  );
  const { refused, notes } = refuseAmbiguousNames(offered);
  for (const note of notes) options.note(note);
  const refusedTools = new Set([...refused].map((o) => o.built));
  for (const entry of entries) entry.tools = entry.tools.filter((t) => !refusedTools.has(t));
  const tools = entries.flatMap((e) => e.tools);
  return {
    tools,
    status: () =>
      entries.map(({ server, tools: offered, listedFrom }) => ({
        name: server.spec.name,
        file: server.spec.file,
        transport: isStdioServer(server.spec.config) ? "stdio" : "http",
        target: serverTarget(server.spec),
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
