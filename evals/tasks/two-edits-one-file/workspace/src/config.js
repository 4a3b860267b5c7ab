// Defaults of the notes server; each can be overridden by an environment variable.

/** Where the server listens. */
export const host = process.env.NOTES_HOST ?? "127.0.0.1";
export const port = Number(process.env.NOTES_PORT ?? 3000);

/** How many notes one page of the list holds. */
export const pageSize = Number(process.env.NOTES_PAGE_SIZE ?? 50);

/** How long one request may take before it is answered with 503, in milliseconds. */
export const requestTimeoutMs = Number(process.env.NOTES_REQUEST_TIMEOUT_MS ?? 5000);

/** Log level: debug, info, warn or error. */
export const logLevel = process.env.NOTES_LOG_LEVEL ?? "info";
