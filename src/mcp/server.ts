import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import path from "node:path";
import { buildEnv } from "../workspace/processes.js";
import { isStdioServer, type McpServerSpec } from "../security/mcp-config.js";
import { MCP_ERROR, mcpLibraries, type McpLibraries } from "./libraries.js";
import { createGroupStdioTransport, type GroupStdioTransport } from "./stdio-transport.js";

/**
 * One configured MCP server and its connection, started on first use: `connect()` spawns it
 * (stdio) or opens the session (streamable HTTP) and initializes within the start timeout;
 * `callTool` connects if needed and bounds the call by the call timeout. Whatever goes wrong
 * (no such program, a crash, a hang) becomes an McpServerError whose text says what happened
 * and is meant for both the trace and the model; nothing here throws anything else.
 */

export type ServerState = "not started" | "starting" | "running" | "failed" | "exited" | "stopped";

export interface ServerOptions {
  startTimeoutMs: number;
  callTimeoutMs: number;
  workspace: string;
  /** Base environment of stdio servers (the user's, secrets removed); the config's `env` is added. */
  env: NodeJS.ProcessEnv;
  /** A line for the trace (start failures, crashes). */
  note: (text: string) => void;
  /** Called each time the server has started (the hub refreshes its cached tool list). */
  onStarted?: () => void;
  /** A start that takes longer than `waitNoticeMs` is said once through `onWait` (spinner text, a `notice`). */
  waitNoticeMs?: number;
  onWait?: (text: string) => void;
}

/** A progress notification of a running call (MCP `notifications/progress`). */
export interface McpProgress {
  progress: number;
  total?: number;
  message?: string;
}

export class McpServerError extends Error {
  override name = "McpServerError";
  constructor(
    message: string,
    /** The server's JSON-RPC error code, when it answered with one. */
    readonly code?: number,
  ) {
    super(message);
  }
}

/**
 * A call whose server keeps reporting progress may run this many call timeouts in all: each
 * notification restarts the call timeout, and this bounds a server that reports forever.
 */
export const PROGRESS_TOTAL_FACTOR = 10;

export interface McpServerHandle {
  readonly spec: McpServerSpec;
  state(): ServerState;
  /** Why it failed or exited, when it did. */
  error(): string | undefined;
  /** Starts the server if it is not running; resolves with its client. */
  connect(): Promise<Client>;
  /** Every tool the running server lists (all pages). */
  listTools(): Promise<Tool[]>;
  /** `onProgress` sends a progressToken; each notification the server sends is passed on. */
  callTool(
    name: string,
    args: Record<string, unknown>,
    signal?: AbortSignal,
    onProgress?: (progress: McpProgress) => void,
  ): Promise<unknown>;
  close(): Promise<void>;
}

const CLIENT_INFO = { name: "mini-cursor", version: "1" };

function seconds(ms: number): string {
  return `${Math.round(ms / 100) / 10} s`;
}

/** The command line or URL of a server. */
export function serverTarget(spec: McpServerSpec): string {
  return isStdioServer(spec.config) ? [spec.config.command, ...(spec.config.args ?? [])].join(" ") : spec.config.url;
}

function lastLine(text: string): string {
  const lines = text
    .trim()
    .split("\n")
    .filter((l) => l.trim());
  return lines.slice(-3).join(" | ").slice(-500);
}

