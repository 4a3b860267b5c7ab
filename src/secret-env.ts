import path from "node:path";
import { parse as parseDotenv } from "dotenv";
import { shapedPasswords } from "./credential-shapes.js";
import { MAX_CONFIG_BYTES, readRegularFileSync } from "./regular-file.js";

/**
 * The environment child processes get: the user's, without the agent's own credentials and
 * without anything whose name looks like a key, token, secret, password or credential, unless
 * the user passes it through by name (MINI_CURSOR_PASS_ENV=A,B or `passEnv` in the rules file).
 * Below settings.ts, which builds the commands' environment with these rules, so that settings
 * imports nothing above it; security/env.ts adds the redaction of the secrets' values.
 */

/** Variables that never reach a command unless passed through by name. */
export const ALWAYS_SCRUBBED: readonly string[] = [
  "OPENAI_API_KEY",
  // The ssh-agent signs with every loaded key: a command must not use it unless passed through.
  "SSH_AUTH_SOCK",
  // A database URL for the checkpointer carries its password (issue 19).
  "MINI_CURSOR_CHECKPOINTER",
];

/** Names that look like credentials: *_API_KEY, *_TOKEN, AWS_SECRET_ACCESS_KEY, DB_PASSWORD... */
export const SECRET_NAME = /key|token|secret|passw(?:or)?d|credential/i;

export function isSecretName(name: string): boolean {
  return ALWAYS_SCRUBBED.includes(name) || SECRET_NAME.test(name);
}

/** `A,B C` -> ["A", "B", "C"]. */
export function parsePassEnv(value: string | undefined): string[] {
  return (value ?? "")
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter(Boolean);
}

export interface ScrubbedEnvironment {
  env: NodeJS.ProcessEnv;
  /** Names that were removed (never their values). */
  removed: string[];
}

/** A copy of `env` without secrets; names in `passEnv` are kept whatever they look like. */
export function scrubEnvironment(env: NodeJS.ProcessEnv, passEnv: readonly string[] = []): ScrubbedEnvironment {
  const keep = new Set(passEnv);
  const out: NodeJS.ProcessEnv = {};
  const removed: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue;
    if (!keep.has(name) && isSecretName(name)) removed.push(name);
    else out[name] = value;
  }
  return { env: out, removed: removed.sort() };
}

/**
 * Variables npm sets for its own run of `npm start` that describe mini-cursor, not the user's
 * project: inherited, they would silence npm in the agent's commands (loglevel=silent), point
 * npm at mini-cursor's folder, or pass our Jest flag to every node program.
 */
const NPM_RUN_VARIABLES = [
  /^npm_lifecycle_/,
  /^npm_package_/,
  /^npm_(command|execpath|node_execpath)$/,
  /^npm_config_(loglevel|local_prefix|node_options|user_agent|npm_version)$/,
  /^INIT_CWD$/,
];

/** The environment without what `npm start` added for itself (see NPM_RUN_VARIABLES). */
export function withoutNpmRunVariables(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  if (!env.npm_lifecycle_event) return env;
  const out: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(env)) {
    if (NPM_RUN_VARIABLES.some((pattern) => pattern.test(name))) continue;
    // npm copies its node-options setting (our .npmrc) into NODE_OPTIONS.
    if (name === "NODE_OPTIONS" && value === env.npm_config_node_options) continue;
    out[name] = value;
  }
  return out;
}

/**
 * The environment a command gets: `env` (the process's as it started) without npm's run
 * variables and without secret-looking ones but those passed through by name.
 */
export function childEnvironment(passEnv: readonly string[], env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return scrubEnvironment(withoutNpmRunVariables(env), passEnv).env;
}

/**
 * Values redacted from everything the tools return, save or print: those of secret-looking
 * variables (isSecretName) in the environment and in the workspace's `.env` (read here, not
 * loaded into the environment). process.env is left as is: deleting a variable there would not
 * change the kernel's copy (/proc/<pid>/environ), and commands get an explicitly scrubbed one.
 */
export function secretValues(workspace: string, env: NodeJS.ProcessEnv): string[] {
  const values: string[] = [];
  const collect = (vars: Record<string, string | undefined>) => {
    for (const [name, value] of Object.entries(vars)) {
      if (!value || !isSecretName(name)) continue;
      // A URL or conninfo carrying a password (a database URL such as MINI_CURSOR_CHECKPOINTER's) is
      // named in messages with the password masked by its shape: the password is the secret value.
      values.push(...(shapedPasswords(value) ?? [value.trim()]));
    }
  };
  collect(env);
  try {
    // Not followed, not waited on: a link or a FIFO named .env in the workspace is not read.
    collect(parseDotenv(readRegularFileSync(path.join(workspace, ".env"), { maxBytes: MAX_CONFIG_BYTES })));
  } catch {
    // no .env in the workspace
  }
  return [...new Set(values.filter(Boolean))];
}
