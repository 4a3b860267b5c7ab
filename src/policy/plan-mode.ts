import type { ApprovalMode } from "../contracts/modes.js";

/**
 * Plan mode (`--approval plan`, `/plan`): the model may look but not touch. Only tools that
 * declare kind "read" run (policy/effects.ts); every other call is refused without asking,
 * with a result that tells the model it is in plan mode. A tool that declares nothing (an MCP
 * server's, say) is refused until someone declares that it only reads.
 *
 * Commands are refused too, even those the read-only classifier would run in every other mode:
 * that list trusts things like `git log` and `ls`, but plan mode promises "nothing runs", and
 * read_file, list_directory, find_files and search_files cover what a plan needs to look at.
 */

/** Why a call is refused in plan mode (the refusal's reason, which the model reads), naming the tools that run there. */
export function planModeReason(tool: string, readTools: readonly string[]): string {
  return (
    `mini-cursor is in plan mode, where only ${readTools.join(", ")} run and nothing is changed or executed until the user accepts a plan. ` +
    `Put what this ${tool} call would do into the plan (write_todos) instead`
  );
}

/** Sent with every request made in plan mode: what the model must do, and that it lasts for this request. */
export const PLAN_MODE_NOTE = `[mini-cursor plan mode] For this request you are in plan mode: investigate with the read-only tools (read_file, list_directory, find_files, search_files) and make a plan; do not change files or run commands (such calls are refused). Write the plan as a todo list with write_todos (every item pending), then end with a short summary of the plan: what you found, what you will change and how you will verify it, and any question for the user. A later request without this note may carry out the plan.`;

/** The request that starts carrying out an accepted plan. */
export const PLAN_ACCEPTED_TASK = "Carry out the plan.";

/** Sent with that request: plan mode is over, in which approval mode the work now runs. */
export function planAcceptedNote(mode: ApprovalMode): string {
  return `[mini-cursor] The user accepted the plan above. Plan mode is over: every tool is available again (approval mode ${mode}). Carry out the plan now, marking each todo in_progress and then completed as you go.`;
}

/** Where mini-cursor's note starts in a request it was added to. */
const NOTE_SEPARATOR = "\n\n[mini-cursor";

/** The request text the model reads: the person's words, then mini-cursor's note for this request. */
export function withRequestNote(task: string, note: string | undefined): string {
  return note ? `${task}\n\n${note}` : task;
}

/** The person's words of a request, without the note withRequestNote added (for /rewind's list). */
export function requestTask(text: string): string {
  const at = text.indexOf(NOTE_SEPARATOR);
  return at === -1 ? text : text.slice(0, at);
}
