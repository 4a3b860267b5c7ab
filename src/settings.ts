import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { parse as parseDotenv } from "dotenv";
import { z } from "zod";
import { parsePriceTable, type PriceTable } from "./agent/cost.js";
import { parsePassEnv, scrubEnvironment, withoutNpmRunVariables } from "./security/env.js";

/**
 * The one place that reads process.env. Precedence: flags > environment > .env > defaults.
 */

/** OpenAI's small current model; a reasoning model, so it is sent no temperature. */
export const DEFAULT_MODEL = "gpt-5-mini";
export const DEFAULT_MAX_STEPS = 30;
export const DEFAULT_APPROVAL = "auto-edit";
/** Rough context budget in tokens; the oldest turns are dropped beyond it. */
export const DEFAULT_CONTEXT_TOKENS = 100_000;
/** One model request may take this long before it is abandoned (and retried). */
export const DEFAULT_REQUEST_TIMEOUT_MS = 120_000;
/** Retries on 429, 5xx and dropped connections, with backoff honouring retry-after. */
export const DEFAULT_MAX_RETRIES = 4;

export const APPROVAL_MODES = ["suggest", "auto-edit", "full-auto"] as const;
export type ApprovalMode = (typeof APPROVAL_MODES)[number];
export const ENGINES = ["graph", "loop"] as const;
export type EngineName = (typeof ENGINES)[number];
/** auto: bubblewrap when installed; on: refuse to start without it; off: never. */
export const SANDBOX_SETTINGS = ["auto", "on", "off"] as const;
export type SandboxSetting = (typeof SANDBOX_SETTINGS)[number];

const settingsSchema = z.object({
  workspace: z.string().min(1),
  model: z.string().min(1),
  apiKey: z.string().optional(),
  baseUrl: z.string().url({ message: "OPENAI_BASE_URL must be a URL such as http://localhost:11434/v1" }).optional(),
  provider: z.enum(["openai-compatible", "offline"]),
  thread: z.string().min(1).optional(),
  continueLatest: z.boolean(),
  engine: z.enum(ENGINES),
  maxSteps: z.number().int().positive().max(10_000),
  approval: z.enum(APPROVAL_MODES),
  json: z.boolean(),
  color: z.boolean(),
  verbose: z.boolean(),
  contextTokens: z.number().int().min(1_000),
  requestTimeoutMs: z.number().int().positive(),
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
});

export type Settings = z.infer<typeof settingsSchema>;

/** Options as the CLI parsed them; every field optional so env and defaults fill the rest. */
export interface SettingsFlags {
  workspace?: string;
  model?: string;
  thread?: string;
  continue?: boolean;
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
}

/** Raised for bad flags or configuration; the CLI prints the message and exits 2. */
export class SettingsError extends Error {
  override name = "SettingsError";
}

/** The environment merged over `.env` in `dir` (the environment wins). */
export function readEnvironment(dir: string = process.cwd(), env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  // Tests set this so a developer's own .env (say, a real key) cannot change what they run.
  if (env.MINI_CURSOR_DOTENV === "off") return { ...env };
  const file = path.join(dir, ".env");
  const fromFile = existsSync(file) ? parseDotenv(readFileSync(file)) : {};
  return { ...fromFile, ...env };
}

/** The directory the user ran the command from (`npm start` changes cwd; INIT_CWD keeps it). */
export function invocationDirectory(env: NodeJS.ProcessEnv = process.env): string {
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
  if (!Number.isFinite(n) || n < 0 || n > 2) throw new SettingsError(`MINI_CURSOR_TEMPERATURE must be a number from 0 to 2, or "default" to send none; got "${value}".`);
  return n;
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
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) throw new SettingsError(`${name} must be a JSON object such as {"top_p": 0.9}.`);
  return parsed as Record<string, unknown>;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value && value.trim() !== "" ? value.trim() : undefined;
}

/** --record and --replay as absolute paths; the replayed file must exist and differ from the recorded one. */
function recordingPaths(flags: SettingsFlags, base: string): { record?: string; replay?: string } {
  const record = nonEmpty(flags.record) && path.resolve(base, flags.record!.trim());
  const replay = nonEmpty(flags.replay) && path.resolve(base, flags.replay!.trim());
  if (replay && !existsSync(replay)) throw new SettingsError(`--replay: no recording at ${replay}.`);
  if (record && replay && record === replay) throw new SettingsError("--record and --replay name the same file; record to another one.");
  return { record: record || undefined, replay: replay || undefined };
}

