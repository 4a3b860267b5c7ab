import type { AgentEvent, Approver, EventSink } from "./events.js";

export interface CallLabels {
  /** The sink with a sub-agent's `tool_output` and `hook` events labelled. */
  emit: EventSink;
  /** The approver with a sub-agent's questions saying which sub-agent asks (`askedBy`). */
  ask(approver: Approver): Approver;
}

/**
 * Labels what reaches the person outside the engines' own events: a command's streamed output
 * (`tool_output`, from the tools' output callback), a hook's outcome (`hook`, from the session's
 * hooks) and an approval question. None of them knows which sub-agent made the call, so they are
 * labelled by the call's id, learnt from the `tool_call` event the engine emitted before the call
 * ran or asked (its `subagent` names the `task` call, whose arguments give the label the trace
 * shows). The parent's calls have no label and get none.
 */
export function createCallLabels(sink: EventSink): CallLabels {
  const subagentOfCall = new Map<string, string>();
  const labelOfTask = new Map<string, string>();
  const emit: EventSink = (event: AgentEvent) => {
    if (event.type === "tool_call" && event.subagent) subagentOfCall.set(event.id, event.subagent);
    if (event.type === "tool_call" && event.name === "task" && !event.subagent)
      labelOfTask.set(event.id, `${String(event.args.subagent_type)}: ${String(event.args.description)}`);
    if ((event.type === "tool_output" || event.type === "hook") && !event.subagent) {
      const subagent = subagentOfCall.get(event.id);
      if (subagent) return sink({ ...event, subagent });
    }
    sink(event);
    if (event.type === "run_end" && !event.subagent) {
      subagentOfCall.clear();
      labelOfTask.clear();
    }
  };
  return {
    emit,
    ask: (approver) => (request) => {
      const subagent = subagentOfCall.get(request.toolCallId);
      if (!subagent || request.askedBy) return approver(request);
      return approver({ ...request, askedBy: labelOfTask.get(subagent) ?? subagent });
    },
  };
}
