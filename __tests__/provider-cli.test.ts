import { mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { baseEnv, runCli } from "./helpers/cli.js";
import { closedPortUrl, sse, startOpenAIServer, type OpenAIServer, type Script } from "./helpers/openai-server.js";
import { chunk, WRITE_ARGS } from "./helpers/provider-run.js";
import { makeTempDir } from "./helpers/tmp.js";

/**
 * The provider layer as a user meets it: the CLI as a subprocess against the scripted server,
 * with settings from the environment, the trace's thinking and notice lines, and exit codes.
 */

let tmp: ReturnType<typeof makeTempDir>;
let workspace: string;
let server: OpenAIServer | undefined;

beforeEach(() => {
  tmp = makeTempDir();
  workspace = path.join(tmp.dir, "ws");
  mkdirSync(workspace);
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  tmp.cleanup();
});

async function run(script: Script, args: string[], env: NodeJS.ProcessEnv = {}) {
  server = await startOpenAIServer(script);
  return runCli(["--workspace", workspace, "--approval", "full-auto", ...args], {
    env: baseEnv({ OPENAI_BASE_URL: server.url, OPENAI_API_KEY: "test", MINI_CURSOR_MAX_RETRIES: "1", ...env }),
  });
}

const jsonEvents = (stdout: string) =>
  stdout
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Record<string, unknown>);

test("the default model is gpt-5-mini, sent without temperature", async () => {
  const r = await run([{ content: "Hi." }], ["hello"]);
  expect(r.code).toBe(0);
  expect(server!.requests[0]!.model).toBe("gpt-5-mini");
  expect("temperature" in server!.requests[0]!).toBe(false);
});

test("MINI_CURSOR_TEMPERATURE, MINI_CURSOR_EXTRA_BODY and MINI_CURSOR_STREAM_OPTIONS=off shape the request body", async () => {
  const r = await run([{ content: "Hi." }], ["--model", "deepseek-chat", "hello"], {
    MINI_CURSOR_TEMPERATURE: "0.3",
    MINI_CURSOR_EXTRA_BODY: '{"top_p": 0.9}',
    MINI_CURSOR_STREAM_OPTIONS: "off",
  });
  expect(r.code).toBe(0);
  const body = server!.requests[0]!;
  expect(body).toMatchObject({ model: "deepseek-chat", temperature: 0.3, top_p: 0.9, stream: true });
  expect("stream_options" in body).toBe(false);
});

test("a malformed MINI_CURSOR_EXTRA_BODY is a usage error (exit 2) that says what is wrong", async () => {
  const r = await run([], ["hello"], { MINI_CURSOR_EXTRA_BODY: "{top_p: 0.9}" });
  expect(r.code).toBe(2);
  expect(`${r.stdout}${r.stderr}`).toContain('MINI_CURSOR_EXTRA_BODY must be a JSON object such as {"top_p": 0.9}');
  expect(server!.requests).toHaveLength(0);
});

test("MINI_CURSOR_STREAM=off asks for whole JSON answers, and the run still writes the file", async () => {
  const r = await run(
    [{ toolCalls: [{ name: "write_file", args: WRITE_ARGS }] }, { content: "Wrote it." }],
    ["write notes"],
    { MINI_CURSOR_STREAM: "off" },
  );
  expect(r.code).toBe(0);
  expect(readFileSync(path.join(workspace, "notes.txt"), "utf8")).toBe("hello\n");
  expect(server!.requests.map((q) => q.stream)).toEqual([false, false]);
  expect(r.stdout).toContain("Wrote it.");
});

test("the trace shows thinking collapsed and says when a tool call was recovered from text", async () => {
  const thinkingThenText = sse(
    chunk({ role: "assistant", content: "", reasoning_content: "Plan: write the file." }),
    chunk({ content: `<tool_call>{"name": "write_file", "arguments": ${JSON.stringify(WRITE_ARGS)}}</tool_call>` }),
    chunk({}, "stop"),
    "[DONE]",
  );
  const r = await run([{ raw: { body: thinkingThenText } }, { content: "Done." }], ["write notes"]);
  expect(r.code).toBe(0);
  expect(readFileSync(path.join(workspace, "notes.txt"), "utf8")).toBe("hello\n");
  expect(r.stdout).toContain("┊ thought for 1 line (--verbose shows it)");
  expect(r.stdout).toContain(
    "⚠ The model wrote a tool call as text (<tool_call> block); running write_file as a call.",
  );
  expect(r.stdout).not.toContain("Plan: write the file.");
});

