import { APPROVAL_MODES } from "./contracts/modes.js";
import {
  DEFAULT_APPROVAL,
  DEFAULT_ENGINE,
  DEFAULT_MAX_STEPS,
  DEFAULT_SANDBOX,
  ENGINES,
  MAX_STEPS_LIMIT,
  SANDBOX_SETTINGS,
  SQLITE_CHECKPOINTER,
} from "./contracts/run-choices.js";
import { existsSync, lstatSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parse as parseDotenv } from "dotenv";
import { z } from "zod";
import { INSTALL_ROOT } from "./project-root.js";
import { shellQuote } from "./shell-quote.js";
import { redactCredentials } from "./credential-shapes.js";
import { parsePriceTable, type PriceTable } from "./price-table.js";
import { MAX_CONFIG_BYTES, readRegularFileStartSync, readRegularFileSync } from "./regular-file.js";
import type { CacheSettings } from "./contracts/host.js";
import type { StartSlices } from "./contracts/start-slices.js";
import { childEnvironment as childEnvironmentOf, parsePassEnv, secretValues as secretValuesOf } from "./secret-env.js";

/**
 * The one place that reads process.env. Precedence: flags > environment > the user config
 * folder's `.env` > the install folder's `.env` > defaults (readEnvironment); never the workspace's.
 */

export { DEFAULT_MAX_STEPS, ENGINES, type EngineName, MAX_STEPS_LIMIT } from "./contracts/run-choices.js";

// --- Where settings come from: the person only, read once -----------------------------------------

/** The environment as the process started: every function below reads this copy, never process.env. */
let started: NodeJS.ProcessEnv = {};

/**
 * Copies process.env: once, when this module loads at start. A test that changes process.env
 * calls it again; nothing else does. check-layers (scripts/layers.json `processEnv.within`)
 * allows process.env in this function and in detachLangChainTracing only, so no setting can be
 * read from the environment in the middle of a run.
 */
export function captureEnvironment(): void {
  started = { ...process.env };
}
captureEnvironment();

/**
 * The environment as the process started, for the few callers that hand it on whole (a command's
 * environment when no scrubbed one is given, the PATH ripgrep is looked up on).
 */
export function processEnvironment(): NodeJS.ProcessEnv {
  return started;
}

/** Raised for bad flags or configuration; the CLI prints the message and exits 2. */
export class SettingsError extends Error {
  override name = "SettingsError";
}

/**
 * The user's config folder: `$XDG_CONFIG_HOME/mini-cursor/`, else `~/.config/mini-cursor/`. Its
 * `.env` holds settings and its `config.json` the user's MCP servers; both are the person's own.
 */
export function userConfigDir(env: NodeJS.ProcessEnv = started): string {
  return path.join(nonEmpty(env.XDG_CONFIG_HOME) ?? path.join(homeDir(env), ".config"), "mini-cursor");
}

/** $HOME, else the account's home folder. */
function homeDir(env: NodeJS.ProcessEnv): string {
  return nonEmpty(env.HOME) ?? os.homedir();
}

/** A .env file's settings; none when it is missing, a symlink, a FIFO or device (never waited on), or too big. */
function readDotenvFile(file: string): Record<string, string> {
  try {
    return parseDotenv(readRegularFileSync(file, { maxBytes: MAX_CONFIG_BYTES }));
  } catch {
    return {};
  }
}

/**
 * The environment over the `.env` files the person wrote: the user config folder's, then the one
 * in mini-cursor's own install folder (so the Quick start's key in the clone's `.env` works from
 * any folder). Earlier wins: environment > user config `.env` > install `.env`. A workspace's
 * `.env` is never read here: it belongs to the project, and a repository could otherwise turn
 * approvals off or send the key to its own host (secretValues still redacts its secrets).
 * `installDir` undefined (no package.json found above this module): no install `.env`.
 */
export function readEnvironment(
  installDir: string | undefined = INSTALL_ROOT,
  env: NodeJS.ProcessEnv = started,
): NodeJS.ProcessEnv {
  // Tests set this so a developer's own .env files (say, a real key) cannot change what they run.
  if (env.MINI_CURSOR_DOTENV === "off") return { ...env };
  const install = installDir ? readDotenvFile(path.join(installDir, ".env")) : {};
  const user = readDotenvFile(path.join(userConfigDir(env), ".env"));
  return { ...install, ...user, ...env };
}

/**
 * Whether MINI_CURSOR_WORKSPACE names the workspace (the environment or a settings .env), so it
 * is the person's choice rather than the folder they happened to run the command from.
 */
export function workspaceNamedInEnvironment(env: NodeJS.ProcessEnv = readEnvironment()): boolean {
  return nonEmpty(env.MINI_CURSOR_WORKSPACE) !== undefined;
}

/** The directory the user ran the command from (`npm start` changes cwd; INIT_CWD keeps it). */
export function invocationDirectory(env: NodeJS.ProcessEnv = started): string {
  return env.INIT_CWD || process.cwd();
}

function toInt(value: string | number | undefined, name: string): number | undefined {
  if (value === undefined || value === "") return undefined;
  const n = typeof value === "number" ? value : Number(value);
  if (!Number.isInteger(n)) throw new SettingsError(`${name} must be a whole number, got "${value}".`);
  return n;
}

function toBool(value: string | undefined, name: string): boolean | undefined {
  const v = nonEmpty(value)?.toLowerCase();
  if (v === undefined) return undefined;
  if (["1", "true", "on", "yes"].includes(v)) return true;
  if (["0", "false", "off", "no"].includes(v)) return false;
  throw new SettingsError(`${name} must be on or off, got "${value}".`);
}

