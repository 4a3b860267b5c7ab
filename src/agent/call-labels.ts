import type { AgentEvent, EventSink } from "./events.js";

/**
 * Labels the events that reach the trace outside the engines: a command's streamed output
 * (`tool_output`, from the tools' output callback) and a hook's outcome (`hook`, from the
 * session's hooks). Neither knows which sub-agent made the call, so they are labelled by the
 * call's id, learnt from the `tool_call` event the engine emitted before the call ran (its
 * `subagent` names the sub-agent). The parent's calls have no label and get none.
 */
export function labelCallEvents(sink: EventSink): EventSink {
  const subagentOfCall = new Map<string, string>();
  return (event: AgentEvent) => {
    if (event.type === "tool_call" && event.subagent) subagentOfCall.set(event.id, event.subagent);
    if ((event.type === "tool_output" || event.type === "hook") && !event.subagent) {
      const subagent = subagentOfCall.get(event.id);
      if (subagent) return sink({ ...event, subagent });
    }
    if (event.type === "run_end" && !event.subagent) subagentOfCall.clear();
    sink(event);
  };
}
