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
