import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import type { StructuredToolInterface } from "@langchain/core/tools";
import type { OfferedTool, ProviderCall, ToolCallEcho } from "./call-context.js";
import { ProviderError } from "./errors.js";
import { recoverTextToolCalls } from "./text-calls.js";

/**
 * The message side of the provider layer: provider fields kept on the AI message (so they
 * survive in saved threads) and read back for the next request, finish reasons a user must
 * hear about, and tool calls recovered from text.
 */

/** Where Gemini's per-call `extra_content` is kept on the AI message, by call id. */
export const EXTRA_CONTENT_KEY = "tool_call_extra_content";

/** wait: what a call is waiting for right now (a slow answer, a retry), for the spinner and --json. */
export type ProviderNote =
  | { kind: "thinking"; text: string }
  | { kind: "notice"; text: string }
  | { kind: "wait"; text: string };

/** What earlier assistant turns must carry back, by tool-call id. */
export function echoesOf(messages: readonly BaseMessage[]): Map<string, ToolCallEcho> {
  const echoes = new Map<string, ToolCallEcho>();
  for (const m of messages) {
    if (!AIMessage.isInstance(m) || !m.tool_calls?.length) continue;
    const kwargs = m.additional_kwargs as {
      reasoning_content?: unknown;
      [EXTRA_CONTENT_KEY]?: Record<string, unknown>;
    };
    const reasoning = typeof kwargs.reasoning_content === "string" ? kwargs.reasoning_content : undefined;
    for (const c of m.tool_calls) {
      if (!c.id) continue;
      const extra = kwargs[EXTRA_CONTENT_KEY]?.[c.id];
      if (reasoning === undefined && extra === undefined) continue;
      echoes.set(c.id, {
        ...(reasoning !== undefined ? { reasoning_content: reasoning } : {}),
        ...(extra !== undefined ? { extra_content: extra } : {}),
      });
    }
  }
  return echoes;
}

/** Stops the user must hear about: the provider's filter, or the output token limit. */
const FINISH_PROBLEMS = {
  content_filter:
    "The provider's content filter stopped the answer (finish_reason content_filter); rephrase the request or check the provider's content settings.",
  length:
    "The answer was cut off at the provider's output token limit (finish_reason length); ask for smaller steps, or raise the limit (max_tokens in MINI_CURSOR_EXTRA_BODY).",
} as const;

/** A stop the user must hear about, as the error that says it. */
export function finishProblem(message: BaseMessage): ProviderError | undefined {
  const finish = (message.response_metadata as { finish_reason?: unknown } | undefined)?.finish_reason;
  return finish === "content_filter" || finish === "length"
    ? new ProviderError(FINISH_PROBLEMS[finish], finish)
    : undefined;
}

/** The merged message with what the wire kept aside: per-call extras, and calls written as text. */
export function withProviderExtras(message: AIMessage, call: ProviderCall): AIMessage {
  const extras = call.response.extraContent;
  const calls = message.tool_calls ?? [];
  let additional_kwargs = message.additional_kwargs;
  const kept = Object.fromEntries(Object.entries(extras).filter(([id]) => calls.some((c) => c.id === id)));
  if (Object.keys(kept).length > 0) additional_kwargs = { ...additional_kwargs, [EXTRA_CONTENT_KEY]: kept };
  const text = typeof message.content === "string" ? message.content : "";
  const recovery =
    calls.length === 0 && (message.invalid_tool_calls ?? []).length === 0
      ? recoverTextToolCalls(text, call.offered)
      : undefined;
  if (!recovery && additional_kwargs === message.additional_kwargs) return message;
  if (recovery) {
    const names = recovery.calls.map((c) => c.name).join(", ");
    call.notices.push(
      `The model wrote ${recovery.calls.length === 1 ? "a tool call" : `${recovery.calls.length} tool calls`} as text (${recovery.form}); running ${names} as ${recovery.calls.length === 1 ? "a call" : "calls"}.`,
    );
  }
  return new AIMessage({
    id: message.id,
    content: recovery ? recovery.text : message.content,
    name: message.name,
    additional_kwargs,
    response_metadata: message.response_metadata,
    usage_metadata: message.usage_metadata,
    tool_calls: recovery ? recovery.calls.map((c) => ({ ...c, type: "tool_call" as const })) : message.tool_calls,
    invalid_tool_calls: message.invalid_tool_calls,
  });
}

/** The engine's tools as offered tools, checked by their own schemas. */
export function offeredTools(tools: readonly StructuredToolInterface[]): OfferedTool[] {
  return tools.map((tool) => {
    const schema = tool.schema as { safeParse?: (v: unknown) => { success: boolean } } | undefined;
    return typeof schema?.safeParse === "function"
      ? { name: tool.name, fits: (args: Record<string, unknown>) => schema.safeParse!(args).success }
      : { name: tool.name, parameters: tool.schema };
  });
}

/** The text parts of a message, joined (tool calls and images left out). */
export function messageText(message: BaseMessage): string {
  const content = message.content;
  if (typeof content === "string") return content;
  return content.map((p) => ("text" in p && typeof p.text === "string" ? p.text : "")).join("");
}
