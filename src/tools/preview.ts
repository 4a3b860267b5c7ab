import type { StructuredToolInterface } from "@langchain/core/tools";
import { AgentTool } from "./define.js";

/**
 * Previews for the approval prompt: what a call would change, computed without changing
 * anything (a unified diff for edit_file, apply_patch and write_file), so a person can judge it.
 * A tool declares its preview in its definition (ToolDefinition.preview).
 */

/** The preview of a call, if its tool defines one; never throws. */
export async function previewToolCall(
  tools: readonly StructuredToolInterface[],
  call: { name: string; args: Record<string, unknown> },
  threadId?: string,
): Promise<string | undefined> {
  const found = tools.find((t) => t.name === call.name);
  // Only a tool made from a definition can have one (ToolDefinition.preview); AgentTool.preview never throws.
  return found instanceof AgentTool ? found.preview(call.args, threadId) : undefined;
}

/** The diff a tool attached to its result (edit_file), for the trace; undefined otherwise. */
export function resultDiff(message: { artifact?: unknown }): string | undefined {
  const diff = (message.artifact as { diff?: unknown } | undefined)?.diff;
  return typeof diff === "string" && diff !== "" ? diff : undefined;
}