export function createServer(spec: McpServerSpec, options: ServerOptions): McpServerHandle {
  let state: ServerState = "not started";
  let failure: string | undefined;
  let client: Client | undefined;
  let transport: Transport | undefined;
  let connecting: Promise<Client> | undefined;
  let closing = false;

  function stdioExit(t: Transport | undefined): string {
    const stdio = t as GroupStdioTransport | undefined;
    const exit = stdio?.exit?.();
    const how = exit
      ? exit.signal
        ? `was killed by ${exit.signal}`
        : `exited with code ${exit.code}`
      : "closed the connection";
    const stderr = stdio?.stderrTail ? lastLine(stdio.stderrTail()) : "";
    return `${how}${stderr ? ` (stderr: ${stderr})` : ""}`;
  }

  function makeTransport(lib: McpLibraries): Transport {
    const config = spec.config;
    if (isStdioServer(config)) {
      const server = {
        command: config.command,
        args: config.args ?? [],
        env: buildEnv({ ...options.env, ...config.env }),
        cwd: config.cwd ? path.resolve(options.workspace, config.cwd) : options.workspace,
      };
      return createGroupStdioTransport(server, lib);
    }
    return new lib.StreamableHTTPClientTransport(new URL(config.url), {
      requestInit: { headers: config.headers ?? {} },
    });
  }

  /** The connection ended without us closing it: a crash (stdio) or a server that went away. */
  function onClosed(t: Transport): void {
    if (closing || transport !== t || state !== "running") return;
    state = "exited";
    failure = `MCP server "${spec.name}" ${stdioExit(t)}`;
    client = undefined;
    transport = undefined;
    options.note(`${failure}; its tools fail until it is started again (on their next call).`);
    // Whatever the server left in its process group goes with it.
    void t.close().catch(() => undefined);
  }

  async function start(): Promise<Client> {
    state = "starting";
    const lib = await mcpLibraries();
    const t = makeTransport(lib);
    const c = new lib.Client(CLIENT_INFO, { capabilities: {} });
    c.onclose = () => onClosed(t);
    transport = t;
    let timer: NodeJS.Timeout | undefined;
    const onWait = options.onWait;
    const notice =
      onWait &&
      setTimeout(
        () =>
          onWait(
            `Waiting for MCP server "${spec.name}" (${serverTarget(spec)}) to start (at most ${seconds(options.startTimeoutMs)}, MINI_CURSOR_MCP_START_TIMEOUT_MS)…`,
          ),
        options.waitNoticeMs ?? 0,
      );
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new McpServerError(
              `did not finish starting within ${seconds(options.startTimeoutMs)} (MINI_CURSOR_MCP_START_TIMEOUT_MS)`,
            ),
          ),
        options.startTimeoutMs,
      );
    });
    try {
      await Promise.race([c.connect(t, { timeout: options.startTimeoutMs }), timedOut]);
    } catch (err) {
      const exited = (t as GroupStdioTransport).exit?.();
      const spawnFailed = ["ENOENT", "EACCES"].includes((err as NodeJS.ErrnoException)?.code ?? "");
      const why = err instanceof McpServerError ? err.message : exited && !spawnFailed ? stdioExit(t) : describe(err);
      state = "failed";
      failure = `MCP server "${spec.name}" (${serverTarget(spec)}) could not start: ${why}`;
      transport = undefined;
      await t.close().catch(() => undefined);
      options.note(`${failure}.`);
      throw new McpServerError(failure);
    } finally {
      clearTimeout(timer);
      clearTimeout(notice);
    }
    client = c;
    state = "running";
    failure = undefined;
    options.onStarted?.();
    return c;
  }

  const handle: McpServerHandle = {
    spec,
    state: () => state,
    error: () => failure,
    connect() {
      if (closing)
        return Promise.reject(
          new McpServerError(`MCP server "${spec.name}" was stopped: mini-cursor is shutting down.`),
        );
      if (client && state === "running") return Promise.resolve(client);
      connecting ??= start().finally(() => {
        connecting = undefined;
      });
      return connecting;
    },
    async listTools() {
      const c = await handle.connect();
      const tools: Tool[] = [];
      let cursor: string | undefined;
      do {
        const page = await c.listTools(cursor ? { cursor } : {}, { timeout: options.startTimeoutMs });
        tools.push(...page.tools);
        cursor = page.nextCursor;
      } while (cursor);
      return tools;
    },
    async callTool(name, args, signal, onProgress) {
      const c = await handle.connect();
      try {
        return await c.callTool({ name, arguments: args }, undefined, {
          timeout: options.callTimeoutMs,
          ...(signal ? { signal } : {}),
          // A server still reporting progress is working, not hung: each notification restarts the timeout.
          ...(onProgress
            ? {
                onprogress: onProgress,
                resetTimeoutOnProgress: true,
                maxTotalTimeout: options.callTimeoutMs * PROGRESS_TOTAL_FACTOR,
              }
            : {}),
        });
      } catch (err) {
        if (signal?.aborted) throw err;
        const code = (err as { code?: unknown })?.code;
        if (code === MCP_ERROR.requestTimeout) {
          const total = /maximum total timeout/i.test((err as Error)?.message ?? "");
          throw new McpServerError(
            total
              ? `MCP server "${spec.name}" was still reporting progress on ${name} after ${seconds(options.callTimeoutMs * PROGRESS_TOTAL_FACTOR)} (${PROGRESS_TOTAL_FACTOR} × MINI_CURSOR_MCP_TIMEOUT_MS, the most a call may take); the call was cancelled.`
              : `MCP server "${spec.name}" did not answer ${name} within ${seconds(options.callTimeoutMs)} (MINI_CURSOR_MCP_TIMEOUT_MS); the call was cancelled.`,
          );
        }
        if (code === MCP_ERROR.invalidParams) {
          // The server's own words (naming the field, as a rule); the hub adds what the input schema expects.
          const said = ((err as Error)?.message ?? "").replace(/^(?:MCP error -?\d+: )+/, "").trim();
          throw new McpServerError(
            `MCP server "${spec.name}" refused the arguments of ${name} (invalid params, ${MCP_ERROR.invalidParams}): ${said || "(no message)"}${/[.!?]$/.test(said) ? "" : "."}`,
            MCP_ERROR.invalidParams,
          );
        }
        if (state === "exited" || code === MCP_ERROR.connectionClosed) {
          throw new McpServerError(
            `${failure ?? `MCP server "${spec.name}" closed the connection`} while running ${name}.`,
          );
        }
        throw new McpServerError(`MCP server "${spec.name}" failed to run ${name}: ${describe(err)}`);
      }
    },
    async close() {
      closing = true;
      const t = transport;
      await connecting?.catch(() => undefined);
      const current = transport ?? t;
      if (state === "running" || state === "starting") state = "stopped";
      client = undefined;
      transport = undefined;
      await current?.close().catch(() => undefined);
    },
  };
  return handle;
}

function describe(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  if (e?.code === "ENOENT" && e.path) return `no program named ${e.path} was found (check "command" and PATH)`;
  if (e?.code === "EACCES" && e.path) return `${e.path} cannot be run (permission denied)`;
  const cause = (e as { cause?: { code?: string } })?.cause?.code;
  if (cause === "ECONNREFUSED") return "nothing is listening at that URL (connection refused)";
  return e?.message ?? String(err);
}
