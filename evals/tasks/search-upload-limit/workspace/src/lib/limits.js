/** Largest request body the server reads at all (uploads have their own, smaller limit). */
export const MAX_BODY_BYTES = 100 * 1024 * 1024;
/** Requests per minute per token. */
export const RATE_LIMIT_PER_MINUTE = 120;
