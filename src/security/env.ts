import { redactorFor } from "../workspace/redact.js";

export { isSecretName, parsePassEnv, scrubEnvironment, withoutNpmRunVariables } from "../secret-env.js";

/**
 * Replaces every occurrence of the given secret values (8 characters or longer), and of their
 * base64 and hex forms, in `text` (see redact.ts).
 */
export function redactSecrets(text: string, secrets: readonly string[]): string {
  return redactorFor(secrets).redact(text);
}
