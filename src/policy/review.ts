import type { AIMessage, ToolMessage } from "@langchain/core/messages";
import type { StructuredToolInterface } from "@langchain/core/tools";
import type { ApprovalMode } from "../contracts/modes.js";
import { approvalScope, classifyCall, deniedMessage, type CallDecision } from "./approval.js";
import { notRunResult, refusedMessage } from "../guard/failure.js";
import type { ApprovalRequest, ApprovalResponse } from "../contracts/events.js";
import { checkEdit, refusedEditNote } from "./edit-call.js";

/**
 * The decision about one model turn's tool calls, the same in both engines: the approval mode,
 * the thread's "always" answers, the project rules and the command classifier decide each call;
 * calls that need a person are asked through `ask` — the graph passes LangGraph's `interrupt`,
 * the loop its approver. Calls are asked one at a time in the model's order (an interrupt
 * replays its earlier answers in that order when the node runs again). An answer may edit the
 * call: the edited call is judged again before it may run (settleCall).
 */

type ToolCall = NonNullable<AIMessage["tool_calls"]>[number];

export interface ReviewInput {
  calls: readonly ToolCall[];
  /** Ids of calls that already have a result (malformed, unknown tool): not judged. */
  answered: ReadonlySet<string>;
  mode: ApprovalMode;
  /** The thread's "always" keys so far. */
  always: readonly string[];
  workspace: string;
  /** The toolset: what each tool declares, and the schema an edit is checked against. */
  tools: readonly StructuredToolInterface[];
  /** What a call would change (a diff), for the question; undefined when its tool has no preview. */
  preview?: (call: ToolCall) => Promise<string | undefined> | undefined;
  /** The trust store and the user's MCP config (AgentRuntime.configFiles). */
  configFiles?: { trustStore: string; mcpUserConfig: string };
  ask: (request: ApprovalRequest, decision: CallDecision) => Promise<ApprovalResponse> | ApprovalResponse;
}

export interface ReviewOutcome {
  /** Results for the calls that will not run (declined, refused by a rule), in call order. */
  declined: ToolMessage[];
  /** "always" keys this turn's answers added (for the thread's state). */
  alwaysAdded: string[];
  /** Calls the person edited and approved: the arguments that run instead of the model's, by call id. */
  edits: Record<string, Record<string, unknown>>;
}

/** The question about one call as asked: the call shown (the model's, or the person's edit of it) and why. */
async function questionFor(
  input: ReviewInput,
  call: ToolCall,
  decision: CallDecision,
  extra: Partial<ApprovalRequest> = {},
): Promise<ApprovalRequest> {
  const request: ApprovalRequest = {
    toolCallId: call.id!,
    tool: call.name,
    args: call.args,
    reason: decision.reason!,
    ...approvalScope(decision),
    ...extra,
  };
  const preview = await input.preview?.(call);
  if (preview) request.preview = preview;
  return request;
}

/** The decision about one call in the review's mode, workspace and toolset. */
function judge(input: ReviewInput, call: ToolCall, always: readonly string[]): Promise<CallDecision> {
  const { workspace, tools, configFiles } = input;
  return classifyCall(call, input.mode, always, { workspace, tools, configFiles });
}

/** What a reviewed call comes to: its result if it will not run, the "always" keys to add, the arguments an edit gave it. */
interface CallOutcome {
  declined?: ToolMessage;
  alwaysKeys?: string[];
  editedArgs?: Record<string, unknown>;
}

/**
 * Asks about one call until the answer settles it. An edit is checked against the tool's schema
 * (a bad one asks again, saying why) and then judged as a call of its own, with the same
 * classifier, rules, protected paths and plan mode: refused there, it is refused; asking in
 * every mode (dangerous, a protected path), it is asked about again, showing the edited call;
 * otherwise the edit was its approval. An edit equal to the call shown is an approval of it.
 */
async function settleCall(
  input: ReviewInput,
  call: ToolCall,
  first: CallDecision,
  always: readonly string[],
): Promise<CallOutcome> {
  let shown = call;
  let decision = first;
  let request = await questionFor(input, call, decision);
  for (;;) {
    const response = await input.ask(request, decision);
    const edited = shown === call ? undefined : shown.args;
    if (response.decision === "deny") {
      const context = { reason: decision.reason, alwaysAsks: decision.alwaysAsks, mode: input.mode };
      return { declined: notRunResult(call, deniedMessage(call.name, response, context)) };
    }
    if (response.decision !== "edit") {
      const always = response.decision === "always" || response.decision === "always-project";
      return { alwaysKeys: always && !decision.alwaysAsks ? decision.alwaysKeys : [], editedArgs: edited };
    }
    const check = checkEdit(shown, response.args, input.tools);
    if (!check.ok) {
      request = { ...request, editError: check.error, ...(response.args ? { editDraft: response.args } : {}) };
      continue;
    }
    if (check.unchanged) return { alwaysKeys: [], editedArgs: edited };
    const next = { ...call, args: check.args };
    const verdict = await judge(input, next, always);
    if (verdict.action === "deny")
      return {
        declined: notRunResult(
          call,
          `${refusedEditNote(call.name, check.args)}\n${refusedMessage(call.name, verdict.reason!)}`,
        ),
      };
    if (verdict.action === "ask" && verdict.alwaysAsks) {
      shown = next;
      decision = verdict;
      request = await questionFor(input, next, verdict, { edited: true });
      continue;
    }
    return { alwaysKeys: [], editedArgs: check.args };
  }
}

export async function reviewToolCalls(input: ReviewInput): Promise<ReviewOutcome> {
  const always = [...input.always];
  const alwaysAdded: string[] = [];
  const declined: ToolMessage[] = [];
  const edits: ReviewOutcome["edits"] = {};
  for (const call of input.calls) {
    if (input.answered.has(call.id!)) continue;
    const decision = await judge(input, call, always);
    if (decision.action === "run") continue;
    if (decision.action === "deny") {
      // Denied by the project rules: refused without asking.
      declined.push(notRunResult(call, refusedMessage(call.name, decision.reason!)));
      continue;
    }
    const outcome = await settleCall(input, call, decision, always);
    if (outcome.declined) declined.push(outcome.declined);
    if (outcome.editedArgs) edits[call.id!] = outcome.editedArgs;
    always.push(...(outcome.alwaysKeys ?? []));
    alwaysAdded.push(...(outcome.alwaysKeys ?? []));
  }
  return { declined, alwaysAdded, edits };
}