export function loadSettings(flags: SettingsFlags = {}, env: NodeJS.ProcessEnv = readEnvironment()): Settings {
  const apiKey = nonEmpty(env.OPENAI_API_KEY);
  const baseUrl = nonEmpty(env.OPENAI_BASE_URL);
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
    engine: flags.engine ?? nonEmpty(env.MINI_CURSOR_ENGINE) ?? "graph",
    maxSteps: toInt(flags.maxSteps, "--max-steps") ?? toInt(env.MINI_CURSOR_MAX_STEPS, "MINI_CURSOR_MAX_STEPS") ?? DEFAULT_MAX_STEPS,
    approval: flags.approval ?? nonEmpty(env.MINI_CURSOR_APPROVAL) ?? DEFAULT_APPROVAL,
    json: flags.json ?? false,
    color: (flags.color ?? true) && !noColor,
    verbose: flags.verbose ?? (nonEmpty(env.DEBUG) !== undefined),
    contextTokens:
      toInt(env.MINI_CURSOR_CONTEXT_TOKENS, "MINI_CURSOR_CONTEXT_TOKENS") ?? DEFAULT_CONTEXT_TOKENS,
    requestTimeoutMs:
      toInt(env.MINI_CURSOR_TIMEOUT_MS, "MINI_CURSOR_TIMEOUT_MS") ?? DEFAULT_REQUEST_TIMEOUT_MS,
    maxRetries: toInt(env.MINI_CURSOR_MAX_RETRIES, "MINI_CURSOR_MAX_RETRIES") ?? DEFAULT_MAX_RETRIES,
    prices: toPrices(env.MINI_CURSOR_PRICES),
    sandbox: flags.sandbox ?? nonEmpty(env.MINI_CURSOR_SANDBOX) ?? "auto",
    network: flags.network === false ? false : (toBool(env.MINI_CURSOR_NETWORK, "MINI_CURSOR_NETWORK") ?? true),
    passEnv: parsePassEnv(env.MINI_CURSOR_PASS_ENV),
    record,
    replay,
    // Provider wire (src/provider/).
    temperature: toTemperature(env.MINI_CURSOR_TEMPERATURE),
    extraBody: toJsonObject(env.MINI_CURSOR_EXTRA_BODY, "MINI_CURSOR_EXTRA_BODY"),
    streamOptions: toBool(env.MINI_CURSOR_STREAM_OPTIONS, "MINI_CURSOR_STREAM_OPTIONS"),
    stream: toBool(env.MINI_CURSOR_STREAM, "MINI_CURSOR_STREAM"),
    additionalProperties: toBool(env.MINI_CURSOR_ADDITIONAL_PROPERTIES, "MINI_CURSOR_ADDITIONAL_PROPERTIES"),
  };
  const parsed = settingsSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = issue.path.join(".");
    throw new SettingsError(`Invalid setting ${field}: ${issue.message}`);
  }
  return parsed.data;
}

/**
 * Environment for child processes: the user's, without OPENAI_API_KEY and any variable whose
 * name looks like a key, token, secret, password or credential, except those passed through
 * by name (`passEnv`, default MINI_CURSOR_PASS_ENV).
 */
export function childEnvironment(
  passEnv: readonly string[] = parsePassEnv(process.env.MINI_CURSOR_PASS_ENV),
  env: NodeJS.ProcessEnv = process.env,
): NodeJS.ProcessEnv {
  return scrubEnvironment(withoutNpmRunVariables(env), passEnv).env;
}

/** True when both stdin and stdout are terminals (so we may ask questions and animate). */
export function isInteractiveTerminal(): boolean {
  return Boolean(process.stdin.isTTY && process.stdout.isTTY);
}

/** Studio and tests read a few settings without flags; this keeps them going through here. */
export function settingsFromEnvironment(overrides: SettingsFlags = {}): Settings {
  return loadSettings(overrides, readEnvironment());
}
