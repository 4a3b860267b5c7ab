import { randomBytes, timingSafeEqual } from "node:crypto";

/**
 * The Studio approval code. LangGraph's dev server API has no authentication: any process on
 * the machine — a "dev server" the agent itself started — could search for interrupted threads
 * and resume them with {decision: "approve"}. So under Studio an approval counts only when the
 * resume carries this code. It is made in the server's memory when the graph loads and printed
 * to the server's terminal; it is never put in an environment (commands get theirs scrubbed
 * anyway) or in a file. In the sandbox a command cannot see the server's process at all.
 */

const SECRET_BYTES = 12;

export function createStudioSecret(): string {
  return randomBytes(SECRET_BYTES).toString("base64url");
}

export function sameSecret(given: unknown, secret: string): boolean {
  if (typeof given !== "string") return false;
  const a = Buffer.from(given);
  const b = Buffer.from(secret);
  return a.length === b.length && timingSafeEqual(a, b);
}

export const STUDIO_APPROVE_WITH =
  'Resume with {"decision": "approve", "secret": "<the approval code printed by npm run studio>"} (or "always"); {"decision": "deny"} needs no code.';

export const STUDIO_SECRET_MISSING =
  "the approval did not carry the Studio approval code (printed in the terminal running npm run studio), so it was treated as a refusal";

/** The line the dev server prints once the graph is loaded. */
export function studioSecretNotice(secret: string): string {
  return `mini-cursor: Studio approval code: ${secret}\n  To approve a call in Studio, resume with {"decision": "approve", "secret": "${secret}"}.\n`;
}
