import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { HumanMessage, type BaseMessage } from "@langchain/core/messages";
import { MemorySaver } from "@langchain/langgraph";
import { createGraph } from "../../src/graph/graph.js";
import { createTools } from "../../src/tools/index.js";
import { engineSettings } from "../helpers/engine-harness.js";
import { ScriptedChatModel } from "../helpers/scripted-model.js";
import { makeTempDir } from "../helpers/tmp.js";

/**
 * Time travel with two threads in one workspace: forking thread A back to an earlier checkpoint
 * puts back only the files A changed since, and keeps (and names) what thread B and the person
 * changed meanwhile, as /undo does for a turn.
 */

let tmp: ReturnType<typeof makeTempDir>;
beforeEach(() => (tmp = makeTempDir()));
afterEach(() => tmp.cleanup());

const read = (name: string) => readFileSync(path.join(tmp.dir, name), "utf8");

test("forking thread A restores only A's files; B's files and files the person changed since stay and are named", async () => {
  const model = new ScriptedChatModel([
    { toolCalls: [{ name: "write_file", args: { filePath: "notes.txt", content: "v1\n" } }] },
    "A wrote v1.",
    { toolCalls: [{ name: "write_file", args: { filePath: "b.txt", content: "from B\n" } }] },
    "B wrote b.txt.",
    {
      toolCalls: [
        { name: "write_file", args: { filePath: "notes.txt", content: "v2\n" } },
        { name: "write_file", args: { filePath: "extra.txt", content: "extra\n" } },
      ],
    },
    "A wrote v2.",
    "Back at v1.",
  ]);
  const graph = createGraph(engineSettings(tmp.dir), {
    checkpointer: new MemorySaver(),
    model,
    tools: createTools({ workspace: tmp.dir }),
  });
  const run = (thread: string, task: string, checkpointId?: string) =>
    graph.invoke(
      { messages: [new HumanMessage(task)] },
      {
        configurable: { thread_id: thread, ...(checkpointId ? { checkpoint_id: checkpointId } : {}) },
        recursionLimit: 100,
      },
    );

  await run("A", "Write notes v1.");
  await run("B", "Write b.txt.");
  await run("A", "Write notes v2 and extra.");
  // The person edits one of A's files and adds one of their own.
  writeFileSync(path.join(tmp.dir, "notes.txt"), "the person's notes\n");
  writeFileSync(path.join(tmp.dir, "person.txt"), "mine\n");

  const history = [];
  for await (const state of graph.getStateHistory({ configurable: { thread_id: "A" } })) history.push(state);
  const endOfFirst = history.find(
    (s) => s.next.length === 0 && (s.values as { messages: BaseMessage[] }).messages.length === 4,
  )!;
  expect((endOfFirst.values as { messages: BaseMessage[] }).messages.at(-1)!.content).toBe("A wrote v1.");
  const forked = await run("A", "Go on from v1.", endOfFirst.config.configurable!.checkpoint_id as string);

  // A created extra.txt after that checkpoint and nobody touched it since: gone.
  expect(existsSync(path.join(tmp.dir, "extra.txt"))).toBe(false);
  // A changed notes.txt since, but so did the person: kept, and named.
  expect(read("notes.txt")).toBe("the person's notes\n");
  // B's file and the person's own file are not A's: untouched (the whole-workspace restore deleted b.txt).
  expect(read("b.txt")).toBe("from B\n");
  expect(read("person.txt")).toBe("mine\n");
  // The fork's one step: restore_files says what came back and what it kept.
  expect({ restored: forked.restoredFiles, kept: forked.keptFiles }).toEqual({
    restored: ["extra.txt"],
    kept: ["notes.txt"],
  });
  expect(forked.messages.map((m: BaseMessage) => m.content).at(-1)).toBe("Back at v1.");
  // Every scripted turn was played, and no more: the fork's run went on from the checkpoint.
  expect(model.played).toBe(7);
});

test("forking to a checkpoint with nothing changed by others since restores all of the thread's files", async () => {
  const model = new ScriptedChatModel([
    { toolCalls: [{ name: "write_file", args: { filePath: "notes.txt", content: "v1\n" } }] },
    "v1.",
    { toolCalls: [{ name: "write_file", args: { filePath: "notes.txt", content: "v2\n" } }] },
    "v2.",
    "Back.",
  ]);
  const graph = createGraph(engineSettings(tmp.dir), {
    checkpointer: new MemorySaver(),
    model,
    tools: createTools({ workspace: tmp.dir }),
  });
  const config = { configurable: { thread_id: "solo" }, recursionLimit: 100 };
  await graph.invoke({ messages: [new HumanMessage("v1")] }, config);
  await graph.invoke({ messages: [new HumanMessage("v2")] }, config);
  expect(read("notes.txt")).toBe("v2\n");
  const history = [];
  for await (const state of graph.getStateHistory(config)) history.push(state);
  const endOfFirst = history.find(
    (s) => s.next.length === 0 && (s.values as { messages: BaseMessage[] }).messages.length === 4,
  )!;
  const forked = await graph.invoke(
    { messages: [new HumanMessage("back")] },
    {
      ...config,
      configurable: { ...config.configurable, checkpoint_id: endOfFirst.config.configurable!.checkpoint_id },
    },
  );
  expect(read("notes.txt")).toBe("v1\n");
  expect({ restored: forked.restoredFiles, kept: forked.keptFiles }).toEqual({ restored: ["notes.txt"], kept: [] });
});
