import { ToolMessage } from "@langchain/core/messages";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { canonicalArguments } from "../tools/aliases.js";
import { argumentsRefusalOf } from "../tools/define.js";
import { isArgumentsObject } from "./approval-answer.js";

/**
 * A call the person edited at the approval question ("edit", with the arguments they wrote):
 * whether the edit can be used, and what the model is told about it. The review
 * (policy/review.ts) then judges the edited call as it judges any call.
 */

/** The most characters of the edited arguments the model's note repeats (a write_file's content can be large). */
export const MAX_EDIT_NOTE_CHARS = 4_000;

export type EditCheck = { ok: true; args: Record<string, unknown>; unchanged: boolean } | { ok: false; error: string };

/** Keys sorted at every level, so two argument objects compare by content. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    isArgumentsObject(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b))) : v,
  );
}

export function sameArguments(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  return canonicalJson(a) === canonicalJson(b);
}

/**
 * Checks an edit against the tool's schema, as a model's call is checked (other agents' argument
 * names are mapped first). `unchanged`: the edit is the call as shown, so it is an approval.
 */
export function checkEdit(
  call: { name: string; args: Record<string, unknown> },
  edited: unknown,
  tools: readonly StructuredToolInterface[],
): EditCheck {
  if (!isArgumentsObject(edited))
    return { ok: false, error: `the edit must be a JSON object of ${call.name}'s arguments` };
  const args = canonicalArguments(call.name, edited);
  const refusal = argumentsRefusalOf(
    tools.find((t) => t.name === call.name),
    args,
  );
  if (refusal) {
    // The refusal is worded for the model ("call it again"); the person gets what is wrong.
    const what = refusal.replace(/^Error: /, "").replace(/\nThe call was not run[\s\S]*$/, "");
    return { ok: false, error: `the edited arguments do not fit ${call.name}: ${what}` };
  }
  return { ok: true, args, unchanged: sameArguments(args, call.args) };
}

/** The edited arguments as the notes show them, cut at MAX_EDIT_NOTE_CHARS. */
function shownArguments(args: Record<string, unknown>): string {
  const json = JSON.stringify(args);
  return json.length <= MAX_EDIT_NOTE_CHARS
    ? json
    : `${json.slice(0, MAX_EDIT_NOTE_CHARS)}… (cut: ${json.length - MAX_EDIT_NOTE_CHARS} more characters)`;
}

/** What the model reads before the result of a call the person edited: that they did, and what ran. */
export function editNote(name: string, args: Record<string, unknown>): string {
  return `[The user edited this ${name} call before approving it. It ran with these arguments instead of yours: ${shownArguments(args)}]`;
}

/**
 * What the model reads before the refusal of an edit a rule refused (a deny rule, plan mode):
 * what the person wrote, and that neither their call nor the model's ran.
 */
export function refusedEditNote(name: string, args: Record<string, unknown>): string {
  return `[The user edited this ${name} call before approving it, to these arguments: ${shownArguments(args)}. Neither the edited call nor yours ran:]`;
}

/** The result of an edited call: the note first, then the tool's own result; the artifact carries the arguments for the trace. */
export function withEditNote(result: ToolMessage, args: Record<string, unknown>): ToolMessage {
  const note = editNote(result.name ?? "tool", args);
  const content =
    typeof result.content === "string"
      ? `${note}\n${result.content}`
      : [{ type: "text" as const, text: note }, ...(result.content as Array<Record<string, unknown>>)];
  // An artifact of another shape (an MCP server's) is kept as it is; the note says what ran.
  const artifact =
    result.artifact === undefined || isArgumentsObject(result.artifact)
      ? { ...(result.artifact ?? {}), editedArgs: args }
      : result.artifact;
  return new ToolMessage({
    id: result.id,
    tool_call_id: result.tool_call_id,
    name: result.name,
    status: result.status,
    content: content as ToolMessage["content"],
    artifact,
  });
}
