import { ToolMessage } from "@langchain/core/messages";
import type { EventSignal } from "../contracts/events.js";
import { isArgumentsObject } from "../contracts/tools.js";
import type { ToolArtifact } from "../contracts/tools.js";
import { withThousands } from "../thousands.js";
import { isRefusal, toolErrorMessage, ToolFailure } from "./failure.js";
import { redactorFor, redactValue } from "../workspace/redact.js";
import { dispatchOf, type Guard } from "./guard.js";

/**
 * The guard every tool of a toolset runs inside (tools/index.ts), so a result is the same in
 * both engines, in Studio's state and for the model:
 * - a refusal: a tool that cannot do what it was asked throws a ToolFailure with the text the
 *   model should read (or a path or file system error, tools/errors.ts `isRefusal`); it becomes
 *   a result with status "error" (the trace's ✗, `--json`), its details in the artifact. Any other throw is left to the engine: LangGraph's ToolNode turns it
 *   into an error result ("Error: … Please fix your mistakes."), the loop does the same by hand;
 * - secrets: the known secret values are blanked in results, artifacts and refusals, and in the
 *   message of anything else thrown;
 * - size: a result longer than MAX_TOOL_RESULT_CHARS keeps its start and end;
 * - the todo list a write_todos result carries becomes the thread's (the state update).
 */

/**
 * The most characters one result keeps, far above every built-in tool's own limit (they cut
 * their output where it makes sense for them); a guard for tools without one (MCP servers').
 */
export const MAX_TOOL_RESULT_CHARS = 200_000;
/** Of a cut result: how much of its start is kept (the rest of the budget is its end). */
const HEAD_SHARE = 0.5;

export function capped(text: string): string {
  if (text.length <= MAX_TOOL_RESULT_CHARS) return text;
  const head = Math.floor(MAX_TOOL_RESULT_CHARS * HEAD_SHARE);
  const tail = MAX_TOOL_RESULT_CHARS - head;
  const cut = text.length - head - tail;
  return `${text.slice(0, head)}\n\n[… ${withThousands(cut)} characters not shown: the result was longer than ${withThousands(MAX_TOOL_RESULT_CHARS)} characters …]\n\n${text.slice(-tail)}`;
}

/** The guard that shapes results, for a toolset whose results must not show `secrets`. */
export function resultsGuard(secrets: readonly string[] = []): Guard {
  const redactor = redactorFor(secrets);
  const clean = <V>(value: V): V => (redactor.active ? redactValue(value, redactor) : value);
  return async ({ call, config, update }, next) => {
    let result: ToolMessage;
    try {
      result = await next();
    } catch (err) {
      // A refusal is the call's result; after a cancellation only the tool's own (a ToolFailure) is.
      if (!(err instanceof ToolFailure) && (!isRefusal(err) || config.signal?.aborted)) {
        // Cancelled, or a tool's own bug: the engine decides (ToolNode's error result, the loop's).
        // Only when it holds a secret: an AbortError's message cannot be set (a DOMException's getter).
        if (err instanceof Error && clean(err.message) !== err.message) err.message = clean(err.message);
        throw err;
      }
      const given = err instanceof ToolFailure ? err.details : {};
      const details = Object.keys(given).length > 0 ? clean(given) : undefined;
      return new ToolMessage({
        tool_call_id: call.id,
        name: call.name,
        status: "error",
        content: capped(clean(toolErrorMessage(err))),
        ...(details ? { artifact: details } : {}),
      });
    }
    result.content = capped(clean(textOf(result)));
    result.artifact = clean(result.artifact);
    const todos = (result.artifact as ToolArtifact | undefined)?.todos;
    if (result.status !== "error" && Array.isArray(todos)) update.todos = todos;
    return result;
  };
}

/**
 * What the model reads with a result besides the tool's own text:
 * - an edited call's result starts by saying the person edited it and what ran (the saved turn
 *   keeps the model's arguments: the note is how the model learns of the edit);
 * - from the third identical turn in a row, the turn's last result says the model is repeating
 *   itself (the loop guard's note), and the trace is told (a `loop_guard` event).
 */
export const notesGuard: Guard = async (context, next) => {
  const { edited, repeats } = dispatchOf(context);
  let result = await next();
  if (edited) result = withEditNote(result, context.call.args);
  if (repeats) {
    context.config.writer?.({ kind: "event", event: { type: "loop_guard", ...repeats } } satisfies EventSignal);
    result = withNotes(result, [repeats.message]);
  }
  return result;
};

/** A result's content as text (content blocks as their JSON). */
export const textOf = (result: ToolMessage): string =>
  typeof result.content === "string" ? result.content : JSON.stringify(result.content);

/** The result with `notes` after its text, each after a blank line. */
export function withNotes(result: ToolMessage, notes: readonly string[]): ToolMessage {
  if (notes.length === 0) return result;
  return new ToolMessage({
    id: result.id,
    tool_call_id: result.tool_call_id,
    name: result.name,
    status: result.status,
    content: [textOf(result), ...notes].join("\n\n"),
    artifact: result.artifact,
  });
}

/** The most characters of the edited arguments the model's note repeats (a write_file's content can be large). */
export const MAX_EDIT_NOTE_CHARS = 4_000;

/** Keys sorted at every level, so two argument objects compare by content. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    isArgumentsObject(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b))) : v,
  );
}

export function sameArguments(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  return canonicalJson(a) === canonicalJson(b);
}

/** The edited arguments as the notes show them, cut at MAX_EDIT_NOTE_CHARS. */
export function shownArguments(args: Record<string, unknown>): string {
  const json = JSON.stringify(args);
  return json.length <= MAX_EDIT_NOTE_CHARS
    ? json
    : `${json.slice(0, MAX_EDIT_NOTE_CHARS)}… (cut: ${json.length - MAX_EDIT_NOTE_CHARS} more characters)`;
}

/** What the model reads before the result of a call the person edited: that they did, and what ran. */
export function editNote(name: string, args: Record<string, unknown>): string {
  return `[The user edited this ${name} call before approving it. It ran with these arguments instead of yours: ${shownArguments(args)}]`;
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
