import { writeFileSync } from "node:fs";
import { MemorySaver } from "@langchain/langgraph";
import type { CallbackManagerForLLMRun } from "@langchain/core/callbacks/manager";
import { AIMessageChunk, type BaseMessage } from "@langchain/core/messages";
import { ChatGenerationChunk } from "@langchain/core/outputs";
import type { AgentEvent } from "../../src/contracts/events.js";
import { createRuntime } from "../../src/agent/runtime.js";
import { createGraphEngine } from "../../src/graph/engine.js";
import { createGraph } from "../../src/graph/graph.js";
import { createLoopEngine } from "../../src/loop/loop.js";
import { createTools } from "../../src/tools/index.js";
import { engineSettings, inMemoryLoopThreads } from "../helpers/engine-harness.js";
import { ScriptedChatModel, type ScriptedTurn } from "../helpers/scripted-model.js";
import { makeTempDir } from "../helpers/tmp.js";

/**
 * The graph engine streams the model's text as `token` events without LangGraph's "messages"
 * mode (issue 30: that mode's handler keeps every message of a run alive until the run ends):
 * the agent node writes each token as a signal, so the trace gets the same tokens as the loop
 * engine's, in the same place (after the step starts, before the step's calls), and the
 * summary's tokens stay out as before.
 */

/** The scripted model, streamed a word at a time as a provider streams. */
class StreamingModel extends ScriptedChatModel {
  override async *_streamResponseChunks(
    messages: BaseMessage[],
    _options: this["ParsedCallOptions"],
    runManager?: CallbackManagerForLLMRun,
  ): AsyncGenerator<ChatGenerationChunk> {
    const { generations } = await this._generate(messages);
    const message = generations[0]!.message as AIMessageChunk;
    const text = typeof message.content === "string" ? message.content : "";
    const words = text.split(/(?<= )/).filter(Boolean);
    for (const word of words) {
      yield new ChatGenerationChunk({ text: word, message: new AIMessageChunk({ content: word, id: message.id }) });
      await runManager?.handleLLMNewToken(word);
    }
    const calls = (message.tool_calls ?? []).map((c, index) => ({
      name: c.name,
      args: JSON.stringify(c.args),
      id: c.id,
      index,
      type: "tool_call_chunk" as const,
    }));
    yield new ChatGenerationChunk({
      text: "",
      message: new AIMessageChunk({ content: "", id: message.id, tool_call_chunks: calls }),
    });
  }
}

const script = (): ScriptedTurn[] => [
  { content: "Reading the notes first.", toolCalls: [{ name: "read_file", args: { filePath: "notes.txt" } }] },
  "The notes say hello.",
];

async function run(kind: "graph" | "loop", workspace: string): Promise<AgentEvent[]> {
  const model = new StreamingModel(script());
  const settings = engineSettings(workspace);
  const tools = createTools({ workspace });
  const meta = { engine: kind, model: "scripted", provider: settings.provider, workspace };
  const engine =
    kind === "graph"
      ? createGraphEngine({
          graph: createGraph(settings, { checkpointer: new MemorySaver(), model, tools }),
          meta,
          modelSettings: settings,
          approval: settings.approval,
          maxSteps: settings.maxSteps,
        })
      : createLoopEngine({
          runtime: { ...createRuntime(settings, { model, tools }), workspace },
          meta,
          modelSettings: settings,
          memory: inMemoryLoopThreads().memory,
        });
  const events: AgentEvent[] = [];
  await engine.run({
    task: "read the notes",
    threadId: "t1",
    emit: (e) => events.push(e),
    approver: async () => ({ decision: "deny" }),
  });
  return events;
}

/** The events that place the tokens: steps, tokens, calls, results and the answer. */
const shape = (events: AgentEvent[]) =>
  events.flatMap((e) => {
    if (e.type === "step") return [`step ${e.step}`];
    if (e.type === "token") return [`token ${e.step} ${e.text}`];
    if (e.type === "tool_call") return [`call ${e.name}`];
    if (e.type === "tool_result") return [`result ${e.name}`];
    if (e.type === "final") return [`final ${e.text}`];
    return [];
  });

test("the graph engine reports the streamed tokens where the loop engine does, without messages mode", async () => {
  const dir = makeTempDir();
  try {
    writeFileSync(`${dir.dir}/notes.txt`, "hello\n");
    const graph = shape(await run("graph", dir.dir));
    expect(graph).toEqual([
      "step 1",
      "token 1 Reading ",
      "token 1 the ",
      "token 1 notes ",
      "token 1 first.",
      "call read_file",
      "result read_file",
      "step 2",
      "token 2 The ",
      "token 2 notes ",
      "token 2 say ",
      "token 2 hello.",
      "final The notes say hello.",
    ]);
    expect(shape(await run("loop", dir.dir))).toEqual(graph);
  } finally {
    dir.cleanup();
  }
});
