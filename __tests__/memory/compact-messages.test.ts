import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { JsonPlusSerializer } from "@langchain/langgraph-checkpoint";
import {
  COMPACT_MESSAGES_TYPE,
  compactSerde,
  decodeMessage,
  decodeRefs,
  encodeMessage,
  encodeRefs,
  MessageRefs,
  packMessage,
  unpackMessage,
} from "../../src/memory/compact-messages.js";

const ai = new AIMessage({
  id: "chatcmpl-1",
  content: "Reading.",
  response_metadata: { model_name: "m", finish_reason: "tool_calls" },
  usage_metadata: { input_tokens: 1, output_tokens: 2, total_tokens: 3 },
  tool_calls: [{ id: "call_1", name: "read_file", args: { filePath: "a.txt" }, type: "tool_call" }],
});
const tool = new ToolMessage({
  id: "t1",
  content: "1\ta",
  tool_call_id: "call_1",
  name: "read_file",
  status: "success",
});
const human = new HumanMessage({ id: "h1", content: "" });

test("a packed message drops its empty fields and loads back equal", () => {
  expect(packMessage(ai)).toEqual({
    type: "ai",
    data: {
      id: "chatcmpl-1",
      content: "Reading.",
      response_metadata: { model_name: "m", finish_reason: "tool_calls" },
      usage_metadata: { input_tokens: 1, output_tokens: 2, total_tokens: 3 },
      tool_calls: [{ id: "call_1", name: "read_file", args: { filePath: "a.txt" }, type: "tool_call" }],
    },
  });
  expect(packMessage(human)).toEqual({ type: "human", data: { id: "h1", content: "" } });
  for (const m of [ai, tool, human]) {
    const back = unpackMessage(JSON.parse(JSON.stringify(packMessage(m))));
    expect(back.constructor).toBe(m.constructor);
    expect(back.toDict()).toEqual(m.toDict());
  }
});

test("references compress to ranges per session and expand back in order", () => {
  const refs = ["a1.1", "a1.2", "a1.3", "b2.7", "a1.4", "a1.9", "a1.10"];
  expect(encodeRefs(refs)).toBe("a1.1-3,b2.7,a1.4,a1.9-10");
  expect(decodeRefs(encodeRefs(refs))).toEqual(refs);
  expect(encodeRefs([])).toBe("");
  expect(decodeRefs("")).toEqual([]);
});

test("a message object keeps its reference; a loaded one is found again", () => {
  const refs = new MessageRefs();
  const first = refs.refFor("t", ai);
  expect(first.fresh).toBe(true);
  expect(refs.refFor("t", ai)).toEqual({ ref: first.ref, fresh: false });
  const second = refs.refFor("t", tool);
  expect(encodeRefs([first.ref, second.ref])).toMatch(/^[0-9a-f]{8}\.1-2$/);
  // Another thread stores its own copy.
  expect(refs.refFor("u", ai).fresh).toBe(true);
  refs.remember("t", "old.5", human);
  expect(refs.loadedMessage("t", "old.5")).toBe(human);
  expect(refs.refFor("t", human)).toEqual({ ref: "old.5", fresh: false });
  refs.forget("t");
  expect(refs.loadedMessage("t", "old.5")).toBeUndefined();
});

test("the serializer writes messages compactly and passes everything else through", async () => {
  const serde = compactSerde(new JsonPlusSerializer());
  const [type, bytes] = await serde.dumpsTyped([ai, tool]);
  expect(type).toBe(COMPACT_MESSAGES_TYPE);
  const list = (await serde.loadsTyped(type, bytes)) as Array<AIMessage | ToolMessage>;
  expect(list.map((m) => m.toDict())).toEqual([ai.toDict(), tool.toDict()]);
  const [oneType, one] = await serde.dumpsTyped(ai);
  expect(((await serde.loadsTyped(oneType, new TextDecoder().decode(one))) as AIMessage).toDict()).toEqual(ai.toDict());
  const [plainType, plain] = await serde.dumpsTyped({ route: "tools" });
  expect(plainType).toBe("json");
  expect(await serde.loadsTyped(plainType, plain)).toEqual({ route: "tools" });
});

test("a message stored on its own is deflated, smaller than its compact JSON, and reads back equal", () => {
  for (const m of [ai, tool, human]) {
    const stored = encodeMessage(m);
    expect(stored[0]).toBe(1);
    expect(stored.length).toBeLessThan(JSON.stringify(packMessage(m)).length);
    const back = decodeMessage(stored);
    expect(back.constructor).toBe(m.constructor);
    expect(back.toDict()).toEqual(m.toDict());
  }
  expect(() => decodeMessage(Uint8Array.of(9, 0))).toThrow("unknown stored message format 9");
});
