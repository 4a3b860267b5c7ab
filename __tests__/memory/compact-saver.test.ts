import path from "node:path";
import { readFileSync } from "node:fs";
import type { BaseMessage } from "@langchain/core/messages";
import type { AgentEvent } from "../../src/contracts/events.js";
import { createGraph, type GraphSettings } from "../../src/graph/graph.js";
import { createGraphEngine } from "../../src/graph/engine.js";
import { createSqliteCheckpointer } from "../../src/memory/checkpointer.js";
import { KEPT_CHECKPOINTS, PRUNE_EVERY } from "../../src/memory/compact-saver.js";
import { createTools } from "../../src/tools/index.js";
import { ScriptedChatModel, type ScriptedTurn } from "../helpers/scripted-model.js";
import { makeTempDir } from "../helpers/tmp.js";

let tmp: ReturnType<typeof makeTempDir>;
beforeEach(() => (tmp = makeTempDir()));
afterEach(() => tmp.cleanup());

function setup(script: ScriptedTurn[], approval: GraphSettings["approval"] = "full-auto") {
  const settings: GraphSettings = {
    workspace: tmp.dir,
    model: "s",
    provider: "offline",
    requestTimeoutMs: 1000,
    maxRetries: 0,
    approval,
    maxSteps: 100,
    contextTokens: 1_000_000,
  };
  const checkpointer = createSqliteCheckpointer(tmp.dir);
  const model = new ScriptedChatModel(script);
  const graph = createGraph(settings, { checkpointer, model, tools: createTools({ workspace: tmp.dir }) });
  const engine = createGraphEngine({
    graph,
    meta: { engine: "graph", model: "s", provider: "offline", workspace: tmp.dir },
    modelSettings: settings,
    approval,
    maxSteps: 100,
  });
  const events: AgentEvent[] = [];
  const run = (task: string) =>
    engine.run({ task, threadId: "t", emit: (e) => events.push(e), approver: async () => ({ decision: "approve" }) });
  return { checkpointer, graph, model, run, events };
}

const texts = (ms: BaseMessage[]) => ms.map((m) => `${m.getType()}:${typeof m.content === "string" ? m.content : ""}`);

test("a thread saved by one process is resumed whole by the next", async () => {
  const first = setup([{ toolCalls: [{ name: "write_file", args: { filePath: "a.txt", content: "A" } }] }, "wrote it"]);
  await first.run("write a");
  const before = (await first.graph.getState({ configurable: { thread_id: "t" } })).values.messages as BaseMessage[];
  first.checkpointer.db.close();

  const second = setup(["and again"]);
  const restored = (await second.graph.getState({ configurable: { thread_id: "t" } })).values.messages as BaseMessage[];
  expect(texts(restored)).toEqual(texts(before));
  await second.run("more");
  expect(texts(second.model.calls[0]!.slice(1))).toEqual([...texts(before), "human:more"]);
  second.checkpointer.db.close();
});

test("an approval interrupt resumes through the compact store", async () => {
  const h = setup(
    [{ toolCalls: [{ name: "execute_command", args: { command: "echo hi > hi.txt" } }] }, "done"],
    "auto-edit",
  );
  const summary = await h.run("say hi");
  expect(summary.reason).toBe("done");
  expect(readFileSync(path.join(tmp.dir, "hi.txt"), "utf8")).toBe("hi\n");
  expect(h.events.filter((e) => e.type === "approval")).toHaveLength(1);
  h.checkpointer.db.close();
});

test("storage stays linear: few checkpoints, each message stored once", async () => {
  // Different arguments each turn, so the loop guard does not step in.
  const turns: ScriptedTurn[] = Array.from({ length: 40 }, (_, i) => ({
    toolCalls: [{ name: "list_directory", args: { directoryPath: `d${i}` } }],
  }));
  const h = setup([...turns, "done"]);
  await h.run("list a lot");
  const db = h.checkpointer.db;
  const checkpoints = (db.prepare("SELECT count(*) AS n FROM checkpoints").get() as { n: number }).n;
  const messages = (db.prepare("SELECT count(*) AS n FROM message_store").get() as { n: number }).n;
  // Pruned every PRUNE_EVERY checkpoints, down to KEPT_CHECKPOINTS.
  expect(checkpoints).toBeGreaterThanOrEqual(KEPT_CHECKPOINTS);
  expect(checkpoints).toBeLessThan(KEPT_CHECKPOINTS + PRUNE_EVERY);
  // 1 request + 40 calls + 40 results + 1 answer
  expect(messages).toBe(82);
  db.close();
});

test("a thread saved in the earlier form (one hash per message) still loads", async () => {
  const { SqliteSaver } = await import("@langchain/langgraph-checkpoint-sqlite");
  const { HumanMessage, AIMessage } = await import("@langchain/core/messages");
  const { emptyCheckpoint } = await import("@langchain/langgraph-checkpoint");
  const saver = createSqliteCheckpointer(tmp.dir);
  const earlier = [new HumanMessage({ id: "h", content: "hello" }), new AIMessage({ id: "a", content: "hi" })];
  saver.db.exec(
    "CREATE TABLE messages (thread_id TEXT NOT NULL, hash TEXT NOT NULL, type TEXT, value BLOB, PRIMARY KEY (thread_id, hash))",
  );
  const insert = saver.db.prepare("INSERT INTO messages (thread_id, hash, type, value) VALUES (?, ?, ?, ?)");
  for (const [i, m] of earlier.entries()) {
    const [type, value] = await new SqliteSaver(saver.db).serde.dumpsTyped(m);
    insert.run("old", `hash${i}`, type, value);
  }
  const checkpoint = { ...emptyCheckpoint(), channel_values: { messages: { __messageRefs: ["hash0", "hash1"] } } };
  await SqliteSaver.prototype.put.call(saver, { configurable: { thread_id: "old", checkpoint_ns: "" } }, checkpoint, {
    source: "loop",
    step: 1,
    parents: {},
  });
  const tuple = await saver.getTuple({ configurable: { thread_id: "old" } });
  expect(texts(tuple!.checkpoint.channel_values.messages as BaseMessage[])).toEqual(["human:hello", "ai:hi"]);
  await saver.deleteThread("old");
  expect((saver.db.prepare("SELECT count(*) AS n FROM messages").get() as { n: number }).n).toBe(0);
  saver.db.close();
});
