import { AIMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { makeToolCallId } from "../provider/ids.js";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { canonicalArguments } from "../tools/aliases.js";
import { lastAIMessage } from "../contracts/conversation.js";
import { argumentsRefusalOf } from "../tools/arguments.js";

/** How much of a malformed argument string the model is shown back. */
const MAX_ECHOED_ARGS = 500;

/**
 * Models sometimes send tool-call arguments that are not JSON. LangChain keeps those in
 * `invalid_tool_calls`; we also list them as ordinary calls (with empty args) so each gets a
 * result and the conversation stays valid for the provider, and answer them with the error.
 * Arguments other agents name differently (`workdir`, `cmd`) get our names here, so approval,
 * the trace and the tool all see the same call.
 */
export function normalizeToolCalls(message: AIMessage): AIMessage {
  const invalid = message.invalid_tool_calls ?? [];
  const calls = (message.tool_calls ?? []).map((c) => ({
    ...c,
    id: c.id || makeToolCallId(),
    args: canonicalArguments(c.name, c.args),
  }));
  const same = calls.every(
    (c, i) =>
      c.id === message.tool_calls?.[i]?.id && JSON.stringify(c.args) === JSON.stringify(message.tool_calls?.[i]?.args),
  );
  if (invalid.length === 0 && same) return message;
  const fixedInvalid = invalid.map((c) => ({ ...c, id: c.id || makeToolCallId() }));
  return new AIMessage({
    id: message.id,
    content: message.content,
    additional_kwargs: message.additional_kwargs,
    response_metadata: message.response_metadata,
    usage_metadata: message.usage_metadata,
    tool_calls: [
      ...calls,
      ...fixedInvalid.map((c) => ({ id: c.id, name: c.name ?? "unknown", args: {}, type: "tool_call" as const })),
    ],
    invalid_tool_calls: fixedInvalid,
  });
}

/** Results for the calls whose arguments could not be parsed. */
export function invalidCallResults(message: AIMessage): ToolMessage[] {
  return (message.invalid_tool_calls ?? []).map(
    (c) =>
      new ToolMessage({
        tool_call_id: c.id!,
        name: c.name ?? "unknown",
        status: "error",
        content: `Error: the arguments of this ${c.name ?? "tool"} call are not valid JSON (${c.error ?? "parse error"}): ${String(c.args ?? "").slice(0, MAX_ECHOED_ARGS)}\nCall the tool again with a JSON object of arguments.`,
      }),
  );
}

/**
 * Results for the calls of a turn that cannot run at all (arguments that are not JSON or do not
 * fit, unknown tools): answered before approval, so no question is asked about them. A call
 * naming a tool we do not have gets a result listing the ones we do; one whose arguments do not
 * fit its tool (an unknown key, a missing or mistyped one) gets the tool's refusal.
 */
export function unrunnableCallResults(message: AIMessage, tools: readonly StructuredToolInterface[]): ToolMessage[] {
  const invalid = new Set((message.invalid_tool_calls ?? []).map((c) => c.id));
  const parsed = (message.tool_calls ?? []).filter((c) => !invalid.has(c.id));
  const names = tools.map((t) => t.name);
  const refused = (c: (typeof parsed)[number], content: string) =>
    new ToolMessage({ tool_call_id: c.id!, name: c.name, status: "error", content });
  return [
    ...invalidCallResults(message),
    ...parsed
      .filter((c) => !names.includes(c.name))
      .map((c) => refused(c, `Error: there is no tool named "${c.name}". Available tools: ${names.join(", ")}.`)),
    ...parsed.flatMap((c) => {
      const tool = tools.find((t) => t.name === c.name);
      const refusal = tool && argumentsRefusalOf(tool, c.args);
      return refusal ? [refused(c, refusal)] : [];
    }),
  ];
}

// Defined with the other message helpers of the provider layer, so context/ can use it too.
export { messageText } from "../provider/message.js";

/** Result text for calls cut off by Ctrl-C. */
export const INTERRUPTED_CALL_RESULT = "Interrupted by the user (Ctrl-C) before this call finished.";
/** What the model finds at the end of a turn the user cancelled. */
export const INTERRUPTED_NOTE =
  "(The user interrupted this turn with Ctrl-C. The work above may be incomplete; wait for their next request.)";

/**
 * Messages that close a cancelled turn: a result for each call that never got one, and a note
 * so the model knows, on the next request, that it was stopped rather than finished.
 */
export function interruptionMessages(messages: readonly BaseMessage[]): BaseMessage[] {
  const answered = new Set(messages.filter(ToolMessage.isInstance).map((m) => m.tool_call_id));
  const last = lastAIMessage(messages);
  const missing = (last?.tool_calls ?? []).filter((c) => c.id && !answered.has(c.id));
  return [
    ...missing.map(
      (c) => new ToolMessage({ tool_call_id: c.id!, name: c.name, status: "error", content: INTERRUPTED_CALL_RESULT }),
    ),
    new AIMessage({ content: INTERRUPTED_NOTE }),
  ];
}
