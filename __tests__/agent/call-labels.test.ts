import { PassThrough } from "node:stream";
import { expect, test } from "@jest/globals";
import { createCallLabels } from "../../src/agent/call-labels.js";
import { askedAs } from "../../src/agent/subagents.js";
import type { AgentEvent, ApprovalRequest } from "../../src/contracts/events.js";
import { formatQuestion } from "../../src/ui/approval-prompt.js";
import { createPrettyRenderer } from "../../src/ui/render.js";

/** A sub-agent's hook outcomes get its label, never another's (issues 32 and 42); its questions name it. */

const hook = (id: string): AgentEvent => ({
  type: "hook",
  id,
  tool: "execute_command",
  event: "after",
  hook: "fmt",
  outcome: "passed",
  durationMs: 3,
});

test("a hook event of a sub-agent's call carries its task call's id; the parent's and tool_output pass as they come", () => {
  const seen: AgentEvent[] = [];
  const { emit } = createCallLabels((e) => seen.push(e));
  emit({ type: "tool_call", step: 1, id: "p1", name: "execute_command", args: {} });
  emit({ type: "tool_call", step: 1, id: "s1", name: "execute_command", args: {}, subagent: "task-a" });
  // A command's output says whose it is itself (the tool reads the call's conversation).
  emit({ type: "tool_output", id: "s1", stream: "stdout", text: "sub\n", subagent: "task-a" });
  emit({ type: "tool_output", id: "p1", stream: "stdout", text: "parent\n" });
  emit(hook("s1"));
  emit(hook("p1"));
  emit(hook("unknown"));
  expect(seen.slice(2).map((e) => [e.type, "id" in e ? e.id : "", e.subagent])).toEqual([
    ["tool_output", "s1", "task-a"],
    ["tool_output", "p1", undefined],
    ["hook", "s1", "task-a"],
    ["hook", "p1", undefined],
    ["hook", "unknown", undefined],
  ]);
});

test("two sub-agents' calls with one id (call_0 each): a hook is never put on the wrong one", () => {
  const seen: AgentEvent[] = [];
  const { emit } = createCallLabels((e) => seen.push(e));
  const call = (subagent: string): AgentEvent => ({
    type: "tool_call",
    step: 1,
    id: "call_0",
    name: "read_file",
    args: {},
    subagent,
  });
  const result = (subagent: string): AgentEvent => ({
    type: "tool_result",
    step: 1,
    id: "call_0",
    name: "read_file",
    status: "success",
    content: "x",
    durationMs: 1,
    subagent,
  });
  emit(call("task-a"));
  emit(call("task-b"));
  emit(hook("call_0"));
  emit(result("task-a"));
  emit(hook("call_0"));
  emit(result("task-b"));
  emit(hook("call_0"));
  expect(seen.filter((e) => e.type === "hook").map((e) => e.subagent)).toEqual([undefined, "task-b", undefined]);
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

test("a sub-agent's question says which sub-agent asks and about which task; the parent's does not", () => {
  const request: ApprovalRequest = {
    toolCallId: "call_0",
    tool: "write_file",
    args: { filePath: "n.md" },
    reason: "it writes a file",
  };
  const asked = askedAs(request, { callId: "t1", type: "general", description: "Make notes" });
  expect(asked).toEqual({
    ...request,
    askedBy: "general: Make notes",
    subagent: { callId: "t1", type: "general", description: "Make notes" },
  });
  expect(askedAs(request, undefined)).toBe(request);
  expect(formatQuestion(asked).text.split("\n").slice(1, 4)).toEqual([
    "  ⎿ [general: Make notes] asks:",
    '? Allow write_file filePath="n.md"',
    "  (it writes a file)",
  ]);
});
