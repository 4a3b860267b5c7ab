import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { baseEnv, runCli } from "./helpers/cli.js";
import { closedPortUrl, startOpenAIServer, type OpenAIServer, type Script } from "./helpers/openai-server.js";
import { makeTempDir } from "./helpers/tmp.js";

/**
 * Black-box runs of the CLI against the scripted OpenAI-compatible server, the way acceptance
 * runs it: `--approval full-auto`, stdin not a terminal, the model's replies scripted.
 */

let tmp: ReturnType<typeof makeTempDir>;
let workspace: string;
let outside: string;
let server: OpenAIServer | undefined;

beforeEach(() => {
  tmp = makeTempDir();
  workspace = path.join(tmp.dir, "ws");
  outside = path.join(tmp.dir, "outside");
  mkdirSync(workspace);
  mkdirSync(outside);
  writeFileSync(path.join(outside, "secret.txt"), "do not touch\n");
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  tmp.cleanup();
});

let engine = "graph";

async function run(script: Script, args: string[], env: NodeJS.ProcessEnv = {}) {
  server = await startOpenAIServer(script);
  return runCli(["--workspace", workspace, "--engine", engine, "--approval", "full-auto", ...args], {
    env: baseEnv({ OPENAI_BASE_URL: server.url, OPENAI_API_KEY: "test", MINI_CURSOR_MAX_RETRIES: "1", ...env }),
  });
}

