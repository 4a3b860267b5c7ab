import { realpathSync, statSync } from "node:fs";
import path from "node:path";
import os from "node:os";
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { assembleRuntime } from "../app/agent.js";
import { configureParts } from "../app/configure.js";
import { confirmConfigTrust } from "../app/config-trust.js";
import type { AgentRuntime } from "../agent/runtime.js";
import { configuredMcpServers, prepareMcp } from "../app/mcp.js";
import type { McpHub } from "../mcp/hub.js";
import { LangChainTracer } from "@langchain/core/tracers/tracer_langchain";
import { Client } from "langsmith";
import { gatedClientOptions } from "../app/tracing.js";
import {
  detachLangChainTracing,
  MAX_STEPS_LIMIT,
  settingsFromEnvironment,
  SettingsError,
  type Settings,
  type SettingsFlags,
  studioCodesSocket,
  workspaceNamedInEnvironment,
} from "../settings.js";
import { type ApprovalMode, looserApproval } from "../contracts/modes.js";
import { INSTALL_ROOT } from "../project-root.js";
import { readConfiguration } from "../graph/config.js";
import { createAgentGraphBuilder } from "../graph/graph.js";
import { recursionLimitFor } from "../graph/run-config.js";
import { createStudioApprovalCodes } from "../graph/studio-secret.js";
import { serveWaitingCodes } from "./codes-socket.js";
import type { ProcessRegistry } from "../workspace/processes.js";
import { codeNoticeOnTerminal, noticeOnTerminal } from "../ui/terminal.js";
import { gateText } from "../workspace/output-gate.js";
import { openMemory, type MemoryBackend } from "../memory/backend.js";
import { deferredJournal, holdThreadsDuringRuns, type RunMemory, type WrappableGraph } from "./thread-runs.js";

/**
 * The entry LangGraph Studio loads (langgraph.json: `graphs.agent`). Nothing is read at import
 * time: every run reads the settings from the environment like the CLI (the dev server loads
 * `.env` into it), with the run's configuration fields (model, workspace, approval, maxSteps)
 * in place of flags. Model and tools are built once per model and workspace and kept.
 *
 * This is the one place that resolves a run: the graph's nodes ask `resolveStudioRun` (their
 * RuntimeSource) for the runtime and the run's settled config; the CLI's graph has a fixed one.
 */

/** Everything a runtime is built from; approval and max steps are per run, not part of it. */
const RUNTIME_SETTINGS = [
  "model",
  "workspace",
  "provider",
  "baseUrl",
  "apiKey",
  "requestTimeoutMs",
  "maxRetries",
  "contextTokens",
  "prices",
  "sandbox",
  "network",
  "passEnv",
  "editTool",
] as const satisfies readonly (keyof Settings)[];

function runtimeKey(settings: Settings): string {
  return JSON.stringify(RUNTIME_SETTINGS.map((name) => settings[name]));
}

/** How the person finds a code again once the request log has scrolled it away (studio/codes-socket.ts). */
const CODES_AGAIN = "  Scrolled away? npm run studio -- codes, in another terminal, lists the codes still waiting.\n";

/** Whether this server answers `npm run studio -- codes` (scripts/studio.mjs gives the socket). */
let codesServed = false;

/** This server's one-time approval codes (studio-secret.ts), printed to its terminal and listed to its person only. */
const approvalCodes = createStudioApprovalCodes((text, code) =>
  codeNoticeOnTerminal(codesServed ? `${text}${CODES_AGAIN}` : text, code),
);

// Each part gets its slice of the settings when the server loads this graph, before any run.
configureParts();

const codesSocket = studioCodesSocket();
if (codesSocket) {
  const served = serveWaitingCodes(codesSocket, () => approvalCodes.waiting());
  if ("problem" in served)
    noticeOnTerminal(`mini-cursor: npm run studio -- codes will not list approval codes: ${served.problem}.\n`);
  else codesServed = true;
}

