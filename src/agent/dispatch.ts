import path from "node:path";
import type { AIMessage, BaseMessage, ToolMessage } from "@langchain/core/messages";
import type { ApprovalRequest } from "../contracts/events.js";
import type { ApprovalMode } from "../contracts/modes.js";
import { normalizeResponse } from "../policy/approval-answer.js";
import { reviewToolCalls } from "../policy/review.js";
import { isTaskCall } from "./subagents.js";
import { unrunnableCallResults } from "./turn.js";
import { stepsSinceLastRequest } from "../contracts/conversation.js";
import type { CallAccess, Dispatch, GuardedCall } from "../guard/guard.js";
import { checkRepeats, loopGuardReport } from "../guard/repeats.js";
import { mcpCallPaths } from "../mcp/paths.js";
import { callEffects, type ToolLike } from "../policy/effects.js";
import type { AgentRuntime } from "./runtime.js";
import { currentRequest, stepChanges, type StepChanges } from "./snapshot-step.js";

/**
 * Which of a turn's calls run, and how they are sent to their tools, the same in both engines
 * (the graph's approve node and its Send per call to the ToolNode; the loop's own calls):
 * - reviewTurn: the calls that cannot run at all are answered (arguments that are not JSON or do
 *   not fit, unknown tools), the review decides the rest (policy/review.ts: asked where needed,
 *   refused ones answered), and what is left runs: the tools, with the person's arguments where
 *   they edited a call, and the `task` calls, whose sub-agents run after them;
 * - dispatchCalls: with each call that runs, what the guards need to know about the turn
 *   (guard/guard.ts Dispatch): the calls that run together and what each touches (the order),
 *   the request and step, whether the person edited the call, and on the last the loop guard's note.
 */

type ToolCall = NonNullable<AIMessage["tool_calls"]>[number];

/** What one call touches, from what its tool declares; paths resolved against the workspace. */
export function accessOf(call: GuardedCall, tools: readonly ToolLike[], workspace: string): CallAccess {
  const effects = callEffects(call, tools);
  return {
    writes: effects.kind !== "read",
    // A tool that declares no kind (an MCP server's) touches the paths its call names, or anything.
    paths: (effects.kind ? effects.paths : mcpCallPaths(call, tools))?.map((p) => path.resolve(workspace, p)),
    ...(effects.kind === "execute" ? { command: true } : {}),
  };
}

const withChanges = (changes: StepChanges) => (changes ? { changes } : {});

/**
 * Each call that runs with its dispatch. `calls` are the calls as they run (the person's
 * arguments where edited), in the model's order; `messages` the conversation up to the turn.
 */
export function dispatchCalls(
  runtime: AgentRuntime,
  messages: readonly BaseMessage[],
  calls: readonly ToolCall[],
  model: readonly ToolCall[],
): Array<{ call: ToolCall; dispatch: Dispatch }> {
  const batch = calls.map((c) => ({
    id: c.id!,
    access: accessOf({ id: c.id!, name: c.name, args: c.args }, runtime.tools, runtime.workspace),
    ...withChanges(stepChanges(runtime.workspace, [c], runtime.tools)),
  }));
  const step = stepsSinceLastRequest(messages);
  const request = currentRequest(messages);
  // From the third identical turn in a row, the model is told it is repeating itself.
  const check = checkRepeats(messages);
  const note =
    check.action === "note" ? { ...loopGuardReport(check, step, "note"), action: "note" as const } : undefined;
  const asked = new Map(model.map((c) => [c.id, c.args]));
  const turn = model.map((c) => c.id ?? "").join(",");
  return calls.map((call, i) => ({
    call,
    dispatch: {
      turn,
      batch,
      step,
      ...(request ? { request } : {}),
      ...(asked.get(call.id) !== call.args ? { edited: true as const } : {}),
      ...(note && i === calls.length - 1 ? { repeats: note } : {}),
    },
  }));
}

export interface ReviewTurnInput {
  runtime: AgentRuntime;
  message: AIMessage;
  mode: ApprovalMode;
  /** The thread's "always" keys so far. */
  always: readonly string[];
  /** The conversation the calls belong to (a diff's preview reads what it has seen). */
  conversation?: string;
  /**
   * Gets an answer from whoever decides: the graph's interrupt (under Studio, with the one-time
   * code checked, graph/studio-secret.ts), the loop's approver. Whatever comes back is read with
   * normalizeResponse: an answer the engines do not know is a denial.
   */
  ask: (request: ApprovalRequest) => unknown;
}

export interface TurnReview {
  /** Results for the calls that will not run: those that cannot, then those declined or refused, in call order. */
  results: ToolMessage[];
  /** "always" keys this turn's answers added. */
  alwaysAdded: string[];
  /** The calls that run as tools, in the model's order, with the person's arguments where they edited one. */
  calls: ToolCall[];
  /** The `task` calls that start sub-agents, in the model's order. */
  tasks: ToolCall[];
}

export async function reviewTurn(input: ReviewTurnInput): Promise<TurnReview> {
  const { runtime, message } = input;
  const unrunnable = unrunnableCallResults(message, runtime.tools);
  const review = await reviewToolCalls({
    calls: message.tool_calls ?? [],
    answered: new Set(unrunnable.map((m) => m.tool_call_id)),
    mode: input.mode,
    always: input.always,
    workspace: runtime.workspace,
    tools: runtime.tools,
    preview: (call) => runtime.previews?.[call.name]?.(call.args, input.conversation),
    configFiles: runtime.configFiles,
    ask: async (request) => normalizeResponse(await input.ask(request)),
  });
  // Results reach the conversation in one order in both engines: declined or refused, then those that cannot run.
  const results = [...review.declined, ...unrunnable];
  const answered = new Set(results.map((m) => m.tool_call_id));
  const left = (message.tool_calls ?? []).filter((c) => !answered.has(c.id!));
  return {
    results,
    alwaysAdded: review.alwaysAdded,
    calls: left.filter((c) => !isTaskCall(c)).map((c) => ({ ...c, args: review.edits[c.id!] ?? c.args })),
    tasks: left.filter(isTaskCall),
  };
}
