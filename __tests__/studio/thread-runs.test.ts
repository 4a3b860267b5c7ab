import { writeFileSync } from "node:fs";
import path from "node:path";
import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { MemorySaver } from "@langchain/langgraph";
import { createGraph } from "../../src/graph/graph.js";
import { openSqliteMemory } from "../../src/memory/backend.js";
import { fileThreadLocker, type LockAttempt } from "../../src/memory/thread-lock.js";
import { holdThreadsDuringRuns, type WrappableGraph } from "../../src/studio/thread-runs.js";
import { createTools } from "../../src/tools/index.js";
import { engineSettings } from "../helpers/engine-harness.js";
import { ScriptedChatModel } from "../helpers/scripted-model.js";
import { makeTempDir } from "../helpers/tmp.js";

/**
 * The Studio server's run wrapper on the compiled graph, as the dev server calls it: a run holds
 * its thread's lock for as long as it runs, and first closes a step a killed server left open
 * from the tool journal, so the model reads "interrupted", never "not run".
 */

let tmp: ReturnType<typeof makeTempDir>;
beforeEach(() => (tmp = makeTempDir()));
afterEach(() => tmp.cleanup());

test("a run holds the thread's lock while it runs and closes the step a killed server left open as interrupted", async () => {
  const memory = openSqliteMemory(tmp.dir);
  const other = fileThreadLocker(tmp.dir);
  let during: LockAttempt | undefined;
  const model = new ScriptedChatModel([
    (messages: BaseMessage[]) => {
      // The lock is taken synchronously by tryLock: what another process would get now.
      void other.tryLock("t").then((attempt) => (during = attempt));
      return new AIMessage({ content: `Saw ${messages.length} messages.`, id: "answer" });
    },
  ]);
  const graph = createGraph(engineSettings(tmp.dir), {
    checkpointer: new MemorySaver(),
    model,
    tools: createTools({ workspace: tmp.dir }),
  });
  const notes: string[] = [];
  holdThreadsDuringRuns(
    graph as unknown as WrappableGraph,
    async () => ({ memory, workspace: tmp.dir }),
    (text) => notes.push(text),
  );

  // What a server killed while write_file ran leaves: the call in the thread, started in the journal, its file on disk.
  const config = { configurable: { thread_id: "t" }, recursionLimit: 50 };
  await graph.updateState(
    config,
    {
      messages: [
        new HumanMessage({ content: "Write a.txt.", id: "request-1" }),
        new AIMessage({
          content: "",
          id: "turn-1",
          tool_calls: [
            { id: "call_1", name: "write_file", args: { filePath: "a.txt", content: "x\n" }, type: "tool_call" },
          ],
        }),
      ],
    },
    "agent",
  );
  await memory.journal.start("t", [
    { callId: "call_1", name: "write_file", request: "request-1", startedAt: new Date().toISOString() },
  ]);
  writeFileSync(path.join(tmp.dir, "a.txt"), "x\n");

  const result = await graph.invoke({ messages: [new HumanMessage("Go on.")] }, config);

  const sent = model.calls[0]!;
  const closed = sent.find((m) => ToolMessage.isInstance(m) && m.tool_call_id === "call_1") as ToolMessage;
  expect(String(closed.content)).toMatch(/^This write_file call was interrupted: it started, but mini-cursor stopped/);
  expect(String(closed.content)).not.toContain("not run");
  expect(notes).toEqual([
    "mini-cursor: thread t: The previous run on this thread stopped in the middle of a step (killed or crashed). Its tool calls: 1 interrupted while running; the model is told so.\n",
  ]);
  expect((result.messages as BaseMessage[]).at(-1)!.content).toBe(`Saw ${sent.length} messages.`);
  // Held while the run ran (another process is refused), free after it; the journal was cleared.
  expect(during).toMatchObject({ busy: expect.anything() });
  const after = await other.tryLock("t");
  expect("lock" in after).toBe(true);
  if ("lock" in after) await after.lock.release();
  expect(await memory.journal.read("t")).toEqual([]);
});
