import type { StructuredToolInterface } from "@langchain/core/tools";
import { redactorFor, redactValue } from "../security/redact.js";

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
  target.func = async (...args: unknown[]) => redactValue(await original(...args), redactor);
  return tool;
}
