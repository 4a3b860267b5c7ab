import { sse, type ChatRequest, type ScriptStep } from "../helpers/openai-server.js";
import {
  chunk,
  completion,
  ENGINE_KINDS,
  eventsOf,
  expectResultsMatchCalls,
  JSON_HEADERS,
  runProvider,
  WRITE_ARGS,
} from "../helpers/provider-run.js";

/**
 * Provider conformance, tool calls: the real ChatOpenAI (createChatModel, so the provider
 * layer in src/provider/) against answers replayed byte for byte in the shapes providers are
 * documented or publicly reported to send. Every shape, with both engines, streamed and (where
 * the provider has one) as a whole JSON completion, must write the requested file, answer each
 * call by its own id, and end "done".
 */

const ARGS = JSON.stringify(WRITE_ARGS);
const OTHER_ARGS = JSON.stringify({ filePath: "other.txt", content: "second\n" });
/** Arguments in pieces, as every provider streams them. */
const pieces = (s: string, size = 9) => s.match(new RegExp(`[\\s\\S]{1,${size}}`, "g"))!;

interface Shape {
  /** The provider and what is odd about its answer, with its public source. */
  name: string;
  /** SSE `data:` payloads of the first answer (objects are JSON-encoded). */
  stream?: () => Array<string | object>;
  /** The first answer as a non-streamed completion (MINI_CURSOR_STREAM=off). */
  json?: () => object;
  /** Files the run must leave (default: notes.txt with "hello\n"). */
  files?: Record<string, string>;
  /** Checks on the events and requests beyond the common ones. */
  check?: (run: Awaited<ReturnType<typeof runProvider>>) => void;
}

const openaiStream = () => [
  chunk({ role: "assistant", content: null }),
  chunk({
    tool_calls: [{ index: 0, id: "call_abc123", type: "function", function: { name: "write_file", arguments: "" } }],
  }),
  ...pieces(ARGS).map((p) => chunk({ tool_calls: [{ index: 0, function: { arguments: p } }] })),
  chunk({}, "tool_calls"),
  "[DONE]",
];

