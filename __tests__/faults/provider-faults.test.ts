import { afterEach, describe, expect, jest, test } from "@jest/globals";
import type { ScriptStep } from "../helpers/openai-server.js";
import { sse } from "../helpers/openai-server.js";
import { bannerThread, openFixture, resumeSecond, roles, userTexts, type Fixture } from "./harness.js";

/**
 * Providers that fail on the wire, through the real CLI: each failure is said as what happened
 * (the server answered and the connection closed, it closed without answering, it sent a line
 * that is not JSON, it kept failing), every retry line announces an attempt that then happens,
 * and the thread goes on as a valid conversation afterwards, which --undo walks back.
 */

jest.setTimeout(300_000);

const times = <T>(n: number, step: T): T[] => Array.from({ length: n }, () => step);
const retryLines = (stdout: string) => stdout.split("\n").filter((l) => l.startsWith("  … retrying: "));

describe("a provider failing on the wire", () => {
  let fx: Fixture | undefined;
  afterEach(async () => {
    await fx?.close();
    fx = undefined;
  });

  /** The failed turn's request stays in the thread; the next one is answered; --undo takes both back. */
  async function nextConversationAndUndo(first: { stdout: string; stderr: string; code: number | null }) {
    const { next, thread } = await resumeSecond(fx!, { ...first, signal: null });
    expect(userTexts(next)).toEqual(["FIRST", "SECOND"]);
    expect(roles(next)).toEqual(["system", "user", "user"]);
    const undo = await fx!.run(["--thread", thread, "--undo"]);
    expect(undo.code).toBe(0);
    expect(undo.stdout).toContain("SECOND");
  }

  test.each(["graph", "loop"])(
    "the server answers and cuts every response off (%s): said so, with the attempts made, never 'could not reach'",
    async (engine) => {
      const cut: ScriptStep = { content: "one two three", cutAfterChunks: 0 };
      fx = await openFixture("sqlite", [...times(3, cut), { content: "second answer" }]);
      const r1 = await fx.run(["--engine", engine, "FIRST"]);
      expect(r1.code).toBe(1);
      expect(retryLines(r1.stdout)).toEqual([
        "  … retrying: the response broke off (UND_ERR_SOCKET: other side closed) (attempt 2 of 3)",
        "  … retrying: the response broke off (UND_ERR_SOCKET: other side closed) (attempt 3 of 3)",
      ]);
      expect(r1.stdout).toContain(
        `✗ The model provider at ${fx.server.url} answered, but the connection closed before its response ended, after 3 attempts (UND_ERR_SOCKET: other side closed). ` +
          "It is reachable, so OPENAI_BASE_URL is right: try again, and if it keeps happening, check the server's logs, or a proxy between that cuts long responses.\n",
      );
      expect(r1.stdout + r1.stderr).not.toMatch(/Could not reach|check OPENAI_BASE_URL/);
      expect(fx.server.requests).toHaveLength(3);
      await nextConversationAndUndo(r1);
    },
  );

  test("the server closes every connection without answering: said so, each retry line followed by its attempt", async () => {
    fx = await openFixture("sqlite", [...times(3, { hangUp: true }), { content: "second answer" }]);
    const r1 = await fx.run(["FIRST"], { MINI_CURSOR_MAX_RETRIES: "2" });
    expect(r1.code).toBe(1);
    expect(retryLines(r1.stdout)).toEqual([
      "  … retrying: the provider closed the connection before it answered (UND_ERR_SOCKET: other side closed) (attempt 2 of 3)",
      "  … retrying: the provider closed the connection before it answered (UND_ERR_SOCKET: other side closed) (attempt 3 of 3)",
    ]);
    expect(r1.stdout).toContain(
      `✗ The model provider at ${fx.server.url} accepted the connection but closed it before answering, after 3 attempts (UND_ERR_SOCKET: other side closed). ` +
        "Something listens there but does not answer as an OpenAI-compatible API would: check the server's logs, and that OPENAI_BASE_URL names its API (http or https, the port).\n",
    );
    expect(r1.stdout).not.toContain("Could not reach");
    expect(fx.server.requests).toHaveLength(3);
    await nextConversationAndUndo(r1);
  });

  test("an HTTP error on every attempt: the retry lines count the attempts that happen, and no more", async () => {
    fx = await openFixture("sqlite", [...times(2, { status: 500 }), { content: "second answer" }]);
    const r1 = await fx.run(["FIRST"], { MINI_CURSOR_MAX_RETRIES: "1" });
    expect(r1.code).toBe(1);
    expect(retryLines(r1.stdout)).toEqual(["  … retrying: the provider answered HTTP 500 (attempt 2 of 2)"]);
    expect(r1.stdout).toContain(
      `✗ The provider at ${fx.server.url} failed with HTTP 500 after 2 attempts: scripted fault: HTTP 500; try again later.\n`,
    );
    expect(fx.server.requests).toHaveLength(2);
    await nextConversationAndUndo(r1);
  });

  test("a stream event that is not JSON: one sentence naming it, no parser dump, not retried", async () => {
    const chunk = (delta: object, finish: string | null = null) => ({
      id: "c1",
      object: "chat.completion.chunk",
      created: 1,
      model: "m",
      choices: [{ index: 0, delta, finish_reason: finish }],
    });
    const garbage: ScriptStep = {
      raw: {
        body: [
          ...sse(chunk({ role: "assistant", content: "" }), chunk({ content: "Hello" })),
          'data: {"choices": [ this is not json\n\n',
          ...sse(chunk({}, "stop"), "[DONE]"),
        ],
      },
    };
    fx = await openFixture("sqlite", [garbage, { content: "second answer" }]);
    const r1 = await fx.run(["FIRST"], { MINI_CURSOR_MAX_RETRIES: "2" });
    expect(r1.code).toBe(1);
    expect(r1.stdout).toContain(
      `✗ The model provider at ${fx.server.url} sent a stream event that is not a JSON object (data: {"choices": [ this is not json), so its response cannot be read. ` +
        "It does not stream OpenAI's format, or something between rewrote the stream: check OPENAI_BASE_URL, or set MINI_CURSOR_STREAM=off to ask for whole responses.\n",
    );
    expect(r1.stderr).toBe("");
    expect(r1.stdout).not.toMatch(/Could not parse|From chunk|retrying/);
    expect(fx.server.requests).toHaveLength(1);
    expect(bannerThread(r1.stdout)).toBeTruthy();
    await nextConversationAndUndo(r1);
  });
});
