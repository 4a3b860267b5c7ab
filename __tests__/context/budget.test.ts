import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import {
  answerDanglingToolCalls,
  estimateTotalTokens,
  fitToBudget,
  UNANSWERED_TOOL_RESULT,
} from "../../src/context/budget.js";

const call = (id: string) =>
  new AIMessage({ content: "", tool_calls: [{ id, name: "read_file", args: { filePath: "a" }, type: "tool_call" }] });
const result = (id: string, size = 10) => new ToolMessage({ tool_call_id: id, content: "x".repeat(size) });
const types = (ms: BaseMessage[]) =>
  ms.map((m) => `${m.getType()}:${typeof m.content === "string" ? m.content.slice(0, 12) : ""}`);

test("drops the oldest turns first, keeping the latest request and tool pairs whole", () => {
  const history = [
    new HumanMessage("old request"),
    call("1"),
    result("1", 4000),
    new AIMessage("old answer"),
    new HumanMessage("new request"),
    call("2"),
    result("2", 400),
  ];
  const kept = fitToBudget(history, 300);
  expect(types(kept)).toEqual(["human:new request", "ai:", `tool:${"x".repeat(12)}`]);
});

test("keeps everything when it fits", () => {
  const history = [new HumanMessage("a"), new AIMessage("b"), new HumanMessage("c")];
  expect(fitToBudget(history, 10_000)).toEqual(history);
});

test("a latest request over its share of the budget is sent as head and tail with a note, and the turn's results still fit (issue 14, item 10)", () => {
  // A pasted 1 MB log: before, every tool result was dropped and the model repeated its call.
  const log = `BEGIN ${"y".repeat(1_000_000)} END`;
  const history = [
    new HumanMessage("old"),
    new AIMessage("answer"),
    new HumanMessage(log),
    call("1"),
    result("1", 2000),
  ];
  const kept = fitToBudget(history, 2000, 300);
  expect(types(kept)).toEqual([
    "human:old",
    "ai:answer",
    `human:BEGIN ${"y".repeat(6)}`,
    "ai:",
    `tool:${"x".repeat(12)}`,
  ]);
  expect(estimateTotalTokens(kept) + 300).toBeLessThanOrEqual(2000);
  const sent = kept[2]!.content as string;
  expect(sent.endsWith(`${"y".repeat(100)} END`)).toBe(true);
  const head = sent.slice(0, sent.indexOf("\n\n[…"));
  const tail = sent.slice(sent.indexOf("]\n\n") + 3);
  expect(log.startsWith(head) && log.endsWith(tail)).toBe(true);
  const cut = log.length - head.length - tail.length;
  expect(sent).toContain(
    `\n\n[… ${cut} characters of this request (about ${Math.ceil(cut / 4)} tokens) are left out here: the whole request is larger than the context budget of 2000 tokens allows, so only its beginning and end are shown. Say so if the missing part matters.]\n\n`,
  );
  // The saved history keeps the whole request; only what is sent is cut.
  expect(history[2]!.content).toBe(log);
});

test("never starts with a tool result whose call was dropped", () => {
  const history = [new HumanMessage("req"), call("1"), result("1", 2000), call("2"), result("2", 20)];
  const kept = fitToBudget(history, 100);
  expect(types(kept)).toEqual(["human:req", "ai:", `tool:${"x".repeat(12)}`]);
  expect((kept[1] as AIMessage).tool_calls![0]!.id).toBe("2");
});

test("unanswered calls get a result right after their turn", () => {
  const ai = new AIMessage({
    content: "",
    tool_calls: [
      { id: "a", name: "x", args: {}, type: "tool_call" },
      { id: "b", name: "y", args: {}, type: "tool_call" },
    ],
  });
  const fixed = answerDanglingToolCalls([new HumanMessage("h"), ai, result("a"), new HumanMessage("next")]);
  expect(fixed.map((m) => m.getType())).toEqual(["human", "ai", "tool", "tool", "human"]);
  expect((fixed[3] as ToolMessage).tool_call_id).toBe("b");
  expect(fixed[3]!.content).toBe(UNANSWERED_TOOL_RESULT);
});