const SHAPES: Shape[] = [
  {
    // https://platform.openai.com/docs/api-reference/chat-streaming/streaming
    name: "OpenAI: id and name first, then argument fragments on the same index",
    stream: openaiStream,
    json: () =>
      completion(
        {
          content: null,
          tool_calls: [{ id: "call_abc123", type: "function", function: { name: "write_file", arguments: ARGS } }],
        },
        "tool_calls",
      ),
    check: (run) => expect(eventsOf(run.events, "tool_call").map((e) => e.id)).toEqual(["call_abc123"]),
  },
  {
    // https://github.com/ollama/ollama/issues/7881 (no index); Cloudflare Workers AI role/id null: https://github.com/Effect-TS/effect/pull/8333
    name: "Ollama / Cloudflare Workers AI: tool-call deltas without index, arguments in several pieces",
    stream: () => [
      chunk({ role: "assistant", content: "" }),
      chunk({
        tool_calls: [{ id: "call_noindex", type: "function", function: { name: "write_file", arguments: "" } }],
      }),
      ...pieces(ARGS).map((p) => chunk({ tool_calls: [{ function: { arguments: p } }] })),
      chunk({}, "tool_calls"),
      "[DONE]",
    ],
    json: () =>
      completion(
        { content: "", tool_calls: [{ id: "call_noindex", function: { name: "write_file", arguments: ARGS } }] },
        "tool_calls",
      ),
  },
  {
    // Gateways in front of DeepSeek: the second call's header on index 0, its arguments on index 1
    // (the rule "a new id starts a call, arguments-only continue the latest" from issue 12).
    name: "DeepSeek behind a gateway: second call's header on index 0, its arguments on index 1",
    stream: () => [
      chunk({ role: "assistant", content: "" }),
      chunk({
        tool_calls: [{ index: 0, id: "call_first", type: "function", function: { name: "write_file", arguments: "" } }],
      }),
      ...pieces(ARGS).map((p) => chunk({ tool_calls: [{ index: 0, function: { arguments: p } }] })),
      chunk({
        tool_calls: [
          { index: 0, id: "call_second", type: "function", function: { name: "write_file", arguments: "" } },
        ],
      }),
      ...pieces(OTHER_ARGS).map((p) => chunk({ tool_calls: [{ index: 1, function: { arguments: p } }] })),
      chunk({}, "tool_calls"),
      "[DONE]",
    ],
    files: { "notes.txt": "hello\n", "other.txt": "second\n" },
    check: (run) => expect(eventsOf(run.events, "tool_call").map((e) => e.id)).toEqual(["call_first", "call_second"]),
  },
  {
    // https://github.com/langchain-ai/langchainjs/pull/11505 (Mistral-hosted GLM: continuation id "null")
    name: 'GLM behind Mistral: continuation chunks with id "null" and name ""',
    stream: () => [
      chunk({ role: "assistant", content: "" }),
      chunk({
        tool_calls: [{ index: 0, id: "call_glm", type: "function", function: { name: "write_file", arguments: "" } }],
      }),
      ...pieces(ARGS).map((p) =>
        chunk({ tool_calls: [{ index: 0, id: "null", type: "function", function: { name: "", arguments: p } }] }),
      ),
      chunk({}, "tool_calls"),
      "[DONE]",
    ],
  },
  {
    // https://github.com/symfony/ai/pull/2220 (Alibaba DashScope repeats id as "" on continuations)
    name: 'Qwen on DashScope: continuation chunks with id ""',
    stream: () => [
      chunk({ role: "assistant", content: "" }),
      chunk({
        tool_calls: [{ index: 0, id: "call_qwen", type: "function", function: { name: "write_file", arguments: "" } }],
      }),
      ...pieces(ARGS).map((p) =>
        chunk({ tool_calls: [{ index: 0, id: "", type: "function", function: { arguments: p } }] }),
      ),
      chunk({}, "tool_calls"),
      "[DONE]",
    ],
  },
  {
    // https://github.com/sgl-project/sglang/pull/35542 (SGLang: id and name null on continuations)
    name: "SGLang: continuation chunks with id null and name null, role null",
    stream: () => [
      chunk({ role: "assistant", content: null, reasoning_content: null, tool_calls: null }),
      chunk({
        role: null,
        content: null,
        tool_calls: [{ index: 0, id: "call_sgl", type: "function", function: { name: "write_file", arguments: "" } }],
      }),
      ...pieces(ARGS).map((p) =>
        chunk({
          role: null,
          content: null,
          tool_calls: [{ index: 0, id: null, type: "function", function: { name: null, arguments: p } }],
        }),
      ),
      chunk({ role: null, content: null, tool_calls: null }, "tool_calls"),
      "[DONE]",
    ],
  },
  {
    // Some gateways repeat the same id on every chunk of a call.
    // https://github.com/matthiasn/lotti/pull/3085 (review: "continuation chunks can repeat the same non-empty id")
    name: "Gateway: the same id repeated on every chunk of the call",
    stream: () => [
      chunk({ role: "assistant", content: "" }),
      ...pieces(ARGS).map((p, i) =>
        chunk({
          tool_calls: [
            {
              index: 0,
              id: "call_rep",
              type: "function",
              function: { name: i === 0 ? "write_file" : "", arguments: p },
            },
          ],
        }),
      ),
      chunk({}, "tool_calls"),
      "[DONE]",
    ],
  },
  {
    // https://github.com/ggml-org/llama.cpp/issues/20198 (llama-server: arguments as a JSON object)
    name: "llama.cpp server: arguments sent as a JSON object instead of a string",
    stream: () => [
      chunk({ role: "assistant", content: null }),
      chunk({
        tool_calls: [
          { index: 0, id: "call_obj", type: "function", function: { name: "write_file", arguments: WRITE_ARGS } },
        ],
      }),
      chunk({}, "tool_calls"),
      "[DONE]",
    ],
    json: () =>
      completion(
        {
          content: null,
          tool_calls: [{ id: "call_obj", type: "function", function: { name: "write_file", arguments: WRITE_ARGS } }],
        },
        "tool_calls",
      ),
  },
  {
    // https://github.com/sgl-project/sglang/issues/4550 shows role null on every chunk; LangChain
    // makes ChatMessageChunks of role-less deltas unless they are read as assistant chunks.
    name: "Role-less stream: no chunk carries a role",
    stream: () => [
      chunk({ content: "Writing it now." }),
      chunk({
        tool_calls: [
          { index: 0, id: "call_norole", type: "function", function: { name: "write_file", arguments: "" } },
        ],
      }),
      ...pieces(ARGS).map((p) => chunk({ tool_calls: [{ index: 0, function: { arguments: p } }] })),
      chunk({}, "tool_calls"),
      "[DONE]",
    ],
  },
  {
    // https://github.com/AstrBotDevs/AstrBot/pull/6692 (Gemini's OpenAI endpoint: whole calls, no index)
    name: "Gemini OpenAI endpoint: each whole call in one chunk, no index",
    stream: () => [
      chunk({
        role: "assistant",
        tool_calls: [{ id: "function-call-1", type: "function", function: { name: "write_file", arguments: ARGS } }],
      }),
      chunk({
        role: "assistant",
        tool_calls: [
          { id: "function-call-2", type: "function", function: { name: "write_file", arguments: OTHER_ARGS } },
        ],
      }),
      chunk({ role: "assistant" }, "tool_calls"),
      "[DONE]",
    ],
    files: { "notes.txt": "hello\n", "other.txt": "second\n" },
  },
  {
    // https://github.com/ollama/ollama/pull/7963 (Ollama, and OpenAI's gpt-4o at times, finish with "stop" after tool calls)
    name: 'Ollama: finish_reason "stop" although the message has tool calls',
    stream: () => [
      chunk({ role: "assistant", content: "" }),
      chunk({
        tool_calls: [
          { index: 0, id: "call_stop", type: "function", function: { name: "write_file", arguments: ARGS } },
        ],
      }),
      chunk({}, "stop"),
      "[DONE]",
    ],
    json: () =>
      completion(
        {
          content: "",
          tool_calls: [{ id: "call_stop", type: "function", function: { name: "write_file", arguments: ARGS } }],
        },
        "stop",
      ),
  },
  {
    // https://github.com/sgl-project/sglang/issues/4550 (finish_reason always null, then [DONE])
    name: "SGLang: [DONE] after a complete message that never had a finish_reason",
    stream: () => [
      chunk({ role: "assistant", content: "" }),
      chunk({
        tool_calls: [
          { index: 0, id: "call_nofinish", type: "function", function: { name: "write_file", arguments: "" } },
        ],
      }),
      ...pieces(ARGS).map((p) => chunk({ tool_calls: [{ index: 0, function: { arguments: p } }] })),
      "[DONE]",
    ],
    json: () =>
      completion(
        {
          content: null,
          tool_calls: [{ id: "call_nofinish", type: "function", function: { name: "write_file", arguments: ARGS } }],
        },
        null,
      ),
  },
  {
    // Gateways that send finish_reason "" (issue 12; e.g. OpenAI-compatible proxies re-serialising Go zero values)
    name: 'Gateway: finish_reason "" on every chunk, then [DONE]',
    stream: () => [
      chunk({ role: "assistant", content: "" }, ""),
      chunk(
        {
          tool_calls: [
            { index: 0, id: "call_empty", type: "function", function: { name: "write_file", arguments: ARGS } },
          ],
        },
        "",
      ),
      chunk({}, ""),
      "[DONE]",
    ],
  },
  {
    // Ollama without id on calls (https://github.com/ollama/ollama/issues/7881 shows calls without index;
    // older builds also sent no id), Mistral wants made-up ids of 9 alphanumerics:
    // https://github.com/anomalyco/opencode/issues/1680
    name: "No id on the call: a made-up id of 9 alphanumerics (Mistral's rule), used for the result too",
    stream: () => [
      chunk({ role: "assistant", content: "" }),
      chunk({ tool_calls: [{ index: 0, type: "function", function: { name: "write_file", arguments: ARGS } }] }),
      chunk({}, "tool_calls"),
      "[DONE]",
    ],
    json: () =>
      completion(
        { content: "", tool_calls: [{ type: "function", function: { name: "write_file", arguments: ARGS } }] },
        "tool_calls",
      ),
    check: (run) => {
      const [call] = eventsOf(run.events, "tool_call");
      expect(call!.id).toMatch(/^[A-Za-z0-9]{9}$/);
      expect(run.requests[1]!.messages.find((m) => m.role === "tool")!.tool_call_id).toBe(call!.id);
    },
  },
  {
    // vLLM without --tool-call-parser, llama.cpp without --jinja: the Hermes block stays in content.
    // https://docs.vllm.ai/en/latest/features/tool_calling.html (hermes parser), https://github.com/abetlen/llama-cpp-python/issues/1784
    name: "vLLM without --tool-call-parser: a Hermes <tool_call> block in the content",
    stream: () => [
      chunk({ role: "assistant", content: "" }),
      ...pieces(`<tool_call>\n{"name": "write_file", "arguments": ${ARGS}}\n</tool_call>`, 12).map((p) =>
        chunk({ content: p }),
      ),
      chunk({}, "stop"),
      "[DONE]",
    ],
    json: () =>
      completion({ content: `<tool_call>\n{"name": "write_file", "arguments": ${ARGS}}\n</tool_call>` }, "stop"),
    check: (run) => {
      expect(eventsOf(run.events, "notice").map((e) => e.message)).toEqual([
        "The model wrote a tool call as text (<tool_call> block); running write_file as a call.",
      ]);
      expect(run.requests[1]!.messages.find((m) => m.role === "assistant")!.content).toBeNull();
    },
  },
  {
    // https://github.com/ollama/ollama/issues/12174 (qwen2.5-coder on Ollama: bare JSON in content)
    name: "Ollama qwen2.5-coder: the call as bare JSON in the content",
    stream: () => [
      chunk({ role: "assistant", content: "" }),
      ...pieces(`{"name": "write_file", "arguments": ${ARGS}}`, 10).map((p) => chunk({ content: p })),
      chunk({}, "stop"),
      "[DONE]",
    ],
    json: () => completion({ content: `{"name": "write_file", "arguments": ${ARGS}}` }, "stop"),
    check: (run) =>
      expect(eventsOf(run.events, "notice").map((e) => e.message)).toEqual([
        "The model wrote a tool call as text (JSON object); running write_file as a call.",
      ]),
  },
  {
    // DeepSeek thinking mode: https://api-docs.deepseek.com/guides/thinking_mode#tool-calls; the 400 without it:
    // https://github.com/abhigyanpatwari/GitNexus/issues/43
    name: "DeepSeek thinking mode: reasoning_content streamed, sent back on the tool-call turn",
    stream: () => [
      chunk({ role: "assistant", content: null, reasoning_content: "" }),
      chunk({ reasoning_content: "The user wants a file. " }),
      chunk({ reasoning_content: "I will call write_file." }),
      chunk({
        tool_calls: [{ index: 0, id: "call_00_ds", type: "function", function: { name: "write_file", arguments: "" } }],
      }),
      ...pieces(ARGS).map((p) => chunk({ tool_calls: [{ index: 0, function: { arguments: p } }] })),
      chunk({}, "tool_calls"),
      "[DONE]",
    ],
    json: () =>
      completion(
        {
          content: "",
          reasoning_content: "The user wants a file. I will call write_file.",
          tool_calls: [{ id: "call_00_ds", type: "function", function: { name: "write_file", arguments: ARGS } }],
        },
        "tool_calls",
      ),
    check: (run) => {
      const assistant = run.requests[1]!.messages.find((m) => m.role === "assistant") as Record<string, unknown>;
      expect(assistant.reasoning_content).toBe("The user wants a file. I will call write_file.");
      expect(assistant.content).toBeNull();
      expect(eventsOf(run.events, "thinking").map((e) => e.text)).toEqual([
        "The user wants a file. I will call write_file.",
      ]);
      // Thinking is never the answer.
      expect(eventsOf(run.events, "final").map((e) => e.text)).toEqual(["Done."]);
    },
  },
  {
    // Gemini 3 via its OpenAI endpoint: https://ai.google.dev/gemini-api/docs/openai#thinking and
    // https://ai.google.dev/gemini-api/docs/thought-signatures; the 400 without it:
    // https://github.com/lbjlaq/Antigravity-Manager/issues/938
    name: "Gemini 3: extra_content.google.thought_signature on each call, sent back on each call",
    stream: () => [
      chunk({
        role: "assistant",
        tool_calls: [
          {
            id: "function-call-a",
            type: "function",
            function: { name: "write_file", arguments: ARGS },
            extra_content: { google: { thought_signature: "SIG_A==" } },
          },
        ],
      }),
      chunk({
        role: "assistant",
        tool_calls: [
          {
            id: "function-call-b",
            type: "function",
            function: { name: "write_file", arguments: OTHER_ARGS },
            extra_content: { google: { thought_signature: "SIG_B==" } },
          },
        ],
      }),
      chunk({ role: "assistant" }, "tool_calls"),
      "[DONE]",
    ],
    json: () =>
      completion(
        {
          content: null,
          tool_calls: [
            {
              id: "function-call-a",
              type: "function",
              function: { name: "write_file", arguments: ARGS },
              extra_content: { google: { thought_signature: "SIG_A==" } },
            },
            {
              id: "function-call-b",
              type: "function",
              function: { name: "write_file", arguments: OTHER_ARGS },
              extra_content: { google: { thought_signature: "SIG_B==" } },
            },
          ],
        },
        "tool_calls",
      ),
    files: { "notes.txt": "hello\n", "other.txt": "second\n" },
    check: (run) => {
      const assistant = run.requests[1]!.messages.find((m) => m.role === "assistant")!;
      expect(assistant.tool_calls!.map((c) => [c.id, (c as { extra_content?: unknown }).extra_content])).toEqual([
        ["function-call-a", { google: { thought_signature: "SIG_A==" } }],
        ["function-call-b", { google: { thought_signature: "SIG_B==" } }],
      ]);
      expect(assistant).not.toHaveProperty("reasoning_content");
    },
  },
];

