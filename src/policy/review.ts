import type { AIMessage, ToolMessage } from "@langchain/core/messages";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { previewToolCall } from "../tools/preview.js";
import type { ApprovalMode } from "../settings.js";
import {
  approvalScope,
  classifyCall,
  deniedMessage,
  notRunResult,
  refusedMessage,
  type CallDecision,
} from "./approval.js";
import type { ApprovalRequest, ApprovalResponse } from "../agent/events.js";

/**
 * The decision about one model turn's tool calls, the same in both engines: the approval mode,
 * the thread's "always" answers, the project rules and the command classifier decide each call;
 * calls that need a person are asked through `ask` — the graph passes LangGraph's `interrupt`,
 * the loop its approver. Calls are asked one at a time in the model's order (an interrupt
 * replays its earlier answers in that order when the node runs again).
 */

type ToolCall = NonNullable<AIMessage["tool_calls"]>[number];

export interface ReviewInput {
  /** The model turn whose calls are judged. */
  calls: readonly ToolCall[];
  /** Ids of calls that already have a result (malformed, unknown tool): not judged. */
  answered: ReadonlySet<string>;
  mode: ApprovalMode;
  /** The thread's "always" keys so far. */
  always: readonly string[];
  workspace: string;
  /** For previews (a diff of what an edit would change). */
  tools: readonly StructuredToolInterface[];
  threadId?: string;
  /** The trust store and the user's MCP config (AgentRuntime.configFiles). */
  configFiles?: { trustStore: string; mcpUserConfig: string };
  /** Asks whoever decides; returns their answer. */
  ask: (request: ApprovalRequest, decision: CallDecision) => Promise<ApprovalResponse> | ApprovalResponse;
}

export interface ReviewOutcome {
  /** Results for the calls that will not run (declined, refused by a rule), in call order. */
  declined: ToolMessage[];
  /** "always" keys this turn's answers added (for the thread's state). */
  alwaysAdded: string[];
}

export async function reviewToolCalls(input: ReviewInput): Promise<ReviewOutcome> {
  const always = [...input.always];
  const alwaysAdded: string[] = [];
  const declined: ToolMessage[] = [];
  for (const call of input.calls) {
    if (input.answered.has(call.id!)) continue;
    const decision = await classifyCall(call, input.mode, always, {
      workspace: input.workspace,
      tools: input.tools,
      configFiles: input.configFiles,
    });
    if (decision.action === "run") continue;
    if (decision.action === "deny") {
      // Denied by the project rules: refused without asking.
      declined.push(notRunResult(call, refusedMessage(call.name, decision.reason!)));
      continue;
    }
    const request: ApprovalRequest = {
      toolCallId: call.id!,
      tool: call.name,
      args: call.args,
      reason: decision.reason!,
      ...approvalScope(decision),
    };
    const preview = await previewToolCall(input.tools, call, input.threadId);
    if (preview) request.preview = preview;
    const response = await input.ask(request, decision);
    if (response.decision === "deny") {
      declined.push(
        notRunResult(
          call,
          deniedMessage(call.name, response, {
            reason: decision.reason,
            alwaysAsks: decision.alwaysAsks,
            mode: input.mode,
          }),
        ),
      );
    } else if ((response.decision === "always" || response.decision === "always-project") && !decision.alwaysAsks) {
      always.push(...decision.alwaysKeys);
      alwaysAdded.push(...decision.alwaysKeys);
    }
  }
  return { declined, alwaysAdded };
}
