import { ToolMessage } from "@langchain/core/messages";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { PathError } from "../workspace/paths.js";

/**
 * Tool failures. A tool that cannot do what it was asked throws a ToolFailure with the text the
 * model should read (or lets any other error escape); `withToolErrors`, applied to every tool by
 * createTools, turns either into a ToolMessage with status "error". So the trace's ✗, the
 * `--json` tool_result status, Studio's state and the model all see the same typed status, and
 * nobody guesses it from the first word of the text.
 */

/** What a failed call carries besides its text (in the ToolMessage's artifact). */
export interface FailureDetails {
  /** A command's exit code (execute_command). */
  exitCode?: number | null;
}

export class ToolFailure extends Error {
  override name = "ToolFailure";
  constructor(
    message: string,
    readonly details: FailureDetails = {},
  ) {
    super(message);
  }
}

/** Turns anything a tool threw into text for the model. */
export function toolErrorMessage(err: unknown): string {
  if (err instanceof ToolFailure) return err.message;
  if (err instanceof PathError) return err.message;
  const e = err as NodeJS.ErrnoException;
  switch (e?.code) {
    case "EACCES":
    case "EPERM":
      return `Error: permission denied (${e.path ?? "path"}).`;
    case "ENOSPC":
      return "Error: no space left on the device.";
    case "EISDIR":
      return "Error: that path is a directory.";
    default:
      return `Error: ${e?.message ?? String(err)}`;
  }
}

interface ToolCallInput {
  id?: string;
  type?: string;
}

function toolCallId(input: unknown, config: unknown): string | undefined {
  const call = input as ToolCallInput | undefined;
  if (call && typeof call === "object" && call.type === "tool_call" && call.id) return call.id;
  return (config as { toolCall?: ToolCallInput } | undefined)?.toolCall?.id;
}

/**
 * The one owner of tool errors: a failure never crashes the run, it becomes a result the model
 * reads, with status "error". Called with a tool call (engines, ToolNode, Studio) it returns a
 * ToolMessage; called with bare arguments (tests, scripts) it returns the text. An error after
 * the run was cancelled is passed on, so the engines see the cancellation.
 */
export function withToolErrors<T extends StructuredToolInterface>(tool: T): T {
  const invoke = tool.invoke.bind(tool);
  const guarded = async (input: unknown, config?: { signal?: AbortSignal }) => {
    try {
      return await invoke(input as never, config as never);
    } catch (err) {
      if (!(err instanceof ToolFailure) && config?.signal?.aborted) throw err;
      const content = toolErrorMessage(err);
      const id = toolCallId(input, config);
      if (!id) return content;
      const artifact = err instanceof ToolFailure && Object.keys(err.details).length > 0 ? err.details : undefined;
      return new ToolMessage({ tool_call_id: id, name: tool.name, status: "error", content, ...(artifact ? { artifact } : {}) });
    }
  };
  return Object.assign(tool, { invoke: guarded as T["invoke"] });
}
