import { AIMessage, ToolMessage } from "@langchain/core/messages";
import { estimateTokens } from "../../src/models/tokens.js";

test("an estimate follows a message whose content or calls were replaced after it was made", () => {
  const result = new ToolMessage({ content: "x".repeat(40), tool_call_id: "c1" });
  expect(estimateTokens(result)).toBe(10 + 4);
  // The results guard replaces a result's content in place (guard/results.ts): counted anew.
  result.content = "x".repeat(400);
  expect(estimateTokens(result)).toBe(100 + 4);

  const turn = new AIMessage({ content: "", tool_calls: [{ id: "c1", name: "read_file", args: { p: "a" } }] });
  const first = estimateTokens(turn);
  expect(first).toBe(Math.ceil(("read_file".length + JSON.stringify({ p: "a" }).length) / 4) + 4);
  turn.tool_calls = [...turn.tool_calls!, { id: "c2", name: "read_file", args: { p: "a".repeat(80) } }];
  expect(estimateTokens(turn)).toBeGreaterThan(first + 20);
  // Content in parts is counted every time.
  const parts = new ToolMessage({ content: [{ type: "text", text: "y".repeat(8) }], tool_call_id: "c3" });
  expect(estimateTokens(parts)).toBe(2 + 4);
  (parts.content as Array<{ type: "text"; text: string }>)[0]!.text = "y".repeat(80);
  expect(estimateTokens(parts)).toBe(20 + 4);
});
