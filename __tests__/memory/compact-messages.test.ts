import { AIMessage, HumanMessage, mapStoredMessageToChatMessage, ToolMessage } from "@langchain/core/messages";
import { emptyCheckpoint, JsonPlusSerializer } from "@langchain/langgraph-checkpoint";
import { deflateRawSync } from "node:zlib";
import {
  CompactMessages,
  COMPACT_MESSAGES_TYPE,
  compactSerde,
  decodeMessage,
  decodeRefs,
  encodeMessage,
  encodeRefs,
  MessageRefs,
  packMessage,
} from "../../src/memory/compact-messages.js";
import { DamagedMessageError } from "../../src/memory/stored-message-codec.js";

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
    const back = mapStoredMessageToChatMessage(JSON.parse(JSON.stringify(packMessage(m))));
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
});

test("damaged bytes are a DamagedMessageError saying what is wrong with them, never a parser's dump", () => {
  const good = encodeMessage(human);
  const cases: Array<[Uint8Array, string]> = [
    [Uint8Array.of(9, 0), "its first byte, the format, is 9 and not 1"],
    [Uint8Array.of(0, ...good.subarray(1)), "its first byte, the format, is 0 and not 1"],
    [new Uint8Array(0), "it is empty"],
    ["\u0001text" as unknown as Uint8Array, "it is stored as text, not as bytes"],
    [Uint8Array.of(1, 0xde, 0xad, 0xbe, 0xef), "its compressed bytes do not inflate: "],
    [Uint8Array.of(1, ...deflateRawSync("not json {")), "it inflates to text that is not JSON"],
    [Uint8Array.of(1, ...deflateRawSync('{"a":1}')), "it holds no message type and data"],
  ];
  for (const [bytes, why] of cases) {
    let thrown: unknown;
    try {
      decodeMessage(bytes);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(DamagedMessageError);
    expect((thrown as DamagedMessageError).why).toContain(why);
  }
});

test("a checkpoint whose message is damaged or missing names the thread and the reference", async () => {
  const messages = new CompactMessages();
  const { checkpoint, fresh } = messages.store("t1", {
    ...emptyCheckpoint(),
    channel_values: { messages: [human, ai] },
  });
  const tuple = () => ({ config: { configurable: { thread_id: "t1" } }, checkpoint: structuredClone(checkpoint) });
  const reader = new CompactMessages();
  const damaged = fresh.map((row, i) => (i === 1 ? { ...row, value: Uint8Array.of(0, 1, 2) } : row));
  await expect(reader.hydrate(tuple(), () => damaged)).rejects.toMatchObject({
    name: "DamagedMessageError",
    why: "its first byte, the format, is 0 and not 1",
    where: { threadId: "t1", ref: fresh[1]!.ref },
  });
  await expect(new CompactMessages().hydrate(tuple(), () => fresh.slice(0, 1))).rejects.toMatchObject({
    why: "the thread's latest checkpoint names it, but it is not stored",
    where: { threadId: "t1", ref: fresh[1]!.ref },
  });
});

test("a list stored again, grown, changed in place or of another thread names each message by its own reference", () => {
  const messages = new CompactMessages();
  const store = (threadId: string, list: unknown[]) => {
    const { checkpoint, fresh } = messages.store(threadId, {
      ...emptyCheckpoint(),
      channel_values: { messages: list },
    });
    const ids = (checkpoint.channel_values.messages as { __messageIds: string }).__messageIds;
    return { refs: decodeRefs(ids), fresh: fresh.map((row) => row.ref) };
  };
  const list = [human, ai];
  const first = store("t1", list);
  expect(first.fresh).toEqual(first.refs);
  // The same list again (a node that added no message): nothing new, the same references.
  expect(store("t1", list)).toEqual({ refs: first.refs, fresh: [] });
  // Grown by one: only the new message is stored.
  const grown = store("t1", [...list, tool]);
  expect(grown.refs.slice(0, 2)).toEqual(first.refs);
  expect(grown.fresh).toEqual([grown.refs[2]]);
  // The same array changed in place: the message now in second place is looked up, not assumed.
  const reply = new AIMessage({ id: "chatcmpl-2", content: "Done." });
  list[1] = reply;
  const changed = store("t1", list);
  expect(changed.refs[0]).toBe(first.refs[0]);
  expect(changed.fresh).toEqual([changed.refs[1]]);
  expect(changed.refs[1]).not.toBe(first.refs[1]);
  // Back to the earlier list: its messages keep the references they were stored under.
  expect(store("t1", [human, ai, tool])).toEqual({ refs: grown.refs, fresh: [] });
  // Other threads in between (more than the lists kept): each thread's references are its own.
  for (const other of ["t2", "t3", "t4", "t5", "t6"]) expect(store(other, [human]).fresh).toHaveLength(1);
  expect(store("t1", [human, ai, tool])).toEqual({ refs: grown.refs, fresh: [] });
  expect(store("t2", [human, ai]).fresh).toHaveLength(1);
});
