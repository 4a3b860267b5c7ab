import { writeFileSync } from "node:fs";
import { jest } from "@jest/globals";
import path from "node:path";
import { baseEnv, runCli } from "./helpers/cli.js";
import { startOpenAIServer, type OpenAIServer } from "./helpers/openai-server.js";
import { makeTempDir } from "./helpers/tmp.js";

/**
 * Issue 31 items 4 and 5 and issue 26 item 6 through the real CLI: settings and flags that say
 * what is wrong with them, a provider that is unreachable or silent reported in one sentence
 * (with short limits: the default limits are a timing goal for the benchmark), waits as
 * `notice` events in --json, and a long request echoed shortened.
 */

jest.setTimeout(120_000);

let tmp: ReturnType<typeof makeTempDir>;
let server: OpenAIServer | undefined;
beforeEach(() => {
  tmp = makeTempDir();
  writeFileSync(path.join(tmp.dir, "hello.txt"), "hello\n");
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  tmp.cleanup();
});

const run = (args: string[], env: NodeJS.ProcessEnv = {}) =>
  runCli(["--workspace", tmp.dir, ...args], { env: baseEnv(env) });

describe("usage errors name what was given", () => {
  test("an invalid setting names the variable and the value it got (exit 2)", async () => {
    const r = await run(["hi"], { MINI_CURSOR_APPROVAL: "yolo" });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      "mini-cursor: MINI_CURSOR_APPROVAL=yolo is not valid: use one of suggest, auto-edit, full-auto, plan.\n",
    );
  });

  test("a base URL without http:// or https:// is refused at once, with the fix", async () => {
    const r = await run(["hi"], { OPENAI_BASE_URL: "localhost:11434/v1" });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      "mini-cursor: OPENAI_BASE_URL=localhost:11434/v1 must start with http:// or https://: set OPENAI_BASE_URL=http://localhost:11434/v1 (or https:// for a remote provider).\n",
    );
  });

  test("--force without --undo is a usage error", async () => {
    const r = await run(["--force", "hi"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      "mini-cursor: --force only goes with --undo (it overwrites files changed by hand while undoing); add --undo, or leave --force out.\n",
    );
  });
});

describe("a provider that cannot answer is reported in one sentence", () => {
  test("a name that does not resolve: exit 1, no retries", async () => {
    const url = "http://nonexistent.invalid/v1";
    const r = await run(["--json", "hi"], { OPENAI_BASE_URL: url, OPENAI_API_KEY: "test" });
    expect(r.code).toBe(1);
    const events = r.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { type: string; message?: string });
    const errors = events.filter((e) => e.type === "error").map((e) => e.message);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(
      /^Could not reach the model provider at http:\/\/nonexistent\.invalid\/v1: the name nonexistent\.invalid (does not resolve \(ENOTFOUND\)|could not be looked up \(EAI_AGAIN)/,
    );
    expect(events.filter((e) => e.type === "notice")).toEqual([]);
  });

  test("a provider that accepts the connection and never answers: reported after MINI_CURSOR_TIMEOUT_MS, once", async () => {
    server = await startOpenAIServer(() => ({ silent: true }));
    const r = await run(["hi"], {
      OPENAI_BASE_URL: server.url,
      OPENAI_API_KEY: "test",
      MINI_CURSOR_TIMEOUT_MS: "5000",
    });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(
      `✗ The model provider at ${server.url} accepted the connection but sent no response for 5 s (the limit, MINI_CURSOR_TIMEOUT_MS=5000); try again, check the server, or raise MINI_CURSOR_TIMEOUT_MS for a model that thinks long before it answers.\n`,
    );
    // Never retried (on a busy machine the request may not even have been read in time).
    expect(server.requests.length).toBeLessThanOrEqual(1);
  });

  test("a stream that stalls mid-way obeys MINI_CURSOR_TIMEOUT_MS too", async () => {
    server = await startOpenAIServer(() => ({ content: "one two three four five", stallAfterChunks: 2 }));
    const r = await run(["hi"], {
      OPENAI_BASE_URL: server.url,
      OPENAI_API_KEY: "test",
      MINI_CURSOR_TIMEOUT_MS: "5000",
    });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("stopped sending in the middle of the response for 5 s");
    // Never retried (on a busy machine the request may not even have been read in time).
    expect(server.requests.length).toBeLessThanOrEqual(1);
  });

  test("--json: a wait longer than MINI_CURSOR_WAIT_NOTICE_MS is a notice event saying what it waits for", async () => {
    server = await startOpenAIServer([{ content: "late", delayMs: 1_500 }]);
    const r = await run(["--json", "hi"], {
      OPENAI_BASE_URL: server.url,
      OPENAI_API_KEY: "test",
      MINI_CURSOR_WAIT_NOTICE_MS: "200",
    });
    expect(r.code).toBe(0);
    const notices = r.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { type: string })
      .filter((e) => e.type === "notice");
    expect(notices).toEqual([
      {
        type: "notice",
        step: 1,
        message: `waiting for the model provider at ${server.url}: no response yet (gives up after 60 s)`,
        wait: true,
      },
    ]);
  });

  test("a retry is said in the trace (off a terminal, as a line), with why", async () => {
    server = await startOpenAIServer([{ status: 503 }, { content: "ok" }]);
    const r = await run(["hi"], { OPENAI_BASE_URL: server.url, OPENAI_API_KEY: "test", MINI_CURSOR_MAX_RETRIES: "2" });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("  … retrying: the provider answered HTTP 503 (attempt 2 of 3)\n");
  });
});

test("the trace echoes a long request as head … tail with its size", async () => {
  const request = `read hello.txt ${"x".repeat(100_000)} END-OF-REQUEST`;
  const r = await run([request]);
  const echo = r.stdout.split("\n").find((l) => l.startsWith("❯ "))!;
  expect(echo.length).toBeLessThan(700);
  expect(echo).toMatch(
    /^❯ read hello\.txt x+ … \[request of 97\.7 KB, 1 line; the middle is not shown here\] … x+ END-OF-REQUEST$/,
  );
});
