import type { BaseMessage } from "@langchain/core/messages";
import { MessagesZodMeta, type Messages } from "@langchain/langgraph";
import { withLangGraph } from "@langchain/langgraph/zod";
// zod's v3 API: its JSON schema export shows `messages` as an array instead of failing on the custom type.
import { z } from "zod/v3";

/**
 * The graph's state. Everything else the agent needs (settings, tools) is configuration,
 * not state, so a thread can be resumed under a different model or approval mode.
 *
 * A zod schema rather than an Annotation: the LangGraph dev server reads a zod state's JSON
 * schema at run time, where for an Annotation it type-checks the graph's sources first (13 to
 * 60 s before Studio can open the graph; BENCHMARKS.md).
 */
export const AgentState = z.object({
  /**
   * The conversation without the system prompt (it is rebuilt each call from the workspace and
   * date): user requests, model turns with their tool calls, and one tool result per call.
   */
  messages: withLangGraph(
    z.custom<BaseMessage[]>().describe("The conversation without the system prompt: user requests, model turns with their tool calls, and one tool result per call."),
    MessagesZodMeta,
  ),
  /**
   * Approvals answered with "always" in this thread, as keys from `alwaysKey` (a tool name, or
   * `execute_command:<rule>`, the exact command prefix shown, e.g. `git log -5`). Appended, never removed.
   */
  alwaysAllow: withLangGraph(
    z.array(z.string()).describe('Approvals answered with "always" in this thread (a tool name, or execute_command:<command prefix>). Appended, never removed.'),
    {
      reducer: { fn: (current: string[], update: string[]) => [...new Set([...current, ...update])] },
      default: () => [],
    },
  ),
});

export type AgentStateType = z.infer<typeof AgentState>;
export type AgentStateUpdate = Partial<{ messages: Messages; alwaysAllow: string[] }>;
