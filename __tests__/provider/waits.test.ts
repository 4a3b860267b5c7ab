import { HumanMessage } from "@langchain/core/messages";
import { callModelWithRetry } from "../../src/models/invoke.js";
import { createChatModel, describeModelError, type ModelSettings } from "../../src/models/model.js";
import type { ProviderNote } from "../../src/provider/message.js";
import { closedPortUrl, startOpenAIServer, type OpenAIServer, type Script } from "../helpers/openai-server.js";
import { QUIET_WAITS_MS } from "../helpers/cli.js";

/**
 * Issue 26 item 6 and issue 31 item 4, on the wire: a provider that is silent before or inside
 * its response is reported after MINI_CURSOR_TIMEOUT_MS, once, never retried; one that cannot
 * be reached is reported at once; waits and retries are told while they happen. Short limits
 * here: the default limits are a timing goal for the benchmark, not for tests.
 */

let server: OpenAIServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function serve(script: Script): Promise<OpenAIServer> {
  server = await startOpenAIServer(script);
  return server;
}

function settingsFor(url: string, overrides: Partial<ModelSettings> = {}): ModelSettings {
  return {
    model: "gpt-4o-mini",
    apiKey: "test",
    baseUrl: url,
    provider: "openai-compatible",
    requestTimeoutMs: 800,
    maxRetries: 3,
    waitNoticeMs: QUIET_WAITS_MS,
    ...overrides,
  };
}

const ask = [new HumanMessage("hi")];
const long = "one two three four five six seven eight nine ten";

/** The call's error, the notes told on the way, and the sentence the user sees. */
async function failing(settings: ModelSettings): Promise<{ err: Error; notes: ProviderNote[]; said: string }> {
  const notes: ProviderNote[] = [];
  try {
    await callModelWithRetry(createChatModel(settings), ask, undefined, { onProviderNote: (n) => notes.push(n) });
  } catch (err) {
    return { err: err as Error, notes, said: describeModelError(err, settings) };
  }
  throw new Error("expected the call to fail");
}

describe("a silent provider is reported after the limit, once, not retried", () => {
  test("accepts the connection and sends nothing", async () => {
    const s = await serve(() => ({ silent: true }));
    const { said, notes } = await failing(settingsFor(s.url));
    expect(said).toBe(
      `The model provider at ${s.url} accepted the connection but sent no response for 0.8 s (the limit, MINI_CURSOR_TIMEOUT_MS=800); try again, check the server, or raise MINI_CURSOR_TIMEOUT_MS for a model that thinks long before it answers.`,
    );
    expect(s.requests).toHaveLength(1);
    expect(notes).toEqual([]);
  });

  test("sends the headers and then nothing", async () => {
    const s = await serve(() => ({ content: long, stallAfterChunks: 0 }));
    const { said } = await failing(settingsFor(s.url));
    expect(said).toMatch(
      new RegExp(
        `^The model provider at ${s.url.replace(/[./]/g, "\\$&")} started a response but sent nothing in it for 0\\.8 s`,
      ),
    );
    expect(s.requests).toHaveLength(1);
  });

  test("stalls mid-stream: MINI_CURSOR_TIMEOUT_MS is the limit there too", async () => {
    const s = await serve(() => ({ content: long, stallAfterChunks: 3 }));
    const { said } = await failing(settingsFor(s.url));
    expect(said).toMatch(
      /stopped sending in the middle of the response for 0\.8 s \(the limit, MINI_CURSOR_TIMEOUT_MS=800\)/,
    );
    expect(s.requests).toHaveLength(1);
  });

  test("a non-streamed answer (MINI_CURSOR_STREAM=off) that never comes is reported the same way", async () => {
    const s = await serve(() => ({ silent: true }));
    const { said } = await failing(settingsFor(s.url, { stream: false }));
    expect(said).toMatch(/accepted the connection but sent no response for 0\.8 s/);
    expect(s.requests).toHaveLength(1);
  });
});

