import { ToolMessage } from "@langchain/core/messages";
import { PathError } from "../workspace/paths.js";

/**
 * Tool failures. A tool that cannot do what it was asked throws a ToolFailure with the text the
 * model should read (or lets any other error escape); the results guard (guard/results.ts) turns
 * a refusal into a ToolMessage with status "error", and the engine any other error. So the
 * trace's ✗, the `--json` tool_result status, Studio's state and the model all see the same typed
 * status, and nobody guesses it from the first word of the text.
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

/**
 * Whether a tool's throw is a refusal the model should read as it is (a ToolFailure, a path
 * outside the workspace, a file system error such as EACCES or ENOSPC) rather than a bug, which
 * the engine turns into its generic error result (LangGraph's ToolNode, the loop by hand).
 */
export function isRefusal(err: unknown): boolean {
  return (
    err instanceof ToolFailure || err instanceof PathError || typeof (err as NodeJS.ErrnoException)?.code === "string"
  );
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

/** The closing sentence of a refusal by a rule or a hook: it speaks to the model. */
export const DO_NOT_GET_AROUND = "Do not try to get around the rule; do something else or ask the user.";

/** The tool result of a call the project rules or a hook refused (nobody was asked). */
export function refusedMessage(name: string, reason: string): string {
  return `Refused: this ${name} call was not run, because ${reason}. ${DO_NOT_GET_AROUND}`;
}

/**
 * The result message of a call that was not run (declined, refused): status "error", and
 * `notRun` in its artifact so the trace, `--json` and the run's outcome can tell it from a
 * call that ran and failed.
 */
export function notRunResult(call: { id?: string; name: string }, content: string): ToolMessage {
  return new ToolMessage({
    tool_call_id: call.id!,
    name: call.name,
    status: "error",
    content,
    artifact: { notRun: true },
  });
}

/**
 * The result of a call whose tool threw: the text LangGraph's ToolNode makes of it, which the
 * guard writes itself (guard.ts `guardTool`; a refusal the tool meant for the model is a result
 * already, guard/results.ts).
 */
export function toolErrorResult(call: { id?: string; name: string }, err: unknown): ToolMessage {
  return new ToolMessage({
    tool_call_id: call.id ?? "",
    name: call.name,
    status: "error",
    content: `Error: ${(err as Error)?.message ?? String(err)}\n Please fix your mistakes.`,
  });
}