function nonEmpty(value: string | undefined): string | undefined {
  return value && value.trim() !== "" ? value.trim() : undefined;
}

function toJsonObject(value: string | undefined, name: string): Record<string, unknown> | undefined {
  const v = nonEmpty(value);
  if (v === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(v);
  } catch (err) {
    throw new SettingsError(`${name} must be a JSON object such as {"top_p": 0.9}: ${(err as Error).message}.`);
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed))
    throw new SettingsError(`${name} must be a JSON object such as {"top_p": 0.9}.`);
  return parsed as Record<string, unknown>;
}

// --- Provider and model: which model, how it is reached, recorded and traced ----------------------

/** OpenAI's small current model; a reasoning model, so it is sent no temperature. */
export const DEFAULT_MODEL = "gpt-5-mini";

/**
 * The longest silence from the model provider: before its response starts, and between two
 * reads of it (MINI_CURSOR_TIMEOUT_MS). A silent provider is reported after this, not retried.
 */
export const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;
/** A wait for the provider this long is announced: spinner text, a `notice` event in --json. */
export const DEFAULT_WAIT_NOTICE_MS = 2_000;
/** Retries on 429, 5xx and dropped connections, with backoff honouring retry-after. */
export const DEFAULT_MAX_RETRIES = 4;

// Which file-editing tools the model is offered.

/** MINI_CURSOR_EDIT_TOOL: offer edit_file, apply_patch (Codex's V4A patches) or both. */
export const EDIT_TOOL_SETTINGS = ["edit_file", "apply_patch", "both"] as const;
export type EditToolSetting = (typeof EDIT_TOOL_SETTINGS)[number];
/** Model families trained on apply_patch (GPT-4.1, GPT-5, o3, o4), with or without a "provider/" prefix. */
const APPLY_PATCH_MODELS = /^(?:[\w.-]+\/)?(?:gpt-4\.1|gpt-5|o3|o4)(?=$|[-.:_@ ])/i;
/** Without MINI_CURSOR_EDIT_TOOL: those families get apply_patch next to edit_file, the rest edit_file only. */
export function defaultEditTool(model: string): EditToolSetting {
  return APPLY_PATCH_MODELS.test(model.trim()) ? "both" : "edit_file";
}

function toPrices(value: string | undefined): PriceTable | undefined {
  if (nonEmpty(value) === undefined) return undefined;
  try {
    return parsePriceTable(value!);
  } catch (err) {
    throw new SettingsError(`MINI_CURSOR_PRICES ${(err as Error).message}.`);
  }
}

function toTemperature(value: string | undefined): number | "default" | undefined {
  const v = nonEmpty(value);
  if (v === undefined) return undefined;
  if (v.toLowerCase() === "default") return "default";
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0 || n > 2)
    throw new SettingsError(
      `MINI_CURSOR_TEMPERATURE must be a number from 0 to 2, or "default" to send none; got "${value}".`,
    );
  return n;
}

/** A base URL that says how to reach the server; `localhost:11434/v1` parses as a URL with scheme "localhost:". */
function checkBaseUrl(baseUrl: string | undefined): void {
  if (baseUrl === undefined || /^https?:\/\/./i.test(baseUrl)) return;
  const fixed = /^[a-z][\w+.-]*:\/\/|\s/i.test(baseUrl) ? undefined : `http://${redactCredentials(baseUrl)}`;
  throw new SettingsError(
    `OPENAI_BASE_URL=${redactCredentials(baseUrl)} must start with http:// or https://` +
      (fixed ? `: set OPENAI_BASE_URL=${fixed} (or https:// for a remote provider).` : "."),
  );
}

