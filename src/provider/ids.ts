import { randomInt } from "node:crypto";

const ID_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
/**
 * Mistral rejects tool-call ids that are not exactly 9 characters from [a-zA-Z0-9]
 * (mistral-common's validation: "Tool call id was ... but must be a-z, A-Z, 0-9, with a length
 * of 9"); every other provider accepts such ids, so made-up ones always have this shape.
 */
export const MADE_UP_ID_LENGTH = 9;

/** A tool-call id for a call the provider sent without one. */
export function makeToolCallId(): string {
  let id = "";
  for (let i = 0; i < MADE_UP_ID_LENGTH; i++) id += ID_ALPHABET[randomInt(ID_ALPHABET.length)];
  return id;
}

/** `""` and `"null"` (GLM and some gateways on continuation chunks) mean no id. */
export function realId(id: unknown): string | undefined {
  if (typeof id !== "string") return undefined;
  const trimmed = id.trim();
  return trimmed === "" || trimmed === "null" || trimmed === "undefined" ? undefined : trimmed;
}
