import { PassThrough } from "node:stream";
import { expect, test } from "@jest/globals";
import { createCallLabels } from "../../src/agent/call-labels.js";
import type { AgentEvent, ApprovalRequest } from "../../src/agent/events.js";
import { formatQuestion } from "../../src/ui/approval-prompt.js";
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
  const { emit } = createCallLabels((e) => seen.push(e));
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

test("a sub-agent's question says which sub-agent asks; the parent's does not", async () => {
  const { emit, ask } = createCallLabels(() => undefined);
  const asked: ApprovalRequest[] = [];
  const approver = ask(async (request) => {
    asked.push(request);
    return { decision: "approve" };
  });
  emit({
    type: "tool_call",
    step: 1,
    id: "t1",
    name: "task",
    args: { description: "Make notes", prompt: "p", subagent_type: "general" },
  });
  emit({ type: "tool_call", step: 1, id: "s1", name: "write_file", args: {}, subagent: "t1" });
  const request = (toolCallId: string): ApprovalRequest => ({
    toolCallId,
    tool: "write_file",
    args: { filePath: "n.md" },
    reason: "it writes a file",
  });
  await approver(request("s1"));
  await approver(request("p1"));
  expect(asked.map((r) => r.askedBy)).toEqual(["general: Make notes", undefined]);
  expect(formatQuestion(asked[0]!).text.split("\n").slice(1, 4)).toEqual([
    "  ⎿ [general: Make notes] asks:",
    '? Allow write_file filePath="n.md"',
    "  (it writes a file)",
  ]);
  // After the parent's run ends, nothing is remembered for the next one.
  emit({
    type: "run_end",
    reason: "done",
    steps: 1,
    toolCalls: 1,
    usage: { input: 0, output: 0, estimated: false },
    durationMs: 1,
  });
  await approver(request("s1"));
  expect(asked[2]!.askedBy).toBeUndefined();
});