/** The provider refuses a follow-up whose assistant turn lacks what it sent, as DeepSeek and Gemini do. */
function strictProvider(request: ChatRequest): ScriptStep | undefined {
  const assistant = request.messages.find((m) => m.role === "assistant") as
    | (Record<string, unknown> & ChatRequest["messages"][number])
    | undefined;
  if (!assistant) return undefined;
  const calls = assistant.tool_calls ?? [];
  if (calls.some((c) => c.id.startsWith("call_00_ds")) && typeof assistant.reasoning_content !== "string") {
    return {
      status: 400,
      error: {
        message: "Missing `reasoning_content` field in the assistant message at message index 2.",
        type: "invalid_request_error",
      },
    };
  }
  if (calls.some((c) => /^function-call-[ab]$/.test(c.id) && !(c as { extra_content?: unknown }).extra_content)) {
    return {
      raw: {
        status: 400,
        headers: JSON_HEADERS,
        body: JSON.stringify([
          {
            error: {
              code: 400,
              message: "Function call is missing a thought_signature in functionCall parts.",
              status: "INVALID_ARGUMENT",
            },
          },
        ]),
      },
    };
  }
  return undefined;
}

function scriptFor(shape: Shape) {
  return (request: ChatRequest, index: number): ScriptStep => {
    if (index > 0) return strictProvider(request) ?? { content: "Done." };
    if (request.stream) return { raw: { body: sse(...shape.stream!()) } };
    return { raw: { headers: JSON_HEADERS, body: JSON.stringify(shape.json!()) } };
  };
}

