import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { answerDanglingToolCalls, fitToBudget, UNANSWERED_TOOL_RESULT } from "../src/agent/context.js";

const call = (id: string) => new AIMessage({ content: "", tool_calls: [{ id, name: "read_file", args: { filePath: "a" }, type: "tool_call" }] });
const result = (id: string, size = 10) => new ToolMessage({ tool_call_id: id, content: "x".repeat(size) });
const types = (ms: BaseMessage[]) => ms.map((m) => `${m.getType()}:${typeof m.content === "string" ? m.content.slice(0, 12) : ""}`);

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

test("the latest request survives even when it alone is over budget", () => {
  const history = [new HumanMessage("old"), new AIMessage("answer"), new HumanMessage("y".repeat(10_000))];
  expect(types(fitToBudget(history, 100))).toEqual([`human:${"y".repeat(12)}`]);
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
