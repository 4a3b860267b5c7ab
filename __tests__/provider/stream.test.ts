import { ChunkNormaliser } from "../../src/provider/chunks.js";
import { emptyResponse } from "../../src/provider/call-context.js";
import { providerMessage } from "../../src/provider/errors.js";
import { isReasoningModel, temperatureFor } from "../../src/provider/family.js";
import { rejectedParameter } from "../../src/provider/request.js";
import { parseSse } from "../../src/provider/sse.js";
import { stripThink, ThinkSplitter } from "../../src/provider/think.js";
import { ToolCallAssembler } from "../../src/provider/tool-call-stream.js";

/** The provider layer's pieces on their own: what the conformance suite relies on, edge by edge. */

describe("ThinkSplitter", () => {
  test("tags cut anywhere between chunks still split thinking from the answer", () => {
    const text = "<think>plan a</think>\n\nAnswer here";
    for (let cut = 1; cut < text.length; cut++) {
      const s = new ThinkSplitter();
      const a = s.push(text.slice(0, cut));
      const b = s.push(text.slice(cut));
      const c = s.flush();
      expect([a.text + b.text + c.text, a.thinking + b.thinking + c.thinking]).toEqual(["Answer here", "plan a"]);
    }
  });

  test("an answer without <think> passes unchanged, even one that starts with '<'", () => {
    expect(stripThink("<b>bold</b> text")).toEqual({ text: "<b>bold</b> text", thinking: "" });
    expect(stripThink("plain <think>later</think>")).toEqual({ text: "plain <think>later</think>", thinking: "" });
  });

  test("an unclosed block at the end is all thinking", () => {
    expect(stripThink("<think>never closed")).toEqual({ text: "", thinking: "never closed" });
  });
});

describe("ToolCallAssembler", () => {
  test('object arguments are serialised; ids "null" and "" continue the call', () => {
    const a = new ToolCallAssembler();
    const out = [
      ...a.normalise([{ index: 0, id: "c1", function: { name: "read_file", arguments: "" } }]),
      ...a.normalise([{ index: 0, id: "null", function: { arguments: '{"filePath":' } }]),
      ...a.normalise([{ index: 0, id: "", function: { arguments: '"a"}' } }]),
      ...a.normalise([{ id: "c2", function: { name: "list_directory", arguments: { directoryPath: "." } } }]),
    ];
    expect(out).toEqual([
      { index: 0, id: "c1", type: "function", function: { name: "read_file", arguments: "" } },
      { index: 0, function: { arguments: '{"filePath":' } },
      { index: 0, function: { arguments: '"a"}' } },
      {
        index: 1,
        id: "c2",
        type: "function",
        function: { name: "list_directory", arguments: '{"directoryPath":"."}' },
      },
    ]);
  });

  test("a known id goes back to its own call whatever its index says", () => {
    const a = new ToolCallAssembler();
    a.normalise([{ index: 0, id: "x", function: { name: "read_file", arguments: "{" } }]);
    a.normalise([{ index: 0, id: "y", function: { name: "read_file", arguments: "{" } }]);
    expect(a.normalise([{ index: 7, id: "x", function: { arguments: "}" } }])).toEqual([
      { index: 0, function: { arguments: "}" } },
    ]);
  });

  test("a call without an id gets a made-up one of 9 alphanumerics", () => {
    const [first] = new ToolCallAssembler().normalise([{ function: { name: "read_file", arguments: "{}" } }]);
    expect(first!.id).toMatch(/^[A-Za-z0-9]{9}$/);
  });
});

