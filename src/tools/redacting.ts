import type { StructuredToolInterface } from "@langchain/core/tools";
import { redactorFor, redactValue } from "../security/redact.js";
import { ToolFailure } from "./errors.js";

type ToolFunc = (...args: unknown[]) => Promise<unknown>;

/**
 * Every tool's result passes through redaction of the known secret values before the model
 * (or a saved thread) sees it: read_file of `.env`, search_files over it, a diff that shows it.
 * Wraps the tool's function in place, so the tool keeps its name, schema and extras (preview).
 */
export function withRedaction<T extends StructuredToolInterface>(tool: T, secrets: readonly string[]): T {
  const redactor = redactorFor(secrets);
  const target = tool as unknown as { func?: ToolFunc };
  if (!redactor.active || typeof target.func !== "function") return tool;
  const original = target.func.bind(tool);
  target.func = async (...args: unknown[]) => {
    try {
      return redactValue(await original(...args), redactor);
    } catch (err) {
      // A failed command's output reaches the model as the failure's text: redact it the same way.
      if (err instanceof ToolFailure) throw new ToolFailure(redactValue(err.message, redactor) as string, err.details);
      throw err;
    }
  };
  return tool;
}