describe.each(["graph", "loop"])("--engine %s", (engineName) => {
  beforeAll(() => {
    engine = engineName;
  });

  test("does what the calls ask inside the workspace and exits 0", async () => {
    const r = await run(
      [
        { toolCalls: [{ name: "write_file", args: { filePath: "src/hello.txt", content: "hello\n" } }] },
        {
          toolCalls: [
            { name: "execute_command", args: { command: "cat hello.txt > copy.txt", workingDirectory: "src" } },
          ],
        },
        { content: "Wrote and copied." },
      ],
      ["make hello"],
    );
    expect(r.code).toBe(0);
    expect(readFileSync(path.join(workspace, "src", "hello.txt"), "utf8")).toBe("hello\n");
    expect(readFileSync(path.join(workspace, "src", "copy.txt"), "utf8")).toBe("hello\n");
    expect(r.stdout).toContain("Wrote and copied.");
    expect(server!.requests).toHaveLength(3);
  });

  test("paths outside the workspace are refused and left untouched", async () => {
    const r = await run(
      [
        {
          toolCalls: [
            { name: "write_file", args: { filePath: "../outside/secret.txt", content: "pwned" } },
            { name: "read_file", args: { filePath: path.join(outside, "secret.txt") } },
            { name: "list_directory", args: { directoryPath: "~" } },
          ],
        },
        { content: "Could not." },
      ],
      ["escape"],
    );
    expect(r.code).toBe(0);
    expect(readFileSync(path.join(outside, "secret.txt"), "utf8")).toBe("do not touch\n");
    const results = server!.requests[1]!.messages.filter((m) => m.role === "tool").map((m) => String(m.content));
    expect(results).toHaveLength(3);
    for (const result of results) expect(result).toContain("outside the workspace");
  });

  test("bad calls (malformed JSON, unknown tool, wrong argument names) are answered and the run goes on", async () => {
    const r = await run(
      [
        {
          toolCalls: [
            { name: "write_file", args: '{"filePath": "a.txt", "content": "x"' },
            { name: "delete_everything", args: {} },
            { name: "read_file", args: { name: "a.txt" } },
          ],
        },
        { content: "Recovered." },
      ],
      ["go"],
    );
    expect(r.code).toBe(0);
    expect(existsSync(path.join(workspace, "a.txt"))).toBe(false);
    const results = server!.requests[1]!.messages.filter((m) => m.role === "tool").map((m) => String(m.content));
    expect(results).toHaveLength(3);
    expect(results.some((c) => c.includes("not valid JSON"))).toBe(true);
    expect(results.some((c) => c.includes('there is no tool named "delete_everything"'))).toBe(true);
    expect(results.some((c) => /filePath/.test(c))).toBe(true);
    expect(r.stdout).toContain("Recovered.");
  });

  test("429 and 500 are retried", async () => {
    const r = await run([{ status: 429, retryAfter: 0 }, { status: 500 }, { content: "made it" }], ["hi"], {
      MINI_CURSOR_MAX_RETRIES: "3",
    });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("made it");
    expect(server!.requests).toHaveLength(3);
  });

  test("the step limit stops with exit 3 and a summary", async () => {
    const script: Script = (_req, i) => ({
      toolCalls: [{ name: "list_directory", args: { directoryPath: `dir-${i}` } }],
    });
    const r = await run(script, ["--max-steps", "3", "loop"]);
    expect(r.code).toBe(3);
    expect(server!.requests).toHaveLength(3);
    expect(r.stdout).toContain("Stopped at the step limit: 3 steps, 3 tool calls");
    expect(r.stdout).toContain("--max-steps 3");
    expect(r.stderr).not.toMatch(/at .*\.ts:\d+/);
  });

  test("a rejected key ends with one sentence and exit 1", async () => {
    const r = await run(
      [
        {
          status: 401,
          error: { message: "Incorrect API key provided", type: "invalid_request_error", code: "invalid_api_key" },
        },
      ],
      ["hi"],
    );
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("rejected the API key (HTTP 401); check OPENAI_API_KEY.");
    expect(`${r.stdout}${r.stderr}`).not.toMatch(/\n\s+at /);
  });

  test("an unknown model ends with one sentence and exit 1", async () => {
    const r = await run(
      [{ status: 404, error: { message: "The model `nope` does not exist", code: "model_not_found" } }],
      ["--model", "nope", "hi"],
    );
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('does not know the model "nope"');
  });

  test("an unreachable provider ends with one sentence and exit 1, quickly", async () => {
    const url = await closedPortUrl();
    const started = Date.now();
    const r = await runCli(["--workspace", workspace, "hi"], {
      env: baseEnv({ OPENAI_BASE_URL: url, OPENAI_API_KEY: "x", MINI_CURSOR_MAX_RETRIES: "1" }),
    });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("Could not reach the model provider at");
    expect(Date.now() - started).toBeLessThan(30_000);
  });

  test("a second run on the same thread sends the first exchange", async () => {
    server = await startOpenAIServer([{ content: "Beijing is sunny." }, { content: "Shanghai is rainy." }]);
    const env = baseEnv({ OPENAI_BASE_URL: server.url, OPENAI_API_KEY: "test" });
    const first = await runCli(
      ["--workspace", workspace, "--engine", engine, "--thread", "weather", "今天北京天气怎么样"],
      { env },
    );
    const second = await runCli(["--workspace", workspace, "--engine", engine, "--thread", "weather", "那上海呢"], {
      env,
    });
    expect([first.code, second.code]).toEqual([0, 0]);
    const sent = server.requests[1]!.messages.map((m) => [m.role, typeof m.content === "string" ? m.content : ""]);
    expect(sent.slice(1)).toEqual([
      ["user", "今天北京天气怎么样"],
      ["assistant", "Beijing is sunny."],
      ["user", "那上海呢"],
    ]);
  });

  test("parallel tool calls of one turn all run", async () => {
    const r = await run(
      [
        {
          toolCalls: [
            { name: "write_file", args: { filePath: "one.txt", content: "1" } },
            { name: "write_file", args: { filePath: "two.txt", content: "2" } },
            { name: "execute_command", args: { command: "echo three > three.txt" } },
          ],
        },
        { content: "All three." },
      ],
      ["three files"],
    );
    expect(r.code).toBe(0);
    expect(["one.txt", "two.txt", "three.txt"].map((f) => readFileSync(path.join(workspace, f), "utf8"))).toEqual([
      "1",
      "2",
      "three\n",
    ]);
    expect(server!.requests[1]!.messages.filter((m) => m.role === "tool")).toHaveLength(3);
  });

  test("off a terminal, a call that needs approval is declined and the model is told how to allow it", async () => {
    server = await startOpenAIServer([
      { toolCalls: [{ name: "execute_command", args: { command: "touch nope.txt" } }] },
      { content: "ok" },
    ]);
    const r = await runCli(["--workspace", workspace, "--engine", engine, "hi"], {
      env: baseEnv({ OPENAI_BASE_URL: server.url, OPENAI_API_KEY: "test" }),
    });
    // Its only action was not run: not a success.
    expect(r.code).toBe(4);
    expect(existsSync(path.join(workspace, "nope.txt"))).toBe(false);
    const result = server.requests[1]!.messages.find((m) => m.role === "tool");
    expect(String(result?.content)).toContain("--approval full-auto");
  });
});
