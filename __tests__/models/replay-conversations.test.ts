import { expect, test } from "@jest/globals";
import { AIMessage, HumanMessage, SystemMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { conversationKey, digestRequest } from "../../src/models/recorder.js";
import { parseRecording, RecordingError, ReplayChatModel, ReplayDivergenceError } from "../../src/models/replay.js";

/**
 * A recording of a turn with parallel sub-agents replays whatever order their requests arrive
 * in: a response that names its conversation answers only that conversation's requests (issue
 * 32 item 1).
 */

const HEADER =
  '{"type":"header","format":"mini-cursor-recording","version":1,"model":"hand-written","recordedAt":"2026-12-02T00:00:00.000Z"}';
const response = (request: number, conversation: string | undefined, content: string, outcomes: object[] = []) =>
  JSON.stringify({
    type: "response",
    request,
    sent: { outcomes, ...(conversation === undefined ? {} : { conversation }) },
    message: { type: "ai", data: { content, tool_calls: [] } },
  });

const PARENT = "Find both ports.";
const A = "Find the api port.";
const B = "Find the web port.";
const first = (text: string): BaseMessage[] => [new SystemMessage("system"), new HumanMessage(text)];
/** A second request of a conversation: after a read_file call and its result. */
const second = (text: string): BaseMessage[] => [
  ...first(text),
  new AIMessage({ content: "", tool_calls: [{ id: "r1", name: "read_file", args: { filePath: "x" } }] }),
  new ToolMessage({ content: "x", tool_call_id: "r1", name: "read_file" }),
];
const READ = [{ tool: "read_file", what: "x", outcome: "ok" }];

const recording = () =>
  parseRecording(
    [
      HEADER,
      response(1, PARENT, "delegating"),
      response(2, A, "api reads"),
      response(3, B, "web reads"),
      response(4, A, "api: 8080", READ),
      response(5, B, "web: 3000", READ),
    ].join("\n"),
    "two.jsonl",
  );

const text = async (model: ReplayChatModel, messages: BaseMessage[]) => (await model.invoke(messages)).content;

test("the digest names the conversation by its first user message, in short", () => {
  expect(digestRequest(second(A)).conversation).toBe(A);
  expect(conversationKey([new SystemMessage("s"), new HumanMessage(`${"word ".repeat(40)}\n end`)])).toBe(
    `${"word ".repeat(23)}word…`,
  );
});

test("each conversation gets its own responses in order, whatever order the requests come in", async () => {
  const model = new ReplayChatModel(recording());
  expect(await text(model, first(PARENT))).toBe("delegating");
  // Beta asks first and finishes first: it still gets beta's responses.
  expect(await text(model, first(B))).toBe("web reads");
  expect(await text(model, second(B))).toBe("web: 3000");
  expect(await text(model, first(A))).toBe("api reads");
  expect(await text(model, second(A))).toBe("api: 8080");
  expect(model.served).toBe(5);
});

test("a request of a conversation with nothing left diverges, naming it; one past the end says so as before", async () => {
  const model = new ReplayChatModel(recording());
  await text(model, first(PARENT));
  await expect(model.invoke(first(PARENT))).rejects.toThrow(
    new ReplayDivergenceError(
      `The recording two.jsonl has no response left for model request 2, of the conversation that starts "${PARENT}"; the run diverged from the recording.`,
    ),
  );
  for (const m of [first(A), first(B), second(A), second(B)]) await text(model, m);
  await expect(model.invoke(first(A))).rejects.toThrow(
    new ReplayDivergenceError(
      "The recording two.jsonl has no response for model request 6 (it holds 5); the run diverged from the recording.",
    ),
  );
});

test("responses that name no conversation answer in order, as older recordings do", async () => {
  const model = new ReplayChatModel(
    parseRecording([HEADER, response(1, undefined, "one"), response(2, undefined, "two")].join("\n"), "old.jsonl"),
  );
  expect(await text(model, first(B))).toBe("one");
  expect(await text(model, first(A))).toBe("two");
});

test("a conversation that is not text is refused", () => {
  expect(() =>
    parseRecording(
      `${HEADER}\n{"type":"response","request":1,"sent":{"outcomes":[],"conversation":3},"message":{"type":"ai","data":{"content":""}}}`,
      "bad.jsonl",
    ),
  ).toThrow(new RecordingError("bad.jsonl is not a recording: line 2 names its conversation with something not text."));
});
