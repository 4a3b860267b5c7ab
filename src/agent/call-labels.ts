import type { AgentEvent, EventSink } from "../contracts/events.js";

export interface CallLabels {
  /** The sink with a sub-agent's `hook` events labelled. */
  emit: EventSink;
}

/**
 * Labels what reaches the person outside the engines' own events and does not say which
 * sub-agent's call it is. A command's streamed output (`tool_output`) says so itself (the tool
 * reads the call's conversation, app/agent.ts), and an approval question is labelled by the
 * engine that asks (`askedBy`, agent/subagents.ts `askedAs`). A hook's outcome (`hook`, from the
 * session's hooks) carries only the call's id, and call ids repeat across conversations (servers
 * that number a response's calls give two sub-agents the same `call_0`). So it is labelled only
 * when exactly one call with its id is in flight: learnt from the engine's `tool_call` events
 * (their `subagent` names the `task` call) until that call's `tool_result`. Two in flight with
 * one id leave it unlabelled rather than name the wrong sub-agent.
 */
export function createCallLabels(sink: EventSink): CallLabels {
  /** Per call id, the conversations (a sub-agent's task call id, "" the parent's) with such a call in flight. */
  const inFlight = new Map<string, string[]>();
  const emit: EventSink = (event: AgentEvent) => {
    if (event.type === "tool_call") inFlight.set(event.id, [...(inFlight.get(event.id) ?? []), event.subagent ?? ""]);
    if (event.type === "hook" && !event.subagent) {
      const owners = inFlight.get(event.id) ?? [];
      if (owners.length === 1 && owners[0]) return sink({ ...event, subagent: owners[0] });
    }
    sink(event);
    if (event.type === "tool_result") {
      const owners = inFlight.get(event.id) ?? [];
      const at = owners.indexOf(event.subagent ?? "");
      if (at >= 0) owners.splice(at, 1);
      if (owners.length === 0) inFlight.delete(event.id);
    }
    if (event.type === "run_end" && !event.subagent) inFlight.clear();
  };
  return { emit };
}
