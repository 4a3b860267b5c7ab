import { jest } from "@jest/globals";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { interruptedResultText, recoverInterruptedCalls } from "../../src/agent/crash-recovery.js";
import { journalStarted } from "../helpers/journal.js";
import { INTERRUPTED_CALL_RESULT, INTERRUPTED_NOTE, messageText } from "../../src/agent/turn.js";
import { withResults, type JournalEntry, type JournalResult, type ToolJournal } from "../../src/memory/tool-journal.js";
import { BUILT_IN_SUBAGENTS } from "../../src/tools/task.js";
import { snapshotStore } from "../../src/snapshots/store.js";
import { engineHarness, type EngineKind } from "../helpers/engine-harness.js";
import { RoutedChatModel, type RoutedTurn } from "../helpers/routed-model.js";
import { makeTempDir, waitFor } from "../helpers/tmp.js";

/**
 * A `task` call's place in the parent's write-ahead journal (memory/tool-journal.ts): started
 * with the step's other calls, with a whole-workspace `before` when its sub-agent may change
 * files, and ended with the sub-agent's report. After Ctrl-C the turn is closed from it: a
 * finished sub-agent's report is kept, a cut-off one is said to be interrupted with the files
 * changed since, and those files join the request's snapshot for /undo.
 */

jest.setTimeout(60_000);

let tmp: ReturnType<typeof makeTempDir>;
beforeEach(() => (tmp = makeTempDir()));
afterEach(() => tmp.cleanup());

type Op = { op: "start"; entries: JournalEntry[] } | { op: "end"; results: Record<string, JournalResult> };

/** A journal kept in memory that logs every write. */
function recordingJournal(): ToolJournal & { log: Op[]; entries: (threadId: string) => JournalEntry[] } {
  const threads = new Map<string, JournalEntry[]>();
  const log: Op[] = [];
  return {
    log,
    entries: (threadId) => threads.get(threadId) ?? [],
    async start(threadId, entries) {
      log.push({ op: "start", entries });
      threads.set(threadId, entries);
    },
    async end(threadId, results) {
      log.push({ op: "end", results: Object.fromEntries(results) });
      threads.set(threadId, withResults(threads.get(threadId) ?? [], results));
    },
    read: async (threadId) => threads.get(threadId) ?? [],
    async clear(threadId) {
      threads.delete(threadId);
    },
  };
}

const task = (prompt: string, subagent_type: string, description = "Do it") => ({
  name: "task",
  args: { description, prompt, subagent_type },
});

/**
 * A routed model whose conversation `key` waits at its `turn`-th request (1-based) until the run
 * is cancelled, as a provider that has not answered yet.
 */
function stallingModel(scripts: Record<string, RoutedTurn[]>, key: string, turn: number) {
  const model = new RoutedChatModel(scripts);
  const generate = model._generate.bind(model);
  let stalled = false;
  const stall = async (messages: BaseMessage[], options?: { signal?: AbortSignal }) => {
    const first = messages.find((m) => m.getType() === "human");
    if (first && messageText(first) === key && model.callsOf(key).length === turn - 1) {
      model.calls.push([...messages]);
      stalled = true;
      await new Promise((_, reject) => {
        if (options?.signal?.aborted) reject(new Error("aborted"));
        options?.signal?.addEventListener("abort", () => reject(new Error("aborted")), { once: true });
      });
    }
    return generate(messages);
  };
  model._generate = stall as typeof model._generate;
  return { model, stalled: () => stalled };
}

/** The saved conversation as [type, text] pairs (tool results with their tool's name). */
function shape(messages: BaseMessage[]): Array<[string, string]> {
  return messages.map((m) => {
    if (ToolMessage.isInstance(m)) return [`tool:${m.name}`, messageText(m)];
    if (AIMessage.isInstance(m) && m.tool_calls?.length) return ["ai", m.tool_calls.map((c) => c.name).join(",")];
    return [m.getType(), messageText(m)];
  });
}