/**
 * The CLI's memory for a workspace (state folder or PostgreSQL, as MINI_CURSOR_CHECKPOINTER
 * says), opened once per workspace and database: Studio's runs take the same thread locks and
 * write the same tool journal as the CLI's (the dev server keeps the checkpoints itself).
 */
const memories = new Map<string, Promise<MemoryBackend>>();
function studioMemory(settings: Settings): Promise<MemoryBackend> {
  const key = JSON.stringify([settings.workspace, settings.checkpointer]);
  let memory = memories.get(key);
  if (!memory) {
    memory = openMemory(settings);
    memory.catch(() => memories.delete(key));
    memories.set(key, memory);
  }
  return memory;
}

/** Tools as the CLI builds them: secrets kept from commands, the key redacted, bubblewrap when available. */
function createStudioRuntime(settings: Settings, mcp?: McpHub): AgentRuntime {
  // The person's hooks run as in the CLI; what each did is a line on the server's terminal (the tool result shows a block in Studio).
  const say = (text: string) => noticeOnTerminal(gateText(`mini-cursor: ${text}\n`));
  const { runtime, tools } = assembleRuntime(settings, {
    emit: (e) => {
      if (e.type === "hook")
        say(`hook ${e.hook} ${e.event} ${e.tool}: ${e.outcome}${e.message ? `: ${e.message}` : ""}`);
    },
    liveOutput: false,
    hookReportsInStream: false,
    note: say,
    mcp,
    journal: deferredJournal(() => studioMemory(settings)),
  });
  registries.add(tools.processes);
  // As the CLI off a terminal: a rules file's allow rules, MCP servers and hooks wait for the person's trust, and the server's terminal says so.
  void confirmConfigTrust(settings, false, { banner() {}, event() {}, pause() {}, note: say });
  return { ...runtime, settleRun: settleStudioRun, studioApprovals: approvalCodes };
}

/** MCP hubs of the runtimes built here, stopped with the server. */
const mcpHubs = new Set<McpHub>();

/**
 * Runs resolve their runtime synchronously, and listing a server's tools is not: the first run
 * of a configuration goes without MCP tools while they are prepared (from the cache, at once),
 * and the runtime that has them replaces it for the next runs.
 */
function addMcpTools(settings: Settings, key: string): void {
  const say = (text: string) => noticeOnTerminal(gateText(`mini-cursor: ${text}\n`));
  try {
    if (configuredMcpServers(settings).length === 0) return;
  } catch (err) {
    say(`MCP servers are not available: ${(err as Error).message}`);
    return;
  }
  prepareMcp(settings, say).then(
    (hub) => {
      if (!hub) return;
      mcpHubs.add(hub);
      runtimes.set(key, createStudioRuntime(settings, hub));
    },
    (err: unknown) => say(`MCP servers are not available: ${(err as Error).message}`),
  );
}

function asText(value: unknown): string | undefined {
  return value === undefined ? undefined : String(value);
}

/** The run's configuration fields as settings flags (the settings validate them). */
function configurationFlags(config: LangGraphRunnableConfig): SettingsFlags {
  const fields = readConfiguration(config);
  const maxSteps = fields.maxSteps;
  return {
    model: asText(fields.model),
    workspace: asText(fields.workspace),
    approval: asText(fields.approval),
    maxSteps: typeof maxSteps === "number" ? maxSteps : asText(maxSteps),
  };
}

/**
 * The folder the person started the server for (MINI_CURSOR_WORKSPACE, else where `npm run
 * studio` ran), real path. A run's `workspace` field, which anyone who can reach the API may set,
 * must lie inside it.
 */
let rootFolder: string | undefined;
function studioRoot(): string {
  rootFolder ??= realpathSync(settingsFromEnvironment({}).workspace);
  return rootFolder;
}

