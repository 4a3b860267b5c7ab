import { writeFileSync } from "node:fs";
import path from "node:path";
import { randomUUID } from "node:crypto";
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import type { AgentEvent } from "../../src/contracts/events.js";
import { SUMMARY_PROMPT } from "../../src/context/compaction.js";
import { createGraph, type GraphSettings } from "../../src/graph/graph.js";
import { createGraphEngine } from "../../src/graph/engine.js";
import { createSqliteCheckpointer } from "../../src/memory/checkpointer.js";
import { createTools } from "../../src/tools/index.js";
import { ScriptedChatModel, type ScriptedTurn } from "../helpers/scripted-model.js";
import { makeTempDir } from "../helpers/tmp.js";

/**
 * Issue 30, item 5: the stored thread grows by what was said, not by what was forgotten. Across a
 * compaction the SQLite store gains the summary and nothing of the conversation it kept: the kept
 * messages are stored already and are not written again.
 */

let tmp: ReturnType<typeof makeTempDir>;
beforeEach(() => (tmp = makeTempDir()));
afterEach(() => tmp.cleanup());

const FILES = 20;
const SUMMARY = "Read the files f0 to f19 in turn; nothing wrong so far. Open: read on.";

test("a compaction adds the summary to the stored thread and stores nothing it kept again", async () => {
  for (let i = 0; i < FILES; i++)
    writeFileSync(path.join(tmp.dir, `f${i}.txt`), `line ${i} of a file the session reads\n`.repeat(12));
  const settings: GraphSettings = {
    workspace: tmp.dir,
    model: "s",
    provider: "offline",
    requestTimeoutMs: 1000,
    maxRetries: 0,
    approval: "full-auto",
    maxSteps: 200,
    contextTokens: 16_000,
  };
  const checkpointer = createSqliteCheckpointer(tmp.dir);
  const db = checkpointer.db;
  const stored = () => ({
    messages: (db.prepare("SELECT count(*) AS n FROM message_store").get() as { n: number }).n,
    messageBytes: (db.prepare("SELECT coalesce(sum(length(value)), 0) AS n FROM message_store").get() as { n: number })
      .n,
  });
  /** What the store held when each model call was made (the summary call included). */
  const seen: { summary: boolean; messages: number; messageBytes: number }[] = [];
  let step = 0;
  const turn: ScriptedTurn = (messages: BaseMessage[]) => {
    const summary = messages[0]?.content === SUMMARY_PROMPT;
    seen.push({ summary, ...stored() });
    if (summary) return new AIMessage({ id: randomUUID(), content: SUMMARY });
    step++;
    return step <= 60
      ? new AIMessage({
          id: randomUUID(),
          content: "",
          tool_calls: [
            {
              id: `call_${randomUUID().slice(0, 8)}`,
              name: "read_file",
              args: { filePath: `f${step % FILES}.txt` },
              type: "tool_call",
            },
          ],
        })
      : new AIMessage({ id: randomUUID(), content: "All read." });
  };
  const model = new ScriptedChatModel(Array.from({ length: 80 }, () => turn));
  const graph = createGraph(settings, { checkpointer, model, tools: createTools({ workspace: tmp.dir }) });
  const engine = createGraphEngine({
    graph,
    meta: { engine: "graph", model: "s", provider: "offline", workspace: tmp.dir },
    modelSettings: settings,
    approval: "full-auto",
    maxSteps: 200,
  });
  const events: AgentEvent[] = [];
  const summary = await engine.run({
    task: "read the files one by one",
    threadId: "t",
    emit: (e) => events.push(e),
    approver: async () => ({ decision: "approve" }),
  });
  expect(summary.reason).toBe("done");
  const at = seen.flatMap((s, i) => (s.summary ? [i] : []));
  expect(at.length).toBeGreaterThanOrEqual(1);
  const kept = (await graph.getState({ configurable: { thread_id: "t" } })).values.messages as BaseMessage[];
  for (const i of at) {
    const before = seen[i]!;
    const after = seen[i + 1]!;
    // One new message: the summary. The request and the recent turns it kept are not stored again.
    expect(after.messages - before.messages).toBe(1);
    expect(after.messageBytes - before.messageBytes).toBeLessThan(SUMMARY.length + 1_000);
  }
  // Everything said is stored once: the request, 60 calls, 60 results, the answer and the summaries.
  expect(stored().messages).toBe(1 + 60 * 2 + 1 + at.length);
  expect(kept.length).toBeLessThan(stored().messages);
  db.close();
}, 120_000);