describe.each(["graph", "loop"] as const)("a task turn in the journal (%s engine)", (kind: EngineKind) => {
  // A graph task call's entry names its LangGraph task, by which a resume after a question finds it.
  const inGraph = kind === "graph" ? { ns: expect.stringMatching(/^subagent:[0-9a-f-]{36}$/) } : {};
  test("the task calls start with the step's other calls, on one whole snapshot, and end with their reports", async () => {
    writeFileSync(path.join(tmp.dir, "notes.txt"), "hi\n");
    const model = new RoutedChatModel({
      go: [
        {
          toolCalls: [
            task("Write a.txt.", "general"),
            task("Read notes.txt.", "explore"),
            { name: "read_file", args: { filePath: "notes.txt" } },
          ],
        },
        "done",
      ],
      "Write a.txt.": [
        { toolCalls: [{ name: "write_file", args: { filePath: "a.txt", content: "a\n" } }] },
        "Wrote a.txt.",
      ],
      "Read notes.txt.": [{ toolCalls: [{ name: "read_file", args: { filePath: "notes.txt" } }] }, "notes.txt: hi"],
    });
    const journal = recordingJournal();
    const h = engineHarness(
      kind,
      tmp.dir,
      [],
      { approval: "full-auto" },
      { model, subagents: BUILT_IN_SUBAGENTS, journal },
    );
    const summary = await h.run("go");
    expect(summary.reason).toBe("done");
    const [ai] = (await h.history()).filter((m): m is AIMessage => AIMessage.isInstance(m));
    const [general, explore, read] = ai!.tool_calls!.map((c) => c.id!);
    const request = (await h.history())[0]!.id!;

    // Each call is on the journal before it runs, the turn's calls kept together; the sub-agents'
    // own calls are not the parent's. A task call whose sub-agent may change files starts from a
    // whole snapshot of the workspace; a read-only one and read_file need none.
    const byCall = new Map(journal.entries("t1").map((e) => [e.callId, e]));
    expect([...byCall.keys()].sort()).toEqual([general, explore, read].sort());
    const before = byCall.get(general)!.before;
    expect(before).toMatch(/^[0-9a-f]{40}$/);
    expect([read, general, explore].map((id) => ({ ...byCall.get(id)!, startedAt: "" }))).toEqual([
      { callId: read, name: "read_file", request, startedAt: "", result: expect.anything() },
      { callId: general, name: "task", request, before, startedAt: "", result: expect.anything(), ...inGraph },
      {
        callId: explore,
        name: "task",
        request,
        readOnly: true,
        startedAt: "",
        result: expect.anything(),
        ...inGraph,
      },
    ]);
    // The task's `before` is the whole workspace as it was: a.txt did not exist yet, notes.txt did.
    const store = snapshotStore(tmp.dir);
    expect(await store.changes(before!, await store.take())).toEqual([
      expect.objectContaining({ path: "a.txt", status: "A" }),
    ]);
    // A task call was written to the journal (started) before its sub-agent's first call ran.
    const firstWithTask = journal.log.findIndex(
      (o) => o.op === "start" && o.entries.some((e) => e.callId === general && !e.result),
    );
    expect(firstWithTask).toBeGreaterThanOrEqual(0);

    // Each call ends with the result the conversation holds.
    expect([read, general, explore].map((id) => byCall.get(id)!.result)).toEqual([
      { content: expect.stringContaining("hi"), status: "success" },
      { content: "Wrote a.txt.", status: "success" },
      { content: "notes.txt: hi", status: "success" },
    ]);
  });

  test("a step with only read-only task calls takes no snapshot: its entries say why none is needed", async () => {
    const model = new RoutedChatModel({
      go: [{ toolCalls: [task("Look.", "explore")] }, "done"],
      "Look.": ["Nothing to see."],
    });
    const journal = recordingJournal();
    const h = engineHarness(
      kind,
      tmp.dir,
      [],
      { approval: "full-auto" },
      { model, subagents: BUILT_IN_SUBAGENTS, journal },
    );
    await h.run("go");
    const entries = (journal.log[0] as Extract<Op, { op: "start" }>).entries;
    expect(entries.map((e) => [e.name, e.before, e.readOnly])).toEqual([["task", undefined, true]]);
    expect(journal.entries("t1")[0]!.result).toEqual({ content: "Nothing to see.", status: "success" });
  });

  /**
   * Runs "go" on `scripts` (the sub-agent of "Write a.txt." waits at its second request) and
   * presses Ctrl-C once `ready` holds: the run's end, its journal and its harness, to check.
   */
  async function cancelWhen(
    scripts: Record<string, RoutedTurn[]>,
    ready: (stalled: boolean, journal: ReturnType<typeof recordingJournal>) => boolean,
  ) {
    const { model, stalled } = stallingModel(scripts, "Write a.txt.", 2);
    const journal = recordingJournal();
    const h = engineHarness(
      kind,
      tmp.dir,
      [],
      { approval: "full-auto" },
      { model, subagents: BUILT_IN_SUBAGENTS, journal },
    );
    const controller = new AbortController();
    const running = h.run("go", { signal: controller.signal });
    await waitFor(() => ready(stalled(), journal), 30_000);
    controller.abort();
    return { summary: await running, journal, h };
  }

  test("Ctrl-C while a sub-agent waits: its call says what changed, the file joins the turn for /undo", async () => {
    const { summary, journal, h } = await cancelWhen(
      {
        go: [{ toolCalls: [task("Write a.txt.", "general")] }, "unused"],
        "Write a.txt.": [{ toolCalls: [{ name: "write_file", args: { filePath: "a.txt", content: "a\n" } }] }],
      },
      (stalled) => stalled,
    );
    expect(summary.reason).toBe("interrupted");
    expect(readFileSync(path.join(tmp.dir, "a.txt"), "utf8")).toBe("a\n");
    const history = await h.history();
    expect(shape(history)).toEqual([
      ["human", "go"],
      ["ai", "task"],
      ["tool:task", interruptedResultText("task", [{ path: "a.txt", status: "A" }] as never, { cause: "cancelled" })],
      ["ai", INTERRUPTED_NOTE],
    ]);
    expect(shape(history)[2]![1]).toBe(
      "This task call's sub-agent was interrupted by the user (Ctrl-C) before it gave its report, so it may have done part of its task. Since this step started, these files changed: a.txt (added). Check them before running it again.",
    );
    // The journal was read and cleared; the request's snapshot now covers what the sub-agent wrote.
    expect(journal.entries("t1")).toEqual([]);
    const snapshots = await h.snapshots();
    const entry = snapshots[history[0]!.id!]!;
    expect(entry.paths).toEqual(["a.txt"]);
    const store = snapshotStore(tmp.dir);
    await store.restore(entry.before, entry.paths!);
    expect(existsSync(path.join(tmp.dir, "a.txt"))).toBe(false);
  });

  test("Ctrl-C with two sub-agents, one finished: its report is kept, the other is interrupted", async () => {
    const { summary, h } = await cancelWhen(
      {
        go: [{ toolCalls: [task("Write a.txt.", "general", "A"), task("Write b.txt.", "general", "B")] }, "unused"],
        "Write a.txt.": [{ toolCalls: [{ name: "write_file", args: { filePath: "a.txt", content: "a\n" } }] }],
        "Write b.txt.": [
          { toolCalls: [{ name: "write_file", args: { filePath: "b.txt", content: "b\n" } }] },
          "Wrote b.txt.",
        ],
      },
      // B has reported (its result is in the journal) while A still waits.
      (stalled, journal) => stalled && journal.entries("t1").some((e) => e.result),
    );
    expect(summary.reason).toBe("interrupted");
    const history = await h.history();
    const interrupted: [string, string] = [
      "tool:task",
      "This task call's sub-agent was interrupted by the user (Ctrl-C) before it gave its report, so it may have done part of its task. Since this step started, these files changed: a.txt (added), b.txt (added). Check them before running it again.",
    ];
    const finished: [string, string] = ["tool:task", "Wrote b.txt."];
    // The graph saved B's result as B ended (a write of its finished task), so it comes first there.
    expect(shape(history)).toEqual([
      ["human", "go"],
      ["ai", "task,task"],
      ...(kind === "graph" ? [finished, interrupted] : [interrupted, finished]),
      ["ai", INTERRUPTED_NOTE],
    ]);
    const entry = (await h.snapshots())[history[0]!.id!]!;
    expect([...entry.paths!].sort()).toEqual(["a.txt", "b.txt"]);
  });
});