function checkWorkspace(workspace: string): void {
  let real: string | undefined;
  try {
    if (statSync(workspace).isDirectory()) real = realpathSync(workspace);
  } catch {
    // Reported below.
  }
  if (real === undefined)
    throw new SettingsError(
      `The workspace ${workspace} is not a directory; set the workspace field or MINI_CURSOR_WORKSPACE to an existing folder.`,
    );
  const root = studioRoot();
  // Started in mini-cursor's own clone without naming a workspace (as the CLI refuses, cli.ts):
  // every run would work on mini-cursor's own files.
  const install = INSTALL_ROOT && realpathSync(INSTALL_ROOT);
  if (install && !workspaceNamedInEnvironment() && (root === install || root.startsWith(install + path.sep)))
    throw new SettingsError(
      `This Studio server was started in mini-cursor's own folder (${root}) without MINI_CURSOR_WORKSPACE, so a run would work on mini-cursor's own files. Start it for your project: MINI_CURSOR_WORKSPACE=~/my-app npm run studio (MINI_CURSOR_WORKSPACE=${root} works on mini-cursor itself).`,
    );
  if (real !== root && !real.startsWith(root.endsWith(path.sep) ? root : root + path.sep))
    throw new SettingsError(
      `The workspace ${workspace} is outside ${root}, the folder this Studio server was started for; choose a folder inside it, or start npm run studio with MINI_CURSOR_WORKSPACE set to the folder you want.`,
    );
}

/**
 * The server's approval mode, as the person started it (`npm run studio -- --approval <mode>`,
 * or MINI_CURSOR_APPROVAL; auto-edit by default). Any local process can start or resume a run
 * over the API, and the dev server hands a run's config on to the thread's later runs: a run's
 * `approval` field may narrow the server's mode, and one that would loosen it runs in the
 * server's mode instead, said once per thread on this terminal.
 */
let serverMode: ApprovalMode | undefined;
const loosenings = new Set<string>();
function allowedApproval(asked: ApprovalMode, threadId: string): ApprovalMode {
  serverMode ??= settingsFromEnvironment({}).approval;
  if (!looserApproval(asked, serverMode)) return asked;
  const key = `${threadId}\0${asked}`;
  if (!loosenings.has(key)) {
    loosenings.add(key);
    noticeOnTerminal(
      gateText(
        `mini-cursor: a run of thread ${threadId} asked for approval mode ${asked}, looser than ${serverMode}, the mode this server was started in; it runs in ${serverMode}. To allow ${asked}, start the server in it: npm run studio -- --approval ${asked}\n`,
      ),
    );
  }
  return serverMode;
}

const runtimes = new Map<string, AgentRuntime>();

/**
 * A run's approval mode and step limit, validated as the CLI's flags are, from what anyone who
 * can reach the API sent: the mode never looser than the server's.
 */
function settleStudioRun(config: LangGraphRunnableConfig | undefined) {
  const settings = settingsFromEnvironment(configurationFlags(config ?? {}));
  const thread = String(config?.configurable?.thread_id ?? "");
  return { approval: allowedApproval(settings.approval, thread), maxSteps: settings.maxSteps };
}

/** The runtime for a run's configuration (its model and workspace), built once per model and workspace. */
export function studioRuntime(config: LangGraphRunnableConfig): AgentRuntime {
  const settings = settingsFromEnvironment(configurationFlags(config));
  checkWorkspace(settings.workspace);
  const key = runtimeKey(settings);
  let runtime = runtimes.get(key);
  if (!runtime) {
    runtime = createStudioRuntime(settings);
    runtimes.set(key, runtime);
    addMcpTools(settings, key);
  }
  return runtime;
}

/** The process registries of every toolset built here (what the runs left running). */
const registries = new Set<ProcessRegistry>();
/** How long a shutdown may take before the server is made to exit anyway. */
const SHUTDOWN_DEADLINE_MS = 15_000;
let shuttingDown = false;

/**
 * Background processes the tools leave running must not outlive the server. The dev server
 * shuts down on SIGINT/SIGTERM through `exit-hook`, which listens only once: the SIGTERM the CLI
 * sends it right after (from its own exit) would then kill it mid-shutdown, without an exit
 * event. So these listeners stay: the first signal stops every process the runs started
 * (workspace/processes.ts also kills what is left on exit), later ones are absorbed. When
 * nothing else handles the signal, this exits once they are stopped. A closed terminal (SIGHUP)
 * would end the server without any of that, so it becomes a SIGTERM.
 */
