import { mkdirSync, readdirSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, expect, jest, test } from "@jest/globals";
import { canRehearse, rehearseFirstStep, type RehearsalInput } from "../../src/agent/rehearsal.js";
import { createTools } from "../../src/tools/index.js";
import type { ChatRequest } from "../helpers/openai-server.js";
import { makeTempDir } from "../helpers/tmp.js";

let tmp: ReturnType<typeof makeTempDir>;
let workspace: string;
let tempRoot: string;

beforeEach(() => {
  tmp = makeTempDir();
  workspace = path.join(tmp.dir, "ws");
  tempRoot = path.join(tmp.dir, "tmp");
  for (const dir of [workspace, tempRoot]) mkdirSync(dir);
});
afterEach(() => tmp.cleanup());

function input(extra: Partial<RehearsalInput> = {}): RehearsalInput {
  return {
    modelSettings: {
      model: "gpt-4o-mini",
      apiKey: "sk-test",
      baseUrl: "http://127.0.0.1:9/v1",
      provider: "openai-compatible",
      requestTimeoutMs: 60_000,
      maxRetries: 2,
    },
    tools: createTools({ workspace }),
    systemPrompt: "You are a rehearsal.",
    contextTokens: 100_000,
    tempRoot,
    ...extra,
  };
}

test("the rehearsal answers from memory: no request leaves the process, and its folder is gone afterwards", async () => {
  const fetchSpy = jest.spyOn(globalThis, "fetch");
  try {
    await rehearseFirstStep(input());
    expect(fetchSpy).not.toHaveBeenCalled();
  } finally {
    fetchSpy.mockRestore();
  }
  expect(readdirSync(tempRoot)).toEqual([]);
  expect(readdirSync(workspace)).toEqual([]);
});

/** A streamed answer that ends the turn with "Done.", as OpenAI sends it. */
function doneAnswer(): Response {
  const chunk = { id: "x", object: "chat.completion.chunk", created: 0, model: "m" };
  const done = {
    ...chunk,
    choices: [{ index: 0, delta: { role: "assistant", content: "Done." }, finish_reason: "stop" }],
  };
  return new Response(`data: ${JSON.stringify(done)}\n\ndata: [DONE]\n\n`, {
    headers: { "content-type": "text/event-stream" },
  });
}

test("the rehearsal's request is the second step's: the session's tools, an assistant tool call and its result", async () => {
  const sent: ChatRequest[] = [];
  const real = input();
  // The canned wire, watched: the same answer, after the request is noted.
  await rehearseFirstStep(
    input({
      wire: async (_url, init) => {
        sent.push(JSON.parse(init!.body as string) as ChatRequest);
        return doneAnswer();
      },
    }),
  );
  expect(sent).toHaveLength(1);
  expect(sent[0]!.messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool"]);
  expect(sent[0]!.tools!.map((t) => t.function.name)).toEqual(real.tools.map((t) => t.name));
  expect(readdirSync(tempRoot)).toEqual([]);
});

test("a rehearsal that fails says so to its caller and still removes its folder", async () => {
  const failing = input({ wire: async () => Promise.reject(new Error("wire down")) });
  await expect(rehearseFirstStep(failing)).rejects.toThrow();
  expect(readdirSync(tempRoot)).toEqual([]);
  expect(readdirSync(workspace)).toEqual([]);
});

test("only a model that answers over HTTP is rehearsed", () => {
  const base = input().modelSettings;
  expect(canRehearse(base)).toBe(true);
  expect(canRehearse({ ...base, provider: "offline" })).toBe(false);
  expect(canRehearse({ ...base, replay: "/tmp/r.jsonl" })).toBe(false);
  expect(canRehearse({ ...base, record: "/tmp/r.jsonl" })).toBe(false);
});

test("a rehearsal told the real answer came stops after its model turn, its folder removed", async () => {
  let requests = 0;
  const counted = input();
  await rehearseFirstStep({
    ...counted,
    stop: () => requests > 0,
    wire: async () => {
      requests++;
      return doneAnswer();
    },
  });
  expect(requests).toBe(1);
  expect(readdirSync(tempRoot)).toEqual([]);
});
