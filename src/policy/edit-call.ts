import type { StructuredToolInterface } from "@langchain/core/tools";
import { canonicalArguments } from "../tools/aliases.js";
import { argumentsRefusalOf } from "../tools/arguments.js";
import { isArgumentsObject } from "../contracts/tools.js";
import { sameArguments, shownArguments } from "../guard/results.js";

/**
 * A call the person edited at the approval question ("edit", with the arguments they wrote):
 * whether the edit can be used, and what the model is told about it. The review
 * (policy/review.ts) then judges the edited call as it judges any call.
 */

export type EditCheck = { ok: true; args: Record<string, unknown>; unchanged: boolean } | { ok: false; error: string };

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

/**
 * What the model reads before the refusal of an edit a rule refused (a deny rule, plan mode):
 * what the person wrote, and that neither their call nor the model's ran.
 */
export function refusedEditNote(name: string, args: Record<string, unknown>): string {
  return `[The user edited this ${name} call before approving it, to these arguments: ${shownArguments(args)}. Neither the edited call nor yours ran:]`;
}