const cases = SHAPES.flatMap((shape) => [
  ...(shape.stream ? [{ shape, mode: "stream" as const }] : []),
  ...(shape.json ? [{ shape, mode: "json" as const }] : []),
]);

describe.each(ENGINE_KINDS)("%s engine", (engine) => {
  test.each(cases.map((c) => [`${c.shape.name} (${c.mode})`, c] as const))("%s", async (_name, { shape, mode }) => {
    const run = await runProvider({
      engine,
      script: scriptFor(shape),
      settings: mode === "json" ? { stream: false } : {},
    });
    const errors = eventsOf(run.events, "error").map((e) => e.message);
    expect(errors).toEqual([]);
    expect(run.summary.reason).toBe("done");
    for (const [name, content] of Object.entries(shape.files ?? { "notes.txt": "hello\n" }))
      expect(run.file(name)).toBe(content);
    expect(run.requests).toHaveLength(2);
    expect(run.requests.map((r) => Boolean(r.stream))).toEqual(mode === "stream" ? [true, true] : [false, false]);
    const callIds = expectResultsMatchCalls(run.requests[1]!);
    expect(eventsOf(run.events, "tool_call").map((e) => e.id)).toEqual(callIds);
    expect(eventsOf(run.events, "tool_result").every((e) => e.status === "success")).toBe(true);
    expect(eventsOf(run.events, "final").at(-1)?.text).toBe("Done.");
    shape.check?.(run);
  });
});