function onShutdownSignal(signal: "SIGINT" | "SIGTERM"): void {
  if (shuttingDown) return;
  shuttingDown = true;
  const exitCode = 128 + os.constants.signals[signal];
  const othersExit = process.listenerCount(signal) > 1;
  const stopped = Promise.allSettled([
    ...[...registries].map((registry) => registry.stopAll()),
    ...[...mcpHubs].map((hub) => hub.close()),
    ...[...memories.values()].map((memory) => memory.then((m) => m.close())),
  ]);
  if (!othersExit) void stopped.then(() => process.exit(exitCode));
  setTimeout(() => process.exit(exitCode), SHUTDOWN_DEADLINE_MS).unref();
}
process.on("SIGINT", () => onShutdownSignal("SIGINT"));
process.on("SIGTERM", () => onShutdownSignal("SIGTERM"));
process.once("SIGHUP", () => process.kill(process.pid, "SIGTERM"));

/**
 * Enough super-steps for the largest step limit the settings accept; the routing ends a run at
 * its own maxSteps well before. Without it LangGraph's default of 25 would stop a run after
 * about six steps. A run's own recursion_limit still wins.
 */
const RECURSION_LIMIT = recursionLimitFor(MAX_STEPS_LIMIT);

/**
 * LangSmith tracing under Studio (LANGSMITH_TRACING=true): LangChain would trace every run with
 * a client built from the environment, which posts inputs and outputs as they are. So the flags
 * are taken out of this process's environment and the graph carries a tracer whose client sends
 * everything through the output gate, as the CLI's does (app/tracing.ts).
 */
function studioTracing(): { callbacks?: LangChainTracer[] } {
  let tracing: Settings["tracing"];
  try {
    tracing = settingsFromEnvironment({}).tracing;
  } catch {
    return {}; // A bad setting is reported by the first run, as every other one is.
  }
  if (!tracing) return {};
  detachLangChainTracing();
  const client = new Client(gatedClientOptions(tracing));
  return { callbacks: [new LangChainTracer({ client, projectName: tracing.project })] };
}

/** The memory a run's thread lock and journal live in (its settings validated as resolveStudioRun does). */
async function runMemory(config: LangGraphRunnableConfig): Promise<RunMemory> {
  const settings = settingsFromEnvironment(configurationFlags(config));
  checkWorkspace(settings.workspace);
  return { memory: await studioMemory(settings), workspace: settings.workspace };
}

/** The compiled graph of each runtime: the dev server asks for one per run (`graph` below). */
const graphs = new WeakMap<AgentRuntime, unknown>();

/**
 * What LangGraph Studio loads: a graph factory, which the dev server calls with each run's
 * config (and with an empty one to draw the graph and read its schemas). Each run gets the graph
 * of its model and workspace, built once (the dev server supplies its own checkpointer). Each
 * run holds its thread's lock and closes a step a killed server left open (thread-runs.ts).
 */
export function graph(
  config: LangGraphRunnableConfig = {},
  run?: { executionRuntime?: { context?: Record<string, unknown> } | null },
) {
  // A run's `context` (newer Studio sends the assistant's fields there) reaches the factory
  // beside its config, not in it: its model and workspace choose the runtime too.
  const context = run?.executionRuntime?.context;
  const runtime = studioRuntime(context ? { ...config, context: { ...context, ...(config.context ?? {}) } } : config);
  let compiled = graphs.get(runtime) as ReturnType<typeof compileFor> | undefined;
  if (!compiled) graphs.set(runtime, (compiled = compileFor(runtime)));
  return compiled;
}

function compileFor(runtime: AgentRuntime) {
  const compiled = createAgentGraphBuilder(runtime)
    .compile()
    .withConfig({ recursionLimit: RECURSION_LIMIT, ...studioTracing() });
  holdThreadsDuringRuns(compiled as unknown as WrappableGraph, runMemory, (text) => noticeOnTerminal(gateText(text)));
  return compiled;
}