describe("ChunkNormaliser", () => {
  test('adds a finish at [DONE] only when none came, and reads finish_reason "" as none', () => {
    const extras = emptyResponse();
    const n = new ChunkNormaliser(extras);
    n.chunk({ choices: [{ index: 0, delta: { content: "hi" }, finish_reason: "" }] });
    const [finish] = n.done();
    expect(finish).toMatchObject({ choices: [{ index: 0, delta: { role: "assistant" }, finish_reason: "stop" }] });
    expect(extras.finishReason).toBe("stop");
    const m = new ChunkNormaliser(emptyResponse());
    m.chunk({ choices: [{ index: 0, delta: { content: "hi" }, finish_reason: "length" }] });
    expect(m.done()).toEqual([]);
  });
});

describe("providerMessage", () => {
  test.each([
    ['{"error":{"message":"bad key","type":"x"}}', "bad key"],
    ['[{"error":{"code":400,"message":"from gemini"}}]', "from gemini"],
    ['{"object":"error","message":"from old vllm","code":400}', "from old vllm"],
    ['{"message":{"detail":[{"loc":["body","n"],"msg":"too big"}]}}', "too big (body.n)"],
    ['{"detail":"Not authenticated"}', "Not authenticated"],
    ['{"error":"model not loaded"}', "model not loaded"],
    ["upstream connect error\n", "upstream connect error"],
    ["<html><body>502</body></html>", "the server answered with a web page"],
  ])("%s", (body, expected) => {
    expect(providerMessage(body)).toBe(expected);
  });
});

describe("model families", () => {
  test.each([
    ["o1", true],
    ["o3-mini", true],
    ["o4-mini-2025-04-16", true],
    ["gpt-5", true],
    ["gpt-5-mini", true],
    ["gpt-5-chat-latest", false],
    ["openai/o3", true],
    ["gpt-4.1-mini", false],
    ["deepseek-reasoner", false],
    ["ollama/qwen3:8b", false],
  ])("%s reasoning: %s", (model, expected) => {
    expect(isReasoningModel(model)).toBe(expected);
  });

  test("temperature: the setting wins, 'default' sends none", () => {
    expect([
      temperatureFor("gpt-4.1", undefined),
      temperatureFor("o3", undefined),
      temperatureFor("o3", 1),
      temperatureFor("gpt-4.1", "default"),
    ]).toEqual([0, undefined, 1, undefined]);
  });
});

describe("parseSse", () => {
  test("CRLF, no space after data:, comments, and payloads split across reads", async () => {
    const raw = [': ping\r\n\r\ndata:{"a":', "1}\r\n\r\ndata: [DO", "NE]\r\n\r\n"];
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const part of raw) controller.enqueue(new TextEncoder().encode(part));
        controller.close();
      },
    });
    const out: string[] = [];
    for await (const payload of parseSse(body)) out.push(payload);
    expect(out).toEqual(['{"a":1}', "[DONE]"]);
  });
});

describe("rejectedParameter", () => {
  const body = {
    model: "m",
    messages: [],
    tools: [],
    stream: true,
    temperature: 0,
    user: "me",
    parallel_tool_calls: true,
    stream_options: { include_usage: true },
  };
  test.each([
    [
      "OpenAI's param field",
      '{"error":{"message":"Unsupported value","param":"temperature"}}',
      "temperature",
      "temperature",
    ],
    [
      "quoted in the message",
      "Unsupported parameter: 'temperature' is not supported with this model.",
      undefined,
      "temperature",
    ],
    [
      "a pydantic loc",
      '{"detail":[{"type":"extra_forbidden","loc":["body","stream_options"],"msg":"Extra inputs are not permitted"}]}',
      undefined,
      "stream_options",
    ],
    [
      "bare, when the name cannot be prose",
      "Unrecognized request argument supplied: parallel_tool_calls",
      undefined,
      "parallel_tool_calls",
    ],
    ["a word that is also a parameter", "Invalid request: the user message is empty", undefined, undefined],
    ["the conversation itself is never dropped", "Invalid 'messages': extra field", "messages", undefined],
  ])("%s", (_what, text, param, expected) => {
    expect(rejectedParameter(body, text, param)).toBe(expected);
  });
});