test("recovery after a kill: a finished task call keeps its report, a started one is interrupted, one never journalled is unanswered", async () => {
  const journal = recordingJournal();
  const ai = new AIMessage({
    content: "",
    tool_calls: [
      { id: "t1", name: "task", args: {}, type: "tool_call" },
      { id: "t2", name: "task", args: {}, type: "tool_call" },
      { id: "t3", name: "task", args: {}, type: "tool_call" },
    ],
  });
  const messages = [new HumanMessage({ id: "req", content: "go" }), ai];
  await journalStarted({
    journal,
    threadId: "k",
    messages,
    calls: [
      { id: "t1", name: "task" },
      { id: "t2", name: "task", readOnly: true },
    ],
  });
  await journal.end("k", new Map([["t1", { content: "Did it.", status: "success" }]]));
  const recovered = await recoverInterruptedCalls({
    journal,
    threadId: "k",
    workspace: tmp.dir,
    messages,
    timeTravelThread: "",
  });
  expect(recovered.results.map((r) => [r.tool_call_id, r.status, r.content])).toEqual([
    ["t1", "success", "Did it."],
    [
      "t2",
      "error",
      "This task call's sub-agent was interrupted: mini-cursor stopped (the process was killed or crashed) before its report was saved, so it may have done part of its task. Its tools could not change files, so it changed none.",
    ],
    ["t3", "error", expect.stringMatching(/^This task call has no report/)],
  ]);
  expect(recovered.note).toBe(
    "The previous run on this thread stopped in the middle of a step (killed or crashed). Its tool calls: 1 finished (result recovered), 1 interrupted while running, 1 never started; the model is told so.",
  );
});