/** The first line of a recording names this format (models/recorder.ts RECORDING_FORMAT). */
const RECORDING_HEADER = /^\s*\{[^\n]*"format"\s*:\s*"mini-cursor-recording"/;
/** Enough of a file to see its first line. */
const FIRST_LINE_BYTES = 4096;

/** What is at a path already, said for --record's refusal; undefined when nothing is. */
function existingAt(file: string): string | undefined {
  let st: ReturnType<typeof lstatSync>;
  try {
    st = lstatSync(file);
  } catch {
    return undefined;
  }
  if (st.isSymbolicLink()) return "a symbolic link";
  if (st.isDirectory()) return "a folder";
  if (!st.isFile()) return "not a regular file";
  try {
    const head = readRegularFileStartSync(file, FIRST_LINE_BYTES).data.toString("utf8");
    return RECORDING_HEADER.test(head) ? "a recording" : "a file that is not a recording";
  } catch {
    return "a file mini-cursor cannot read";
  }
}

/**
 * --record and --replay as absolute paths; the replayed file must exist and differ from the
 * recorded one, and the recorded one must not exist yet: --record never overwrites a file (one
 * typed for --replay, the shipped demo included, or anything else).
 */
function recordingPaths(flags: SettingsFlags, base: string): { record?: string; replay?: string } {
  const record = nonEmpty(flags.record) && path.resolve(base, flags.record!.trim());
  const replay = nonEmpty(flags.replay) && path.resolve(base, flags.replay!.trim());
  if (replay && !existsSync(replay)) throw new SettingsError(`--replay: no recording at ${replay}.`);
  if (record && replay && record === replay)
    throw new SettingsError("--record and --replay name the same file; record to another one.");
  const there = record ? existingAt(record) : undefined;
  if (record && there) {
    const use =
      there === "a recording"
        ? ` To answer from it, use --replay ${shellQuote(record)}; to record again, give a new file name or remove this one first.`
        : " Give a new file name (run.jsonl, say).";
    throw new SettingsError(`--record ${shellQuote(record)}: that is ${there}, and --record never overwrites.${use}`);
  }
  return { record: record || undefined, replay: replay || undefined };
}

// Tracing (LangSmith).

/** LangSmith's project when LANGSMITH_PROJECT is unset (LangChain's own default). */
export const DEFAULT_TRACING_PROJECT = "default";
/** The variables that turn LangChain's own tracing on (any of them "true"). */
const TRACING_FLAGS = [
  "LANGSMITH_TRACING",
  "LANGSMITH_TRACING_V2",
  "LANGCHAIN_TRACING_V2",
  "LANGCHAIN_TRACING",
] as const;

export interface TracingSettings {
  apiKey: string;
  /** LANGSMITH_ENDPOINT; unset: LangSmith's cloud. */
  endpoint?: string;
  project: string;
}

/**
 * Tracing is read here like every other setting and handed to src/app/tracing.ts explicitly,
 * which builds the tracer with redaction. Off unless a tracing flag is true; a flag without a
 * key is a configuration error rather than a run that silently posts nothing.
 */
function tracingSettings(env: NodeJS.ProcessEnv): TracingSettings | undefined {
  const on = TRACING_FLAGS.some((name) => toBool(env[name], name) === true);
  if (!on) return undefined;
  const apiKey = nonEmpty(env.LANGSMITH_API_KEY) ?? nonEmpty(env.LANGCHAIN_API_KEY);
  if (!apiKey) {
    throw new SettingsError(
      "LANGSMITH_TRACING is on but LANGSMITH_API_KEY is not set: set the key from smith.langchain.com (Settings > API Keys), or unset LANGSMITH_TRACING.",
    );
  }
  const endpoint = nonEmpty(env.LANGSMITH_ENDPOINT) ?? nonEmpty(env.LANGCHAIN_ENDPOINT);
  if (endpoint && !/^https?:\/\/./i.test(endpoint))
    throw new SettingsError(`LANGSMITH_ENDPOINT must be an http(s) URL, got "${endpoint}".`);
  return {
    apiKey,
    endpoint,
    project: nonEmpty(env.LANGSMITH_PROJECT) ?? nonEmpty(env.LANGCHAIN_PROJECT) ?? DEFAULT_TRACING_PROJECT,
  };
}

/**
 * LangChain also reads the tracing flags from process.env and would then add a tracer of its
 * own, with a client that does not redact, to any call made outside a traced turn. The CLI
 * traces through src/app/tracing.ts only, so it takes the flags out of its own environment.
 */
export function detachLangChainTracing(): void {
  for (const name of TRACING_FLAGS) {
    delete process.env[name];
    delete started[name];
  }
}

// --- Approval and sandbox: what runs unasked, what commands see -----------------------------------

/**
 * Environment for child processes: the user's, without OPENAI_API_KEY and any variable whose
 * name looks like a key, token, secret, password or credential, except those passed through
 * by name (`passEnv`, default MINI_CURSOR_PASS_ENV).
 */
export function childEnvironment(
  passEnv: readonly string[] = parsePassEnv(started.MINI_CURSOR_PASS_ENV),
  env: NodeJS.ProcessEnv = started,
): NodeJS.ProcessEnv {
  return childEnvironmentOf(passEnv, env);
}

/** Host paths the sandbox hides or keeps writable, read here because only this file reads process.env. */
export interface HostEnvironment {
  /** $XDG_RUNTIME_DIR: the user's sockets (session bus, systemd --user), hidden in the sandbox. */
  runtimeDir?: string;
  /** $SSH_AUTH_SOCK: hidden in the sandbox unless SSH_AUTH_SOCK is passed through by name. */
  sshAuthSock?: string;
  /** The package managers' configured cache locations, and MINI_CURSOR_WRITABLE. */
  caches: CacheSettings;
}

export function hostEnvironment(env: NodeJS.ProcessEnv = started): HostEnvironment {
  const first = (...names: string[]) => names.map((n) => nonEmpty(env[n])).find((v) => v !== undefined);
  return {
    runtimeDir: nonEmpty(env.XDG_RUNTIME_DIR),
    sshAuthSock: nonEmpty(env.SSH_AUTH_SOCK),
    caches: {
      npmCache: first("npm_config_cache", "NPM_CONFIG_CACHE"),
      npmUserConfig: first("npm_config_userconfig", "NPM_CONFIG_USERCONFIG"),
      yarnCache: first("YARN_CACHE_FOLDER"),
      pnpmStore: first("npm_config_store_dir", "NPM_CONFIG_STORE_DIR", "PNPM_STORE_DIR"),
      bunCache: first("BUN_INSTALL_CACHE_DIR"),
      xdgCacheHome: first("XDG_CACHE_HOME"),
      xdgDataHome: first("XDG_DATA_HOME"),
      // MINI_CURSOR_WRITABLE=/path/one:/path/two (or commas): more folders commands may write.
      extraWritable: (env.MINI_CURSOR_WRITABLE ?? "")
        .split(/[,:]/)
        .map((p) => p.trim())
        .filter(Boolean),
    },
  };
}

/** secret-env.ts `secretValues`, of the environment as the process started unless a test gives another. */
export function secretValues(workspace: string, env: NodeJS.ProcessEnv = started): string[] {
  return secretValuesOf(workspace, env);
}

// Trust in repositories' rules files.

/**
 * Where the user's trust in repositories' `mini-cursor.config.json` files is remembered (path and
 * content hash), outside every repository: MINI_CURSOR_TRUST_FILE, else
 * `$XDG_CONFIG_HOME/mini-cursor/trusted-configs.json` (default `~/.config/...`).
 */
export function trustStorePath(env: NodeJS.ProcessEnv = started): string {
  const explicit = nonEmpty(env.MINI_CURSOR_TRUST_FILE);
  return explicit ? path.resolve(explicit) : path.join(userConfigDir(env), "trusted-configs.json");
}

// --- State and memory: threads, the checkpointer, snapshots ---------------------------------------

const POSTGRES_URL = /^postgres(?:ql)?:\/\/./i;

function checkpointerSetting(flag: string | undefined, env: NodeJS.ProcessEnv): string {
  const value = nonEmpty(flag) ?? nonEmpty(env.MINI_CURSOR_CHECKPOINTER) ?? SQLITE_CHECKPOINTER;
  if (value.toLowerCase() === SQLITE_CHECKPOINTER) return SQLITE_CHECKPOINTER;
  if (!POSTGRES_URL.test(value)) {
    const source = nonEmpty(flag) ? "--checkpointer" : "MINI_CURSOR_CHECKPOINTER";
    throw new SettingsError(
      `${source} must be "sqlite" or a PostgreSQL URL such as postgres://user@host:5432/db (a password goes after the user: user:password@host), got "${redactCredentials(value)}".`,
    );
  }
  return value;
}

/**
 * The folder holding mini-cursor's private state for every workspace (threads, snapshots, saved
 * "always for this project" answers, saved command output), outside every workspace:
 * MINI_CURSOR_STATE_HOME, else `$XDG_STATE_HOME/mini-cursor`, else `~/.local/state/mini-cursor`.
 * memory/state-dir.ts keys each workspace's folder by its real path under `workspaces/`.
 */
export function stateHomePath(env: NodeJS.ProcessEnv = started): string {
  const explicit = nonEmpty(env.MINI_CURSOR_STATE_HOME);
  if (explicit) return path.resolve(explicit);
  const base = nonEmpty(env.XDG_STATE_HOME) ?? path.join(homeDir(env), ".local", "state");
  return path.join(path.resolve(base), "mini-cursor");
}

// Workspace snapshots: the shadow git repository behind /undo and time travel.

/** MINI_CURSOR_SNAPSHOTS=off turns snapshots (and with them /undo) off; anything else leaves them on. */
export function snapshotsEnabled(env: NodeJS.ProcessEnv = started): boolean {
  return !/^(off|0|false|no)$/i.test(env.MINI_CURSOR_SNAPSHOTS ?? "");
}

/**
 * How long a command step waits for the workspace's first snapshot, which runs in the background
 * (a big repository's takes tens of seconds): past it the command runs without a snapshot, and
 * the trace and /undo say so. Steps of file tools never wait (they record their own paths).
 */
export const DEFAULT_SNAPSHOT_WAIT_MS = 10_000;

/** MINI_CURSOR_SNAPSHOT_WAIT_MS (milliseconds, 0 or more); the default when unset or not a number. */
export function snapshotWaitMs(env: NodeJS.ProcessEnv = started): number {
  const n = Number(env.MINI_CURSOR_SNAPSHOT_WAIT_MS);
  return env.MINI_CURSOR_SNAPSHOT_WAIT_MS !== undefined && env.MINI_CURSOR_SNAPSHOT_WAIT_MS !== "" && n >= 0
    ? n
    : DEFAULT_SNAPSHOT_WAIT_MS;
}

/**
 * MINI_CURSOR_SNAPSHOT_WATCH=off: every whole snapshot scans the workspace (a `git status`)
 * instead of asking the file watcher what changed (snapshots/watch.ts). For a workspace
 * whose files change in ways inotify does not see: through a hard link from outside it, through
 * mmap, or on a network file system. Read at start (startSlices).
 */
export function snapshotWatchEnabled(env: NodeJS.ProcessEnv = started): boolean {
  return !/^(off|0|false|no)$/i.test(env.MINI_CURSOR_SNAPSHOT_WATCH ?? "");
}

/**
 * The environment the snapshot repository's git runs in: only what finds the program and its
 * locale. None of the user's GIT_* variables (GIT_DIR, GIT_INDEX_FILE…) may leak in and point
 * it at their own repository; snapshots/git.ts adds its own.
 */
export function snapshotGitEnvironment(env: NodeJS.ProcessEnv = started): NodeJS.ProcessEnv {
  const keep = ["PATH", "SYSTEMROOT", "TMPDIR"];
  const out: NodeJS.ProcessEnv = {};
  for (const name of keep) if (env[name] !== undefined) out[name] = env[name];
  return out;
}

// --- MCP servers ----------------------------------------------------------------------------------

/** Starting a server and listing its tools may take this long (npx may download it first). */
export const DEFAULT_MCP_START_TIMEOUT_MS = 30_000;
/** One MCP tool call may take this long before it is cancelled and the model told so. */
export const DEFAULT_MCP_CALL_TIMEOUT_MS = 60_000;

/**
 * Where the user's own config file is (MINI_CURSOR_USER_CONFIG, else
 * `$XDG_CONFIG_HOME/mini-cursor/config.json`: its `mcpServers` and `mcp` apply to every
 * workspace), where servers' tool lists are cached between runs (MINI_CURSOR_MCP_CACHE, else
 * `$XDG_CACHE_HOME/mini-cursor/mcp-tools.json`), and the start and call timeouts
 * (MINI_CURSOR_MCP_START_TIMEOUT_MS, MINI_CURSOR_MCP_TIMEOUT_MS).
 */
export function mcpSettings(env: NodeJS.ProcessEnv = started) {
  const cacheBase = nonEmpty(env.XDG_CACHE_HOME) ?? path.join(homeDir(env), ".cache");
  return {
    userConfig: path.resolve(nonEmpty(env.MINI_CURSOR_USER_CONFIG) ?? path.join(userConfigDir(env), "config.json")),
    cacheFile: path.resolve(
      nonEmpty(env.MINI_CURSOR_MCP_CACHE) ?? path.join(cacheBase, "mini-cursor", "mcp-tools.json"),
    ),
    startTimeoutMs:
      toInt(env.MINI_CURSOR_MCP_START_TIMEOUT_MS, "MINI_CURSOR_MCP_START_TIMEOUT_MS") ?? DEFAULT_MCP_START_TIMEOUT_MS,
    callTimeoutMs: toInt(env.MINI_CURSOR_MCP_TIMEOUT_MS, "MINI_CURSOR_MCP_TIMEOUT_MS") ?? DEFAULT_MCP_CALL_TIMEOUT_MS,
  };
}

// --- Hooks and custom commands ---------------------------------------------------------------------

/** How long a hook that sets no `timeout` of its own may run before it is stopped (MINI_CURSOR_HOOK_TIMEOUT_MS). */
export const DEFAULT_HOOK_TIMEOUT_MS = 60_000;
/** The longest a hook may run, whatever it or the setting asks (as for a command). */
export const MAX_HOOK_TIMEOUT_MS = 600_000;

// --- Studio: its settings and who may call the dev server -----------------------------------------

/** The environment and .env files as Studio's first run read them (see settingsFromEnvironment). */
let studioEnvironment: NodeJS.ProcessEnv | undefined;

/**
 * Studio's settings for one run: the run's configuration over the environment and the .env
 * files, read once, on the first run (the dev server restarts when .env changes), so no run
 * reads the environment again.
 */
export function settingsFromEnvironment(overrides: SettingsFlags = {}): Settings {
  studioEnvironment ??= readEnvironment();
  return loadSettings(overrides, studioEnvironment);
}

/**
 * The Unix socket the Studio server answers `npm run studio -- codes` on (studio/codes-socket.ts):
 * scripts/studio.mjs picks it, in a folder of the person's own, and passes it here.
 */
export function studioCodesSocket(env: NodeJS.ProcessEnv = started): string | undefined {
  return nonEmpty(env.MINI_CURSOR_STUDIO_CODES_SOCKET);
}

/** Where LangGraph Studio's web page is served from; its requests to the local API carry these origins. */
export const STUDIO_ORIGINS = ["https://smith.langchain.com", "https://eu.smith.langchain.com"] as const;
/** Host names that always reach this machine's loopback. */
const LOOPBACK_HOSTS = ["127.0.0.1", "localhost", "::1"] as const;

export interface StudioGuardSettings {
  /** Host header names accepted (the port must be the server's own). */
  hosts: string[];
  /** Origin headers accepted besides the server's own; a request without Origin is not a browser's. */
  origins: string[];
  /**
   * The server's port, for checks that see the request but not its socket (the dev server's
   * auth hook): langgraph-api's entrypoint sets PORT to it before it starts serving.
   */
  port?: number;
}

/**
 * scripts/studio.mjs passes the `--host` it bound (MINI_CURSOR_STUDIO_HOST) and the origin of
 * `--studio-url` (MINI_CURSOR_STUDIO_ORIGIN) to the dev server; the guard in src/studio/http-guard.ts
 * accepts those besides loopback and Studio's own origins.
 */
export function studioGuardSettings(env: NodeJS.ProcessEnv = started): StudioGuardSettings {
  const host = nonEmpty(env.MINI_CURSOR_STUDIO_HOST)
    ?.replace(/^\[|\]$/g, "")
    .toLowerCase();
  const bound = host && host !== "0.0.0.0" && host !== "::" ? [host] : [];
  const origin = nonEmpty(env.MINI_CURSOR_STUDIO_ORIGIN);
  let studioOrigin: string[] = [];
  if (origin) {
    try {
      studioOrigin = [new URL(origin).origin];
    } catch {
      throw new SettingsError(`--studio-url must be a URL such as https://smith.langchain.com, got "${origin}".`);
    }
  }
  const port = Number(env.PORT);
  return {
    hosts: [...new Set([...LOOPBACK_HOSTS, ...bound])],
    origins: [...new Set([...STUDIO_ORIGINS, ...studioOrigin])],
    ...(Number.isInteger(port) && port > 0 ? { port } : {}),
  };
}

// --- UI: the terminal and the hints printed in it -------------------------------------------------

/** How the user started mini-cursor, as a command to print in hints: `npm start --` or `mini-cursor`. */
export function launchCommand(env: NodeJS.ProcessEnv = started): string {
  if (env.npm_lifecycle_event === "start") return "npm start --";
  if (env.npm_lifecycle_event === "dev") return "npm run dev --";
  return "mini-cursor";
}

// --- Limits ---------------------------------------------------------------------------------------

/** Rough context budget in tokens; the oldest turns are dropped beyond it. */
export const DEFAULT_CONTEXT_TOKENS = 100_000;

/** A step limit, or a sentence saying what is wrong with it. */
function toMaxSteps(value: string | number | undefined, name: string): number | undefined {
  const n = toInt(value, name);
  if (n !== undefined && (n < 1 || n > MAX_STEPS_LIMIT)) {
    throw new SettingsError(
      `${name} is the number of model turns a task may take: a whole number from 1 to ${MAX_STEPS_LIMIT}, got ${value}.`,
    );
  }
  return n;
}

// --- Tests-only hooks -----------------------------------------------------------------------------

// MINI_CURSOR_DOTENV=off (readEnvironment) keeps a developer's own .env files out of tests.

/**
 * Test hook, not a setting for users: MINI_CURSOR_FAULT_POINT=<name> makes the process SIGKILL
 * (or, with `:stop`, SIGSTOP) itself when it reaches that named point (memory/fault-point.ts
 * lists them), so the fault tests can stop it exactly there. Unset (always, outside tests) it does nothing.
 */
export function faultPointSetting(env: NodeJS.ProcessEnv = started): string | undefined {
  return nonEmpty(env.MINI_CURSOR_FAULT_POINT);
}

// --- The settings object: schema, flags, loading, and errors that name the variable ---------------

const settingsSchema = z.object({
  workspace: z.string().min(1),
  model: z.string().min(1),
  apiKey: z.string().optional(),
  baseUrl: z.string().url({ message: "OPENAI_BASE_URL must be a URL such as http://localhost:11434/v1" }).optional(),
  provider: z.enum(["openai-compatible", "offline"]),
  thread: z.string().min(1).optional(),
  continueLatest: z.boolean(),
  /** --wait-for-thread: wait (saying so) while another process writes the thread, instead of refusing. */
  waitForThread: z.boolean(),
  engine: z.enum(ENGINES),
  maxSteps: z.number().int().positive().max(10_000),
  approval: z.enum(APPROVAL_MODES),
  json: z.boolean(),
  color: z.boolean(),
  verbose: z.boolean(),
  contextTokens: z.number().int().min(1_000),
  requestTimeoutMs: z.number().int().positive(),
  /** MINI_CURSOR_WAIT_NOTICE_MS: how long a wait for the provider goes unannounced. */
  waitNoticeMs: z.number().int().min(0),
  maxRetries: z.number().int().min(0).max(20),
  /** Model prices overriding the built-in table (MINI_CURSOR_PRICES, USD per million tokens). */
  prices: z.custom<PriceTable>().optional(),
  sandbox: z.enum(SANDBOX_SETTINGS),
  /** Network access for commands (in the sandbox; without one it cannot be taken away). */
  network: z.boolean(),
  /** Variables passed to commands although their names look secret (MINI_CURSOR_PASS_ENV). */
  passEnv: z.array(z.string()),
  /** --record: append every model response to this JSON Lines file (absolute path). */
  record: z.string().min(1).optional(),
  /** --replay: serve the model responses from this recording instead of a provider (absolute path). */
  replay: z.string().min(1).optional(),
  /** Which file-editing tools the model is offered (MINI_CURSOR_EDIT_TOOL, default by model family). */
  editTool: z.enum(EDIT_TOOL_SETTINGS),
  /** Repo-config trust: where trusted `mini-cursor.config.json` contents are remembered. */
  trustStore: z.string().min(1),
  /** The person's sub-agent types for the `task` tool: Markdown files in `<user config folder>/agents/`. */
  agentsDir: z.string().min(1),
  /** MCP servers: the user's config file, the tool-list cache, and timeouts. */
  mcp: z.object({
    userConfig: z.string().min(1),
    cacheFile: z.string().min(1),
    startTimeoutMs: z.number().int().positive(),
    callTimeoutMs: z.number().int().positive(),
  }),
  /** MINI_CURSOR_HOOK_TIMEOUT_MS: how long a hook without its own timeout may run. */
  hookTimeoutMs: z.number().int().positive().max(MAX_HOOK_TIMEOUT_MS),
  /** Claude Code's user settings (`~/.claude/settings.json`): the person's own, so its `hooks` run as our user config's do. */
  claudeUserSettings: z.string().min(1).optional(),
  /** The person's own slash commands folder (`<user config>/commands`). */
  userCommands: z.string().min(1),
  /** Claude Code's user folder (`~/.claude`): its commands and agents are the person's own too. */
  claudeHome: z.string().min(1),
  // Provider wire (src/provider/): how requests are shaped for providers that differ from OpenAI.
  /** MINI_CURSOR_TEMPERATURE: a number, or "default" to send none (unset: 0, none for reasoning models). */
  temperature: z.union([z.number().min(0).max(2), z.literal("default")]).optional(),
  /** MINI_CURSOR_EXTRA_BODY: a JSON object merged into every chat-completions request body. */
  extraBody: z.record(z.string(), z.unknown()).optional(),
  /** MINI_CURSOR_STREAM_OPTIONS=off: no `stream_options` (usage is then estimated). */
  streamOptions: z.boolean().optional(),
  /** MINI_CURSOR_STREAM=off: ask for whole JSON completions instead of a stream. */
  stream: z.boolean().optional(),
  /** MINI_CURSOR_ADDITIONAL_PROPERTIES=off: no `additionalProperties` in tool schemas. */
  additionalProperties: z.boolean().optional(),
  /** LangSmith tracing: on when LANGSMITH_TRACING=true; see tracingSettings. */
  tracing: z.custom<TracingSettings>().optional(),
  /** Where threads live: "sqlite" (default, in the workspace) or a PostgreSQL URL. */
  checkpointer: z.string().min(1),
  /** How the person started mini-cursor, for the commands hints print: `npm start --` or `mini-cursor` (launchCommand). */
  launchCommand: z.string().min(1),
  /** Host paths the sandbox hides or keeps writable (hostEnvironment), of the process's own environment. */
  host: z.custom<HostEnvironment>(),
  /** The person's editor for [e]dit at an approval question (VISUAL, else EDITOR, as git reads them); unset: edited on the prompt line. */
  editor: z.string().min(1).optional(),
});

export type Settings = z.infer<typeof settingsSchema>;

/** Options as the CLI parsed them; every field optional so env and defaults fill the rest. */
export interface SettingsFlags {
  workspace?: string;
  model?: string;
  thread?: string;
  continue?: boolean;
  /** --wait-for-thread */
  waitForThread?: boolean;
  engine?: string;
  maxSteps?: string | number;
  approval?: string;
  json?: boolean;
  color?: boolean;
  verbose?: boolean;
  sandbox?: string;
  /** false for --no-network. */
  network?: boolean;
  /** --record <file> */
  record?: string;
  /** --replay <file> */
  replay?: string;
  /** --checkpointer sqlite|postgres://… */
  checkpointer?: string;
}

/** An empty --workspace or --thread is a mistake (an unset variable in a script), not "the default". */
function refuseEmptyFlags(flags: SettingsFlags): void {
  if (flags.workspace !== undefined && flags.workspace.trim() === "") {
    throw new SettingsError(
      "--workspace needs a folder, got an empty value. Leave the flag out to use the current folder.",
    );
  }
  if (flags.thread !== undefined && flags.thread.trim() === "") {
    throw new SettingsError(
      "--thread needs an id, got an empty value. --threads lists the saved ones; leave the flag out to start a new thread.",
    );
  }
}

export function loadSettings(flags: SettingsFlags = {}, env: NodeJS.ProcessEnv = readEnvironment()): Settings {
  refuseEmptyFlags(flags);
  const apiKey = nonEmpty(env.OPENAI_API_KEY);
  const baseUrl = nonEmpty(env.OPENAI_BASE_URL);
  checkBaseUrl(baseUrl);
  const workspace = path.resolve(
    invocationDirectory(env),
    flags.workspace ?? nonEmpty(env.MINI_CURSOR_WORKSPACE) ?? ".",
  );
  const noColor = env.NO_COLOR !== undefined && env.NO_COLOR !== "";
  const { record, replay } = recordingPaths(flags, invocationDirectory(env));
  const raw = {
    workspace,
    model: nonEmpty(flags.model) ?? nonEmpty(env.MINI_CURSOR_MODEL) ?? DEFAULT_MODEL,
    apiKey,
    baseUrl,
    // A replay needs no provider: like the offline model, it is free and makes no request.
    provider: (apiKey || baseUrl) && !replay ? "openai-compatible" : "offline",
    thread: nonEmpty(flags.thread),
    continueLatest: flags.continue ?? false,
    waitForThread: flags.waitForThread ?? false,
    engine: flags.engine ?? nonEmpty(env.MINI_CURSOR_ENGINE) ?? DEFAULT_ENGINE,
    maxSteps:
      toMaxSteps(flags.maxSteps, "--max-steps") ??
      toMaxSteps(env.MINI_CURSOR_MAX_STEPS, "MINI_CURSOR_MAX_STEPS") ??
      DEFAULT_MAX_STEPS,
    approval: flags.approval ?? nonEmpty(env.MINI_CURSOR_APPROVAL) ?? DEFAULT_APPROVAL,
    json: flags.json ?? false,
    color: (flags.color ?? true) && !noColor,
    verbose: flags.verbose ?? nonEmpty(env.DEBUG) !== undefined,
    contextTokens: toInt(env.MINI_CURSOR_CONTEXT_TOKENS, "MINI_CURSOR_CONTEXT_TOKENS") ?? DEFAULT_CONTEXT_TOKENS,
    requestTimeoutMs: toInt(env.MINI_CURSOR_TIMEOUT_MS, "MINI_CURSOR_TIMEOUT_MS") ?? DEFAULT_REQUEST_TIMEOUT_MS,
    maxRetries: toInt(env.MINI_CURSOR_MAX_RETRIES, "MINI_CURSOR_MAX_RETRIES") ?? DEFAULT_MAX_RETRIES,
    waitNoticeMs: toInt(env.MINI_CURSOR_WAIT_NOTICE_MS, "MINI_CURSOR_WAIT_NOTICE_MS") ?? DEFAULT_WAIT_NOTICE_MS,
    prices: toPrices(env.MINI_CURSOR_PRICES),
    sandbox: flags.sandbox ?? nonEmpty(env.MINI_CURSOR_SANDBOX) ?? DEFAULT_SANDBOX,
    network: flags.network === false ? false : (toBool(env.MINI_CURSOR_NETWORK, "MINI_CURSOR_NETWORK") ?? true),
    passEnv: parsePassEnv(env.MINI_CURSOR_PASS_ENV),
    record,
    replay,
    editTool:
      nonEmpty(env.MINI_CURSOR_EDIT_TOOL)?.toLowerCase() ??
      defaultEditTool(nonEmpty(flags.model) ?? nonEmpty(env.MINI_CURSOR_MODEL) ?? DEFAULT_MODEL),
    trustStore: trustStorePath(env),
    agentsDir: path.join(userConfigDir(env), "agents"),
    mcp: mcpSettings(env),
    hookTimeoutMs: toInt(env.MINI_CURSOR_HOOK_TIMEOUT_MS, "MINI_CURSOR_HOOK_TIMEOUT_MS") ?? DEFAULT_HOOK_TIMEOUT_MS,
    claudeUserSettings: path.join(homeDir(env), ".claude", "settings.json"),
    // MINI_CURSOR_COMMANDS_DIR, else `commands/` in the user config folder.
    userCommands: path.resolve(nonEmpty(env.MINI_CURSOR_COMMANDS_DIR) ?? path.join(userConfigDir(env), "commands")),
    // Claude Code's own variable, else `~/.claude`: its `commands/` and `agents/` are the person's own as ours are.
    claudeHome: path.resolve(nonEmpty(env.CLAUDE_CONFIG_DIR) ?? path.join(homeDir(env), ".claude")),
    // Provider wire (src/provider/).
    temperature: toTemperature(env.MINI_CURSOR_TEMPERATURE),
    extraBody: toJsonObject(env.MINI_CURSOR_EXTRA_BODY, "MINI_CURSOR_EXTRA_BODY"),
    streamOptions: toBool(env.MINI_CURSOR_STREAM_OPTIONS, "MINI_CURSOR_STREAM_OPTIONS"),
    stream: toBool(env.MINI_CURSOR_STREAM, "MINI_CURSOR_STREAM"),
    additionalProperties: toBool(env.MINI_CURSOR_ADDITIONAL_PROPERTIES, "MINI_CURSOR_ADDITIONAL_PROPERTIES"),
    tracing: tracingSettings(env),
    checkpointer: checkpointerSetting(flags.checkpointer, env),
    editor: nonEmpty(env.VISUAL) ?? nonEmpty(env.EDITOR),
    launchCommand: launchCommand(env),
    host: hostEnvironment(),
  };
  const parsed = settingsSchema.safeParse(raw);
  if (!parsed.success) throw new SettingsError(invalidSetting(parsed.error.issues[0]!, raw, flags));
  return parsed.data;
}

/** Where each validated field comes from when no flag set it: the variable a user can fix. */
const FIELD_VARIABLES: Record<string, string> = {
  model: "MINI_CURSOR_MODEL",
  baseUrl: "OPENAI_BASE_URL",
  engine: "MINI_CURSOR_ENGINE",
  maxSteps: "MINI_CURSOR_MAX_STEPS",
  approval: "MINI_CURSOR_APPROVAL",
  contextTokens: "MINI_CURSOR_CONTEXT_TOKENS",
  requestTimeoutMs: "MINI_CURSOR_TIMEOUT_MS",
  maxRetries: "MINI_CURSOR_MAX_RETRIES",
  waitNoticeMs: "MINI_CURSOR_WAIT_NOTICE_MS",
  sandbox: "MINI_CURSOR_SANDBOX",
  editTool: "MINI_CURSOR_EDIT_TOOL",
  "mcp.startTimeoutMs": "MINI_CURSOR_MCP_START_TIMEOUT_MS",
  "mcp.callTimeoutMs": "MINI_CURSOR_MCP_TIMEOUT_MS",
  hookTimeoutMs: "MINI_CURSOR_HOOK_TIMEOUT_MS",
};
/** The fields a flag of the same name sets. */
const FIELD_FLAGS: readonly (keyof SettingsFlags)[] = ["model", "engine", "maxSteps", "approval", "sandbox"];

/** One sentence for a value the schema refused: `MINI_CURSOR_APPROVAL=yolo is not valid: use one of …`. */
function invalidSetting(issue: z.core.$ZodIssue, raw: Record<string, unknown>, flags: SettingsFlags): string {
  const field = issue.path.join(".");
  let value: unknown = raw;
  for (const key of issue.path) value = (value as Record<PropertyKey, unknown> | undefined)?.[key as PropertyKey];
  const flag = FIELD_FLAGS.find((f) => f === field);
  const fromFlag = flag !== undefined && nonEmpty(String(flags[flag] ?? "")) !== undefined;
  const name = fromFlag
    ? `--${flag.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`
    : (FIELD_VARIABLES[field] ?? field);
  const shown = fromFlag ? `${name} ${String(value)}` : `${name}=${String(value)}`;
  const detail = issue as {
    code: string;
    values?: unknown[];
    minimum?: unknown;
    maximum?: unknown;
    inclusive?: boolean;
  };
  if (detail.code === "invalid_value" && detail.values)
    return `${shown} is not valid: use one of ${detail.values.map(String).join(", ")}.`;
  if (detail.code === "too_small")
    return `${shown} is too small: it must be ${detail.inclusive === false ? "more than" : "at least"} ${String(detail.minimum)}.`;
  if (detail.code === "too_big")
    return `${shown} is too large: it must be ${detail.inclusive === false ? "less than" : "at most"} ${String(detail.maximum)}.`;
  return `${shown} is not valid: ${issue.message}`;
}

// --- The slices the parts are handed at start (app/configure.ts) --------------------------------

const environmentSchema = z.record(z.string(), z.string().optional());

const startSlicesSchema = z.object({
  stateHome: z.string().min(1),
  snapshots: z.object({
    enabled: z.boolean(),
    waitMs: z.number().min(0),
    watch: z.boolean(),
    gitEnvironment: environmentSchema,
  }),
  commands: z.object({ base: environmentSchema, scrubbed: environmentSchema }),
  configFiles: z.object({ trustStore: z.string().min(1), mcpUserConfig: z.string().min(1) }),
  faultPoint: z.string().min(1).optional(),
}) satisfies z.ZodType<StartSlices>;

/**
 * Each part's slice of the environment as the process started, validated once: what the
 * composition hands the state folder, the snapshots, commands, approvals and the fault hook
 * (app/configure.ts), so that none of them reads the environment in the middle of a run.
 */
export function startSlices(env: NodeJS.ProcessEnv = started): StartSlices {
  // Settings come from the environment and the .env files as every other setting does; what
  // commands inherit is the process's own environment only (a .env holds the key).
  const settings = readEnvironment(INSTALL_ROOT, env);
  const raw = {
    stateHome: stateHomePath(settings),
    snapshots: {
      enabled: snapshotsEnabled(settings),
      waitMs: snapshotWaitMs(settings),
      watch: snapshotWatchEnabled(settings),
      gitEnvironment: snapshotGitEnvironment(env),
    },
    commands: { base: { ...env }, scrubbed: childEnvironment(parsePassEnv(settings.MINI_CURSOR_PASS_ENV), env) },
    configFiles: { trustStore: trustStorePath(settings), mcpUserConfig: mcpSettings(settings).userConfig },
    faultPoint: faultPointSetting(env),
  };
  const parsed = startSlicesSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new SettingsError(`${issue.path.join(".")} is not valid: ${issue.message}`);
  }
  return parsed.data;
}
