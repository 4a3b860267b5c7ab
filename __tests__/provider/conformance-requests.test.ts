import { sse, type ChatRequest, type ScriptStep } from "../helpers/openai-server.js";
import {
  chunk,
  ENGINE_KINDS,
  eventsOf,
  expectResultsMatchCalls,
  JSON_HEADERS,
  runProvider,
  WRITE_ARGS,
} from "../helpers/provider-run.js";

/**
 * Provider conformance, requests and answers: the exact request bodies each model family and
 * setting produces, parameters a provider rejects, reasoning shown as thinking, and the ends
 * and errors a user must be told about. The real ChatOpenAI through the provider layer, both
 * engines, against answers replayed byte for byte.
 */

const writeCall: ScriptStep = { toolCalls: [{ id: "call_w1", name: "write_file", args: WRITE_ARGS }] };
const done: ScriptStep = { content: "Done." };
const bodyOf = (r: ChatRequest) => r as Record<string, unknown>;

describe.each(ENGINE_KINDS)("%s engine", (engine) => {
  describe("parameters by model family and settings", () => {
    test("OpenAI o3: no temperature, on every request (https://github.com/tarasglek/chatcraft.org/issues/876)", async () => {
      const run = await runProvider({ engine, script: [writeCall, done], settings: { model: "o3" } });
      expect(run.summary.reason).toBe("done");
      expect(run.file("notes.txt")).toBe("hello\n");
      expect(run.requests.map((r) => "temperature" in r)).toEqual([false, false]);
      expect(run.requests.map((r) => r.model)).toEqual(["o3", "o3"]);
      // LangChain sends the system prompt as "developer" to o-series models.
      expect(run.requests[0]!.messages[0]!.role).toBe("developer");
    });

    test("OpenAI gpt-5-mini (the default model): no temperature (https://github.com/QwenLM/qwen-code/issues/921)", async () => {
      const run = await runProvider({ engine, script: [writeCall, done], settings: { model: "gpt-5-mini" } });
      expect(run.summary.reason).toBe("done");
      expect(run.requests.map((r) => "temperature" in r)).toEqual([false, false]);
    });

    test("OpenRouter's vendor prefix is read too: openai/o4-mini gets no temperature (https://openrouter.ai/docs/api-reference/parameters)", async () => {
      const run = await runProvider({ engine, script: [done], settings: { model: "openai/o4-mini" } });
      expect(run.summary.reason).toBe("done");
      expect("temperature" in run.requests[0]!).toBe(false);
    });

    test("other models get temperature 0; MINI_CURSOR_TEMPERATURE sets it, or 'default' leaves it out", async () => {
      const plain = await runProvider({ engine, script: [done], settings: { model: "gpt-4.1-mini" } });
      expect(bodyOf(plain.requests[0]!).temperature).toBe(0);
      const set = await runProvider({ engine, script: [done], settings: { model: "deepseek-chat", temperature: 0.7 } });
      expect(bodyOf(set.requests[0]!).temperature).toBe(0.7);
      const omitted = await runProvider({
        engine,
        script: [done],
        settings: { model: "gpt-4.1-mini", temperature: "default" },
      });
      expect("temperature" in omitted.requests[0]!).toBe(false);
    });

    test("Azure deployment with a custom name rejects temperature: retried once without it, remembered, said in the trace (https://github.com/gabrii/Cursor-Azure-GPT-5/issues/33)", async () => {
      const rejectTemperature = (r: ChatRequest, step: ScriptStep): ScriptStep =>
        "temperature" in r
          ? {
              status: 400,
              error: {
                message:
                  "Unsupported value: 'temperature' does not support 0 with this model. Only the default (1) value is supported.",
                type: "invalid_request_error",
                code: "unsupported_value",
              },
            }
          : step;
      const run = await runProvider({
        engine,
        settings: { model: "my-gpt5-deployment" },
        script: (r, i) => rejectTemperature(r, i < 2 ? writeCall : done),
      });
      expect(eventsOf(run.events, "error")).toEqual([]);
      expect(run.summary.reason).toBe("done");
      expect(run.file("notes.txt")).toBe("hello\n");
      expect(run.requests.map((r) => "temperature" in r)).toEqual([true, false, false]);
      expect(eventsOf(run.events, "notice").map((e) => e.message)).toEqual([
        "The provider rejected the parameter \"temperature\" (HTTP 400: Unsupported value: 'temperature' does not support 0 with this model. Only the default (1) value is supported.); retrying without it for the rest of this run.",
      ]);
    });

    test("Mistral answers 422 to stream_options: retried without it, and never sent again (https://github.com/dnakov/anon-kode/issues/53)", async () => {
      const mistral422 = JSON.stringify({
        object: "error",
        message: {
          detail: [
            {
              type: "extra_forbidden",
              loc: ["body", "stream_options", "include_usage"],
              msg: "Extra inputs are not permitted",
              input: true,
            },
          ],
        },
        type: "invalid_request_error",
        param: null,
        code: null,
      });
      const run = await runProvider({
        engine,
        settings: { model: "mistral-large-latest" },
        script: (r, i) =>
          "stream_options" in r
            ? { raw: { status: 422, headers: JSON_HEADERS, body: mistral422 } }
            : i < 2
              ? writeCall
              : done,
      });
      expect(run.summary.reason).toBe("done");
      expect(run.file("notes.txt")).toBe("hello\n");
      expect(run.requests.map((r) => "stream_options" in r)).toEqual([true, false, false]);
      expect(eventsOf(run.events, "notice").map((e) => e.message)).toEqual([
        'The provider rejected the parameter "stream_options" (HTTP 422: Extra inputs are not permitted (body.stream_options.include_usage)); retrying without it for the rest of this run.',
      ]);
    });

    test("MINI_CURSOR_STREAM_OPTIONS=off: stream_options never sent (Mistral, Databricks and Bedrock gateways)", async () => {
      const run = await runProvider({ engine, script: [writeCall, done], settings: { streamOptions: false } });
      expect(run.summary.reason).toBe("done");
      expect(run.requests.map((r) => "stream_options" in r)).toEqual([false, false]);
      expect(run.requests.map((r) => r.stream)).toEqual([true, true]);
    });

    test("MINI_CURSOR_EXTRA_BODY is merged into every body (vLLM Qwen3 chat_template_kwargs: https://docs.vllm.ai/en/latest/features/reasoning_outputs.html)", async () => {
      const extraBody = { chat_template_kwargs: { enable_thinking: false }, top_p: 0.8 };
      const run = await runProvider({
        engine,
        script: [writeCall, done],
        settings: { model: "Qwen/Qwen3-8B", extraBody },
      });
      expect(run.summary.reason).toBe("done");
      for (const r of run.requests) expect(r).toMatchObject(extraBody);
    });

    test("a max_tokens in the extra body goes to a reasoning model as max_completion_tokens (https://platform.openai.com/docs/guides/reasoning)", async () => {
      const run = await runProvider({
        engine,
        script: [done],
        settings: { model: "o3-mini", extraBody: { max_tokens: 4000 } },
      });
      expect(bodyOf(run.requests[0]!).max_completion_tokens).toBe(4000);
      expect("max_tokens" in run.requests[0]!).toBe(false);
    });
  });

  describe("outgoing messages and tools", () => {
    test("tool schemas carry no $schema (Gemini rejects it: https://github.com/QwenLM/qwen-code/issues/1186); additionalProperties stays unless turned off", async () => {
      const run = await runProvider({ engine, script: [done] });
      const schemas = JSON.stringify(run.requests[0]!.tools!.map((t) => t.function.parameters));
      expect(schemas).not.toContain("$schema");
      const off = await runProvider({ engine, script: [done], settings: { additionalProperties: false } });
      // https://github.com/neoswarm/neosh/issues/74: Gemini's schema subset has no additionalProperties.
      expect(JSON.stringify(off.requests[0]!.tools!.map((t) => t.function.parameters))).not.toContain(
        "additionalProperties",
      );
      expect(off.requests[0]!.tools!.map((t) => t.function.name)).toEqual(
        run.requests[0]!.tools!.map((t) => t.function.name),
      );
    });

    test('issue 29: a gateway that answers 400 Unknown name "additionalProperties" gets the tools without it, once said, for the rest of the run (https://github.com/neoswarm/neosh/issues/74)', async () => {
      const run = await runProvider({
        engine,
        script: (_r, i) => ({ rejectSchemaKeyword: "additionalProperties", ...(i < 2 ? writeCall : done) }),
      });
      expect(eventsOf(run.events, "error")).toEqual([]);
      expect(run.summary.reason).toBe("done");
      expect(run.file("notes.txt")).toBe("hello\n");
      const carried = run.requests.map((r) =>
        JSON.stringify(r.tools!.map((t) => t.function.parameters)).includes('"additionalProperties"'),
      );
      // Refused once, then every request of the run goes without it.
      expect(carried).toEqual([true, false, false]);
      expect(eventsOf(run.events, "notice").map((e) => e.message)).toEqual([
        `The provider rejected the JSON-schema keyword "additionalProperties" in the tool schemas (HTTP 400: Invalid JSON payload received. Unknown name "additionalProperties" at 'tools[0].function_declarations[0].parameters': Cannot find field.); retrying without it for the rest of this run. MINI_CURSOR_ADDITIONAL_PROPERTIES=off leaves it out from the start.`,
      ]);
    });

    test("issue 29: with MINI_CURSOR_ADDITIONAL_PROPERTIES=off the same gateway is never refused", async () => {
      const run = await runProvider({
        engine,
        settings: { additionalProperties: false },
        script: (_r, i) => ({ rejectSchemaKeyword: "additionalProperties", ...(i < 1 ? writeCall : done) }),
      });
      expect(run.summary.reason).toBe("done");
      expect(run.requests).toHaveLength(2);
      expect(eventsOf(run.events, "notice")).toEqual([]);
    });

    test('content null beside tool calls, not "" (Bedrock-backed shims reject it: https://github.com/musistudio/claude-code-router/issues/1329)', async () => {
      const run = await runProvider({ engine, script: [writeCall, done] });
      const assistant = run.requests[1]!.messages.find((m) => m.role === "assistant")!;
      expect(assistant.content).toBeNull();
      expect(assistant.tool_calls!.map((c) => c.id)).toEqual(["call_w1"]);
      expectResultsMatchCalls(run.requests[1]!);
    });
  });

  describe("reasoning shown as thinking, never as the answer", () => {
    test("Groq / OpenRouter `reasoning` field: shown as thinking, not sent back (https://console.groq.com/docs/reasoning, https://openrouter.ai/docs/use-cases/reasoning-tokens)", async () => {
      const stream = sse(
        chunk({ role: "assistant", content: "" }),
        chunk({ reasoning: "Need a file; " }),
        chunk({ reasoning: "use write_file." }),
        chunk({
          tool_calls: [
            {
              index: 0,
              id: "call_groq1",
              type: "function",
              function: { name: "write_file", arguments: JSON.stringify(WRITE_ARGS) },
            },
          ],
        }),
        chunk({}, "tool_calls"),
        "[DONE]",
      );
      const run = await runProvider({
        engine,
        script: [{ raw: { body: stream } }, done],
        settings: { model: "openai/gpt-oss-120b" },
      });
      expect(run.summary.reason).toBe("done");
      expect(run.file("notes.txt")).toBe("hello\n");
      expect(eventsOf(run.events, "thinking").map((e) => e.text)).toEqual(["Need a file; use write_file."]);
      const assistant = run.requests[1]!.messages.find((m) => m.role === "assistant")!;
      expect(assistant).not.toHaveProperty("reasoning_content");
      expect(assistant).not.toHaveProperty("reasoning");
    });

    test("DeepSeek-R1 on Ollama: <think>…</think> in the content is stripped from the answer and the streamed tokens (https://ollama.com/blog/thinking)", async () => {
      const text = "<think>\nThe user greets me. Reply briefly.\n</think>\n\nHello! How can I help?";
      const stream = sse(
        chunk({ role: "assistant", content: "" }),
        ...text.match(/[\s\S]{1,5}/g)!.map((p) => chunk({ content: p })),
        chunk({}, "stop"),
        "[DONE]",
      );
      const run = await runProvider({
        engine,
        script: [{ raw: { body: stream } }],
        task: "hi",
        settings: { model: "deepseek-r1:8b" },
      });
      expect(run.summary.reason).toBe("done");
      expect(eventsOf(run.events, "final").map((e) => e.text)).toEqual(["Hello! How can I help?"]);
      expect(
        eventsOf(run.events, "token")
          .map((e) => e.text)
          .join(""),
      ).toBe("Hello! How can I help?");
      expect(eventsOf(run.events, "thinking").map((e) => e.text)).toEqual(["The user greets me. Reply briefly."]);
    });
  });

  describe("text that only looks like a tool call stays text (https://github.com/ollama/ollama/issues/12174)", () => {
    test.each([
      ["names a tool that was not offered", `{"name": "delete_everything", "arguments": {}}`],
      ["arguments that do not fit the tool's schema", `{"name": "write_file", "arguments": {"path": "notes.txt"}}`],
      [
        "a malformed <tool_call> block",
        `<tool_call>{"name": "write_file", "arguments": {"filePath": "notes.txt"</tool_call>`,
      ],
      ["JSON that is data, not a call", `{"name": "notes", "version": "1.0.0"}`],
    ])("%s", async (_what, text) => {
      const run = await runProvider({ engine, script: [{ content: text }] });
      expect(run.summary.reason).toBe("done");
      expect(eventsOf(run.events, "final").map((e) => e.text)).toEqual([text]);
      expect(eventsOf(run.events, "tool_call")).toEqual([]);
      expect(eventsOf(run.events, "notice")).toEqual([]);
      expect(run.file("notes.txt")).toBeUndefined();
    });
  });

  describe("ends and errors the user is told about (exit 1)", () => {
    const failing = async (script: ScriptStep[]) => {
      const run = await runProvider({ engine, script });
      expect(run.summary.reason).toBe("error");
      expect(run.file("notes.txt")).toBeUndefined();
      return { run, message: eventsOf(run.events, "error").map((e) => e.message)[0] };
    };

    test("Azure content filter: finish_reason content_filter is reported as such (https://learn.microsoft.com/en-us/azure/ai-foundry/openai/concepts/content-filter)", async () => {
      const { run, message } = await failing([{ content: "I can", finishReason: "content_filter" }]);
      expect(message).toBe(
        "The provider's content filter stopped the answer (finish_reason content_filter); rephrase the request or check the provider's content settings.",
      );
      expect(run.requests).toHaveLength(1);
      expect(eventsOf(run.events, "final")).toEqual([]);
    });

    test("finish_reason length is reported as cut off (https://platform.openai.com/docs/api-reference/chat/object)", async () => {
      const { run, message } = await failing([{ content: "The answer starts and", finishReason: "length" }]);
      expect(message).toMatch(/^The answer was cut off at the provider's output token limit \(finish_reason length\)/);
      expect(run.requests).toHaveLength(1);
    });

    test("vLLM before 0.10.1: error body with a top-level message (https://github.com/vllm-project/vllm/issues/12886)", async () => {
      const body = JSON.stringify({
        object: "error",
        message: "This model's maximum context length is 2048 tokens. However, you requested 2723 tokens.",
        type: "BadRequestError",
        param: null,
        code: 400,
      });
      const { run, message } = await failing([{ raw: { status: 400, headers: JSON_HEADERS, body } }]);
      expect(message).toBe(
        `The provider at ${run.server.url} refused the request (HTTP 400): This model's maximum context length is 2048 tokens. However, you requested 2723 tokens.`,
      );
    });

    test("Gemini: error body as a JSON array (https://github.com/TokenRhythm/opensquilla/issues/225)", async () => {
      const body = JSON.stringify([
        {
          error: { code: 400, message: "API key not valid. Please pass a valid API key.", status: "INVALID_ARGUMENT" },
        },
      ]);
      const { run, message } = await failing([{ raw: { status: 400, headers: JSON_HEADERS, body } }]);
      expect(message).toBe(
        `The provider at ${run.server.url} refused the request (HTTP 400): API key not valid. Please pass a valid API key.`,
      );
    });

    test("Mistral 422 validation detail that names no droppable parameter (https://github.com/partITech/php-mistral/issues/76)", async () => {
      const detail = [
        { type: "extra_forbidden", loc: ["body", "tools"], msg: "Extra inputs are not permitted", input: [] },
      ];
      const body = JSON.stringify({
        object: "Error",
        detail,
        message: detail,
        type: "invalid_request_error",
        code: 3001,
      });
      const { run, message } = await failing([{ raw: { status: 422, headers: JSON_HEADERS, body } }]);
      expect(message).toBe(
        `The provider at ${run.server.url} refused the request (HTTP 422): Extra inputs are not permitted (body.tools).`,
      );
      expect(run.requests).toHaveLength(1);
    });

    test("Ollama: error as a plain string under `error` (https://github.com/ollama/ollama/blob/main/docs/api.md#errors)", async () => {
      const body = JSON.stringify({ error: "registry.ollama.ai/library/gemma:2b does not support tools" });
      const { run, message } = await failing([{ raw: { status: 400, headers: JSON_HEADERS, body } }]);
      expect(message).toBe(
        `The provider at ${run.server.url} refused the request (HTTP 400): registry.ollama.ai/library/gemma:2b does not support tools.`,
      );
    });

    test("a proxy's plain-text error body is quoted as it is (issue 12)", async () => {
      const { run, message } = await failing([
        {
          raw: {
            status: 400,
            headers: { "content-type": "text/plain" },
            body: "Invalid request: unknown field tools\n",
          },
        },
      ]);
      expect(message).toBe(
        `The provider at ${run.server.url} refused the request (HTTP 400): Invalid request: unknown field tools.`,
      );
    });

    test("HTTP 200 with an HTML page (a web UI or a proxy's login page): named as such, at once, no retries (issue 12)", async () => {
      const html = "<!DOCTYPE html><html><head><title>Open WebUI</title></head><body>Sign in</body></html>";
      const { run, message } = await failing([
        { raw: { status: 200, headers: { "content-type": "text/html; charset=utf-8" }, body: html } },
      ]);
      expect(message).toBe(
        `The base URL ${run.server.url} answered with a web page, not an API; set OPENAI_BASE_URL to the API's address (usually ending in /v1).`,
      );
      expect(run.requests).toHaveLength(1);
      expect(run.ms).toBeLessThan(2_000);
    });

    test("a website's 404 page (base URL without /v1) is named as a web page too", async () => {
      const { run, message } = await failing([
        {
          raw: {
            status: 404,
            headers: { "content-type": "text/html" },
            body: "<html><body><h1>404 Not Found</h1></body></html>",
          },
        },
      ]);
      expect(message).toMatch(/answered with a web page, not an API/);
      expect(run.requests).toHaveLength(1);
    });
  });
});
