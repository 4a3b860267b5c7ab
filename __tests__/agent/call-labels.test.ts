import { PassThrough } from "node:stream";
import { expect, test } from "@jest/globals";
import { labelCallEvents } from "../../src/agent/call-labels.js";
import type { AgentEvent } from "../../src/agent/events.js";
import { createPrettyRenderer } from "../../src/ui/render.js";

/** A sub-agent's command output and hook outcomes get its label by call id (issue 32 item 1). */

const hook = (id: string): AgentEvent => ({
  type: "hook",
  id,
  tool: "execute_command",
  event: "after",
  hook: "fmt",
  outcome: "passed",
  durationMs: 3,
});

test("tool_output and hook events of a sub-agent's call carry its task call's id; the parent's carry none", () => {
  const seen: AgentEvent[] = [];
  const emit = labelCallEvents((e) => seen.push(e));
  emit({ type: "tool_call", step: 1, id: "p1", name: "execute_command", args: {} });
  emit({ type: "tool_call", step: 1, id: "s1", name: "execute_command", args: {}, subagent: "task-a" });
  emit({ type: "tool_output", id: "s1", stream: "stdout", text: "sub\n" });
  emit({ type: "tool_output", id: "p1", stream: "stdout", text: "parent\n" });
  emit(hook("s1"));
  emit(hook("p1"));
  emit({ type: "tool_output", id: "unknown", stream: "stderr", text: "?" });
  expect(seen.slice(2).map((e) => [e.type, "id" in e ? e.id : "", e.subagent])).toEqual([
    ["tool_output", "s1", "task-a"],
    ["tool_output", "p1", undefined],
    ["hook", "s1", "task-a"],
    ["hook", "p1", undefined],
    ["tool_output", "unknown", undefined],
  ]);
});

test("the trace shows parallel sub-agents' output as whole lines, each under its own label", () => {
  const out = new PassThrough();
  let text = "";
  out.on("data", (d: Buffer) => (text += d.toString()));
  const r = createPrettyRenderer({ color: false, spinner: false, verbose: false, out, echoRequest: false });
  for (const [id, description] of [
    ["a", "Alpha"],
    ["b", "Beta"],
  ])
    r.event({
      type: "tool_call",
      step: 1,
      id,
      name: "task",
      args: { description, prompt: "p", subagent_type: "general" },
    });
  r.event({ type: "tool_output", id: "ca", stream: "stdout", text: "al", subagent: "a" });
  r.event({ type: "tool_output", id: "cb", stream: "stdout", text: "beta 1\nbe", subagent: "b" });
  r.event({ type: "tool_output", id: "ca", stream: "stdout", text: "pha 1\n", subagent: "a" });
  r.event({
    type: "tool_result",
    step: 1,
    id: "cb",
    name: "execute_command",
    status: "success",
    content: "ok",
    durationMs: 1,
    subagent: "b",
  });
  r.event({ ...hook("ca"), subagent: "a" });
  expect(text.split("\n").slice(2)).toEqual([
    "  ⎿ [general: Beta] │ beta 1",
    "  ⎿ [general: Alpha] │ alpha 1",
    "  ⎿ [general: Beta] │ be",
    "  ⎿ [general: Beta] ✓ execute_command 1 lines, 2 B",
    "  ⎿ [general: Alpha] ⚑ after execute_command: hook fmt passed",
    "",
  ]);
});
