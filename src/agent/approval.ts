import type { ApprovalMode } from "../settings.js";
import { dangerReason } from "./danger.js";

/** Tools that change files; they ask only in `suggest` mode. */
const EDIT_TOOLS = new Set(["write_file", "edit_file"]);
/** Tools that run commands; they ask in `suggest` and `auto-edit`. */
const COMMAND_TOOLS = new Set(["execute_command"]);

export interface ToolCallLike {
  name: string;
  args: Record<string, unknown>;
}

/**
 * The key an "always" answer is remembered under: the tool, and for commands the program,
 * so "always" for `npm test` also allows `npm run build` but not `rm`.
 */
export function alwaysKey(call: ToolCallLike): string {
  if (COMMAND_TOOLS.has(call.name)) {
    const program = String(call.args.command ?? "").trim().split(/\s+/)[0] ?? "";
    return `${call.name}:${program}`;
  }
  return call.name;
}

/** Why this call must be approved, or null when it may run. Pure, so both engines share it. */
export function approvalReason(call: ToolCallLike, mode: ApprovalMode, always: readonly string[]): string | null {
  if (COMMAND_TOOLS.has(call.name)) {
    const danger = dangerReason(String(call.args.command ?? ""));
    if (danger) return `dangerous command: ${danger}`;
    if (mode === "full-auto" || always.includes(alwaysKey(call))) return null;
    return `runs a shell command (approval mode ${mode})`;
  }
  if (EDIT_TOOLS.has(call.name)) {
    if (mode !== "suggest" || always.includes(alwaysKey(call))) return null;
    return "changes a file (approval mode suggest)";
  }
  return null;
}

/** The tool result a declined call gets, so the model knows it did not run and why. */
export function deniedMessage(name: string, feedback?: string): string {
  const base = `The user declined this ${name} call; it was not run.`;
  return feedback ? `${base} Their feedback: ${feedback}` : `${base} Do something else or ask the user.`;
}

/** Feedback for a call declined because nobody can be asked (stdin is not a terminal). */
export const NON_INTERACTIVE_FEEDBACK =
  "approval was needed but stdin is not a terminal, so nobody could be asked. Run mini-cursor with --approval full-auto to allow such calls (dangerous commands still need a person).";