describe("waits and retries are told while they happen", () => {
  test("a slow answer is announced once, then arrives", async () => {
    const s = await serve([{ content: "late but fine", delayMs: 1_200 }]);
    const notes: ProviderNote[] = [];
    const settings = settingsFor(s.url, { requestTimeoutMs: 20_000, waitNoticeMs: 100 });
    const reply = await callModelWithRetry(createChatModel(settings), ask, undefined, {
      onProviderNote: (n) => notes.push(n),
    });
    expect(reply.content).toBe("late but fine");
    expect(notes).toEqual([
      {
        kind: "wait",
        text: `waiting for the model provider at ${s.url}: no response yet (gives up after 20 s)`,
      },
    ]);
  });

  test("an HTTP 503 is retried and the retry says why", async () => {
    const s = await serve([{ status: 503 }, { content: "ok" }]);
    const notes: ProviderNote[] = [];
    const reply = await callModelWithRetry(createChatModel(settingsFor(s.url)), ask, undefined, {
      onProviderNote: (n) => notes.push(n),
    });
    expect(reply.content).toBe("ok");
    expect(notes).toEqual([{ kind: "wait", text: "retrying: the provider answered HTTP 503 (attempt 2 of 4)" }]);
  });

  test("a 429 with retry-after says the provider asked to wait", async () => {
    const s = await serve([{ status: 429, retryAfter: 1 }, { content: "ok" }]);
    const notes: ProviderNote[] = [];
    await callModelWithRetry(createChatModel(settingsFor(s.url)), ask, undefined, {
      onProviderNote: (n) => notes.push(n),
    });
    expect(notes).toEqual([
      {
        kind: "wait",
        text: "retrying: the provider is rate limiting (HTTP 429, the provider asked to wait 1 s) (attempt 2 of 4)",
      },
    ]);
  });

  test("a stream cut off mid-way is retried, and the retry says so", async () => {
    const s = await serve([{ content: long, cutAfterChunks: 3 }, { content: "whole" }]);
    const notes: ProviderNote[] = [];
    const reply = await callModelWithRetry(createChatModel(settingsFor(s.url)), ask, undefined, {
      onProviderNote: (n) => notes.push(n),
    });
    expect(reply.content).toBe("whole");
    expect(notes).toHaveLength(1);
    expect(notes[0]!.kind).toBe("wait");
    expect(notes[0]!.text).toMatch(/^retrying: the response broke off \(.+\) \(attempt 2 of 3\)$/);
  });
});

describe("an unreachable provider is reported at once, not after retries", () => {
  test("a name that does not resolve", async () => {
    const url = "http://nonexistent.invalid/v1";
    const { said, notes } = await failing(settingsFor(url));
    // Offline DNS answers EAI_AGAIN instead of ENOTFOUND; both are one sentence, no retry.
    expect([
      `Could not reach the model provider at ${url}: the name nonexistent.invalid does not resolve (ENOTFOUND); check OPENAI_BASE_URL for a typo.`,
      `Could not reach the model provider at ${url}: the name nonexistent.invalid could not be looked up (EAI_AGAIN: no answer from DNS); is this machine online? Check OPENAI_BASE_URL.`,
    ]).toContain(said);
    expect(notes).toEqual([]);
  });

  test("localhost:1 (a port fetch refuses to try)", async () => {
    const url = "http://localhost:1/v1";
    const { said, notes } = await failing(settingsFor(url));
    expect(said).toBe(
      `Could not reach the model provider at ${url}: Node's fetch never connects to port 1 (it is reserved for other protocols); check the port in OPENAI_BASE_URL.`,
    );
    expect(notes).toEqual([]);
  });

  test("a closed port on this machine", async () => {
    const url = await closedPortUrl();
    const { said, notes } = await failing(settingsFor(url));
    expect(said).toBe(
      `Could not reach the model provider at ${url} (ECONNREFUSED: nothing listens there); is the server running? Check OPENAI_BASE_URL.`,
    );
    expect(notes).toEqual([]);
  });
});
