/** Settings from the environment, with the defaults used in development. */
export function loadConfig(env = process.env) {
  return {
    port: Number(env.NOTES_PORT ?? 3000),
    logLevel: env.NOTES_LOG_LEVEL ?? "info",
    databaseUrl: env.DATABASE_URL ?? "sqlite://data/notes.db",
    cacheTtlSeconds: Number(env.NOTES_CACHE_TTL ?? 300),
    allowSignup: (env.NOTES_ALLOW_SIGNUP ?? "true") === "true",
  };
}