test("a content-filtered answer exits 1 and says so, in the trace and in --json", async () => {
  const filtered = { content: "I can", finishReason: "content_filter" };
  const message =
    "The provider's content filter stopped the answer (finish_reason content_filter); rephrase the request or check the provider's content settings.";
  const plain = await run([filtered], ["hello"]);
  expect(plain.code).toBe(1);
  expect(plain.stdout).toContain(`✗ ${message}`);
  await server!.close();
  const json = await run([filtered], ["--json", "hello"]);
  expect(json.code).toBe(1);
  const events = jsonEvents(json.stdout);
  expect(events.filter((e) => e.type === "error")).toEqual([{ type: "error", message }]);
  expect(events.at(-1)).toMatchObject({ type: "run_end", reason: "error" });
});

test("a base URL that answers with a web page exits 1 naming the URL", async () => {
  const page = {
    raw: { headers: { "content-type": "text/html" }, body: "<!doctype html><html><body>Login</body></html>" },
  };
  const r = await run([page], ["hello"]);
  expect(r.code).toBe(1);
  expect(r.stdout).toContain(`The base URL ${server!.url} answered with a web page, not an API`);
  expect(server!.requests).toHaveLength(1);
});

test("a refused local connection exits 1 within 2 s with the URL and a hint, despite retries", async () => {
  const url = await closedPortUrl();
  const r = await runCli(["--workspace", workspace, "--json", "hello"], {
    env: baseEnv({ OPENAI_BASE_URL: url, OPENAI_API_KEY: "x", MINI_CURSOR_MAX_RETRIES: "4" }),
  });
  expect(r.code).toBe(1);
  const events = jsonEvents(r.stdout);
  expect(events.filter((e) => e.type === "error")).toEqual([
    {
      type: "error",
      message: `Could not reach the model provider at ${url} (ECONNREFUSED: nothing listens there); is the server running? Check OPENAI_BASE_URL.`,
    },
  ]);
  // The run itself, without the CLI's start-up; with four retries it took ~22 s before (issue 12).
  const end = events.at(-1) as { type: string; durationMs: number };
  expect(end.type).toBe("run_end");
  expect(end.durationMs).toBeLessThan(2_000);
});

test.each(["graph", "loop"])(
  "--engine %s: DeepSeek's reasoning_content is kept in the saved thread and sent back in the next run",
  async (engine) => {
    const toolTurn = sse(
      chunk({ role: "assistant", content: null, reasoning_content: "Write the file first." }),
      chunk({
        tool_calls: [
          {
            index: 0,
            id: "call_00_keep",
            type: "function",
            function: { name: "write_file", arguments: JSON.stringify(WRITE_ARGS) },
          },
        ],
      }),
      chunk({}, "tool_calls"),
      "[DONE]",
    );
    server = await startOpenAIServer([{ raw: { body: toolTurn } }, { content: "Finished." }]);
    const env = baseEnv({
      OPENAI_BASE_URL: server.url,
      OPENAI_API_KEY: "test",
      MINI_CURSOR_MODEL: "deepseek-reasoner",
    });
    const args = ["--workspace", workspace, "--engine", engine, "--approval", "full-auto", "--thread", "ds"];
    // The first run stops at the step limit right after the call; the second picks the thread up.
    const first = await runCli([...args, "--max-steps", "1", "write notes"], { env });
    expect(first.code).toBe(3);
    const second = await runCli([...args, "go on"], { env });
    expect(second.code).toBe(0);
    const assistant = server.requests[1]!.messages.find((m) => m.role === "assistant") as Record<string, unknown>;
    expect(assistant.reasoning_content).toBe("Write the file first.");
    expect(assistant.content).toBeNull();
    expect(readFileSync(path.join(workspace, "notes.txt"), "utf8")).toBe("hello\n");
  },
);

test("a run with a tool call recovered from text can be recorded and replayed", async () => {
  const hermes = `<tool_call>{"name": "write_file", "arguments": ${JSON.stringify(WRITE_ARGS)}}</tool_call>`;
  server = await startOpenAIServer([{ content: hermes }, { content: "Done." }]);
  const file = path.join(tmp.dir, "run.jsonl");
  const env = baseEnv({ OPENAI_BASE_URL: server.url, OPENAI_API_KEY: "test" });
  const recorded = await runCli(
    ["--workspace", workspace, "--approval", "full-auto", "--record", file, "write notes"],
    { env },
  );
  expect(recorded.code).toBe(0);
  expect(readFileSync(path.join(workspace, "notes.txt"), "utf8")).toBe("hello\n");
  const again = path.join(tmp.dir, "again");
  mkdirSync(again);
  const replayed = await runCli(["--workspace", again, "--approval", "full-auto", "--replay", file, "write notes"], {
    env: baseEnv(),
  });
  expect(replayed.stderr).toBe("");
  expect(replayed.code).toBe(0);
  expect(readFileSync(path.join(again, "notes.txt"), "utf8")).toBe("hello\n");
  expect(replayed.stdout).toContain(
    "⚠ The model wrote a tool call as text (<tool_call> block); running write_file as a call.",
  );
});
