import { PassThrough } from "node:stream";
import { AIMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { MemorySaver } from "@langchain/langgraph";
import { ToolNode } from "@langchain/langgraph/prebuilt";
import { z } from "zod";
import type { AgentEvent } from "../../src/contracts/events.js";
import { createRuntime } from "../../src/agent/runtime.js";
import { createGraph } from "../../src/graph/graph.js";
import { createGraphEngine } from "../../src/graph/engine.js";
import { createLoopEngine } from "../../src/loop/loop.js";
import { ToolFailure } from "../../src/guard/failure.js";
import { guardTool } from "../../src/guard/guard.js";
import { MAX_TOOL_RESULT_CHARS, resultsGuard } from "../../src/guard/results.js";
import { createJsonRenderer, createPrettyRenderer } from "../../src/ui/render.js";
import { engineSettings, inMemoryLoopThreads } from "../helpers/engine-harness.js";
import { ScriptedChatModel } from "../helpers/scripted-model.js";
import { makeTempDir } from "../helpers/tmp.js";

const SECRET = "sk-test-0123456789abcdef";

/** A tool as any tool is written: LangChain's tool() with a zod schema, inside the results guard. */
const lookupTool = tool(
  async ({ key }: { key: string }) => {
    if (key.startsWith("bad")) throw new ToolFailure(`Error: no entry for ${key} (token ${SECRET}).`, { exitCode: 3 });
    if (key === "huge") return ["x".repeat(MAX_TOOL_RESULT_CHARS + 1000), undefined];
    if (key === "bug") throw new TypeError(`cannot read ${SECRET}`);
    return [`value of ${key} is ${SECRET}`, { diff: `--- a/${key}\n+++ b/${key}\n-${SECRET}` }];
  },
  {
    name: "lookup",
    description: "Looks a key up. Fails for keys starting with 'bad'.",
    schema: z.object({ key: z.string().describe("The key.") }),
    responseFormat: "content_and_artifact",
  },
);
const lookup = () => guardTool(lookupTool, [resultsGuard([SECRET])]);

const call = (key: string, id = `call-${key}`) => ({ id, name: "lookup", args: { key }, type: "tool_call" as const });

describe("the results guard", () => {
  const built = lookup();

  test("a result is content and artifact, secrets blanked in both", async () => {
    const message = (await built.invoke(call("a"))) as ToolMessage;
    expect(ToolMessage.isInstance(message)).toBe(true);
    expect(message.status).toBe("success");
    expect(message.content).toBe("value of a is [redacted]");
    expect(message.artifact).toEqual({ diff: "--- a/a\n+++ b/a\n-[redacted]" });
    // Called with bare arguments (scripts, tests), a tool returns the text.
    expect(await built.invoke({ key: "a" })).toBe("value of a is [redacted]");
  });

  test("a refusal is a ToolMessage with status error, its details as the artifact, secrets blanked", async () => {
    const message = (await built.invoke(call("bad-1"))) as ToolMessage;
    expect(message).toMatchObject({
      status: "error",
      name: "lookup",
      tool_call_id: "call-bad-1",
      artifact: { exitCode: 3 },
    });
    expect(message.content).toBe("Error: no entry for bad-1 (token [redacted]).");
    expect(await built.invoke({ key: "bad-2" })).toBe("Error: no entry for bad-2 (token [redacted]).");
  });

  test("any other error becomes the call's result in the words LangGraph's ToolNode uses, its message blanked", async () => {
    const message = (await built.invoke(call("bug"))) as ToolMessage;
    expect([message.status, message.content]).toEqual([
      "error",
      "Error: cannot read [redacted]\n Please fix your mistakes.",
    ]);
    const node = new ToolNode([lookup()]);
    const out = (await node.invoke({ messages: [new AIMessage({ content: "", tool_calls: [call("bug")] })] })) as {
      messages: ToolMessage[];
    };
    expect(out.messages.map((m) => [m.status, m.content])).toEqual([
      ["error", "Error: cannot read [redacted]\n Please fix your mistakes."],
    ]);
  });

  test("a result longer than the cap keeps its start and end", async () => {
    const text = String(((await built.invoke(call("huge"))) as ToolMessage).content);
    expect(text.length).toBeLessThan(MAX_TOOL_RESULT_CHARS + 200);
    expect(text).toContain("[… 1,000 characters not shown: the result was longer than 200,000 characters …]");
    expect(text.startsWith("xxx")).toBe(true);
    expect(text.endsWith("xxx")).toBe(true);
  });
});

describe.each(["graph", "loop"] as const)("a failed call through the %s engine", (kind) => {
  let tmp: ReturnType<typeof makeTempDir>;
  beforeEach(() => (tmp = makeTempDir()));
  afterEach(() => tmp.cleanup());

  test("carries status error to the trace (✗), --json, the saved state Studio shows, and the model's ToolMessage", async () => {
    const settings = engineSettings(tmp.dir, { approval: "full-auto" });
    const model = new ScriptedChatModel([{ toolCalls: [{ name: "lookup", args: { key: "bad-key" } }] }, "It failed."]);
    const tools = [lookup()];
    const meta = { engine: kind, model: "scripted", provider: "offline", workspace: tmp.dir };
    let saved: () => Promise<unknown[]>;
    let engine;
    if (kind === "graph") {
      const graph = createGraph(settings, { checkpointer: new MemorySaver(), model, tools });
      engine = createGraphEngine({ graph, meta, modelSettings: settings, approval: "full-auto", maxSteps: 5 });
      // What Studio shows: the thread's state, as GET /threads/<id>/state returns it.
      saved = async () => (await graph.getState({ configurable: { thread_id: "t1" } })).values.messages;
    } else {
      const { threads, memory } = inMemoryLoopThreads();
      engine = createLoopEngine({
        runtime: createRuntime(settings, { model, tools }),
        meta,
        modelSettings: settings,
        memory,
      });
      saved = async () => threads.get("t1")?.messages ?? [];
    }
    const pretty = new PassThrough();
    const json = new PassThrough();
    let trace = "";
    let jsonl = "";
    pretty.on("data", (d: Buffer) => (trace += d.toString()));
    json.on("data", (d: Buffer) => (jsonl += d.toString()));
    const renderers = [
      createPrettyRenderer({ color: false, spinner: false, verbose: false, out: pretty }),
      createJsonRenderer({ verbose: false, out: json }),
    ];
    const events: AgentEvent[] = [];
    const emit = (e: AgentEvent) => {
      events.push(e);
      for (const r of renderers) r.event(e);
    };
    const summary = await engine.run({
      task: "look it up",
      threadId: "t1",
      emit,
      approver: async () => ({ decision: "deny" }),
    });
    expect(summary.reason).toBe("done");

    const content = "Error: no entry for bad-key (token [redacted]).";
    // The trace: ✗ with the exit code from the failure's details.
    expect(trace).toMatch(/\n {2}✗ lookup exit 3, 1 lines, /);
    // --json: the tool_result line.
    const line = jsonl
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as AgentEvent)
      .find((e) => e.type === "tool_result");
    expect(line).toMatchObject({ type: "tool_result", name: "lookup", status: "error", exitCode: 3, content });
    // The saved state (Studio's view of the thread).
    const stored = (await saved()).filter((m): m is ToolMessage => ToolMessage.isInstance(m));
    expect(stored.map((m) => [m.status, m.content])).toEqual([["error", content]]);
    // The model's next request.
    const sent = model.calls[1]!.filter((m): m is ToolMessage => ToolMessage.isInstance(m));
    expect(sent.map((m) => [m.status, m.content])).toEqual([["error", content]]);
  });
});