test("closing a cancelled turn: another call cut off by Ctrl-C keeps the Ctrl-C text, one that ended its result", async () => {
  const journal = recordingJournal();
  const ai = new AIMessage({
    content: "",
    tool_calls: [
      { id: "c1", name: "execute_command", args: { command: "true" }, type: "tool_call" },
      { id: "c2", name: "execute_command", args: { command: "sleep 9" }, type: "tool_call" },
      { id: "c3", name: "read_file", args: { filePath: "x" }, type: "tool_call" },
    ],
  });
  const messages = [new HumanMessage({ id: "req", content: "go" }), ai];
  await journalStarted({ journal, threadId: "c", messages, calls: ai.tool_calls!.slice(0, 2) });
  await journal.end("c", new Map([["c1", { content: "(no output)", status: "success" }]]));
  const recovered = await recoverInterruptedCalls({
    journal,
    threadId: "c",
    workspace: tmp.dir,
    messages,
    timeTravelThread: "",
    cause: "cancelled",
  });
  expect(recovered.note).toBeUndefined();
  expect(recovered.results.map((r) => [r.tool_call_id, r.content])).toEqual([
    ["c1", "(no output)"],
    ["c2", INTERRUPTED_CALL_RESULT],
    ["c3", INTERRUPTED_CALL_RESULT],
  ]);
});
