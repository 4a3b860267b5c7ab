import { AIMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { toolCall } from "./offline-read-first.js";

/**
 * The offline model's use of the `task` tool (issue 32 item 5), so a newcomer can watch a
 * sub-agent without a key: "explore <request>" (or "explore: <request>") hands `<request>` to an
 * explore sub-agent, which the offline model then plays as it plays any request (it reads, lists,
 * runs); its report comes back as the parent's answer. Only where the `task` tool is bound: a
 * sub-agent has none, so it never delegates again.
 */

const EXPLORE = /^\s*explore\s*[:：]?\s+([\s\S]+)$/i;

/** The parent's turn for an "explore …" request: the task call, then the report as the answer; undefined for any other request. */
export function offlineTaskTurn(
  request: string,
  sinceRequest: readonly BaseMessage[],
  hasTool: (name: string) => boolean,
): AIMessage | undefined {
  const brief = EXPLORE.exec(request)?.[1]?.trim();
  if (!brief || !hasTool("task")) return undefined;
  const report = sinceRequest.filter(ToolMessage.isInstance).find((m) => m.name === "task");
  if (report) {
    const text = typeof report.content === "string" ? report.content : JSON.stringify(report.content);
    return new AIMessage({ content: `The explore sub-agent reported:\n${text}` });
  }
  return new AIMessage({
    content: "",
    tool_calls: [
      toolCall("task", { description: `Explore: ${brief.slice(0, 60)}`, prompt: brief, subagent_type: "explore" }),
    ],
  });
}
