import { PathError } from "../workspace/paths.js";

/**
 * Tool failures. A tool that cannot do what it was asked throws a ToolFailure with the text the
 * model should read (or lets any other error escape); the one tool wrapper (define.ts, AgentTool)
 * turns either into a ToolMessage with status "error". So the trace's ✗, the
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

/** Why a file whose name is not UTF-8 cannot be opened by a tool: every tool takes names as UTF-8 text. */
export const NOT_UTF8_NAME = "name is not valid UTF-8";

/** Whether `err` is the ENOENT of a name read from a folder with U+FFFD in it: its real name was not UTF-8. */
export function isNotUtf8Name(err: unknown, name: string): boolean {
  return (err as NodeJS.ErrnoException | undefined)?.code === "ENOENT" && name.includes("\uFFFD");
}
