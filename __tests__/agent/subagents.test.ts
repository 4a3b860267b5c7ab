import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { AIMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { BUILT_IN_SUBAGENTS } from "../../src/tools/task.js";
import { messageText } from "../../src/agent/turn.js";
import { engineHarness, eventsOf, type EngineKind } from "../helpers/engine-harness.js";
import { RoutedChatModel, type RoutedTurn } from "../helpers/routed-model.js";
import { MAX_PARALLEL_SUBAGENTS, QUEUED_NOTICE } from "../../src/agent/subagents.js";
import { makeTempDir } from "../helpers/tmp.js";

let tmp: ReturnType<typeof makeTempDir>;
beforeEach(() => (tmp = makeTempDir()));
afterEach(() => tmp.cleanup());

const task = (prompt: string, subagent_type = "explore", description = "Look around") => ({
  name: "task",
  args: { description, prompt, subagent_type },
});

/** The conversation as [type, text] pairs (tool results with their tool's name). */
function shape(messages: BaseMessage[]): Array<[string, string]> {
  return messages.map((m) => {
    if (ToolMessage.isInstance(m)) return [`tool:${m.name}`, messageText(m)];
    if (AIMessage.isInstance(m) && m.tool_calls?.length) return ["ai", m.tool_calls.map((c) => c.name).join(",")];
    return [m.getType(), messageText(m)];
  });
}

function harness(kind: EngineKind, model: RoutedChatModel, approval: "suggest" | "full-auto" = "full-auto") {
  return engineHarness(kind, tmp.dir, [], { approval }, { model, subagents: BUILT_IN_SUBAGENTS });
}

describe.each(["graph", "loop"] as const)("the task tool (%s engine)", (kind) => {
  test("explore reads with a fresh context and its report is the call's result", async () => {
    writeFileSync(path.join(tmp.dir, "notes.txt"), "the answer is 42\n");
    const model = new RoutedChatModel({
      "what is the answer?": [{ toolCalls: [task("Read notes.txt and report the answer.")] }, "It is 42."],
      "Read notes.txt and report the answer.": [
        { toolCalls: [{ name: "read_file", args: { filePath: "notes.txt" } }] },
        "notes.txt says: the answer is 42.",
      ],
    });
    const h = harness(kind, model);
    const summary = await h.run("what is the answer?");
    expect(summary.reason).toBe("done");
    expect(summary.finalText).toBe("It is 42.");
    expect(shape(await h.history())).toEqual([
      ["human", "what is the answer?"],
      ["ai", "task"],
      ["tool:task", "notes.txt says: the answer is 42."],
      ["ai", "It is 42."],
    ]);
    // A fresh context: the sub-agent's first request is its system prompt and its brief, nothing of the parent's.
    const [first] = model.callsOf("Read notes.txt and report the answer.");
    expect(first!.map((m) => m.getType())).toEqual(["system", "human"]);
    const system = messageText(first![0]!);
    expect(system).toContain("# Sub-agent: explore");
    expect(system).toContain("Your tools: read_file, list_directory, find_files, search_files.");
    // Its events carry the task call's id; the parent's do not.
    const taskId = eventsOf(h.events, "tool_call").find((e) => e.name === "task")!.id;
    expect(eventsOf(h.events, "tool_call").map((e) => [e.name, e.subagent])).toEqual([
      ["task", undefined],
      ["read_file", taskId],
    ]);
    expect(eventsOf(h.events, "final").map((e) => [e.text, e.subagent])).toEqual([
      ["notes.txt says: the answer is 42.", taskId],
      ["It is 42.", undefined],
    ]);
    expect(eventsOf(h.events, "tool_result").map((e) => [e.name, e.status, e.subagent])).toEqual([
      ["read_file", "success", taskId],
      ["task", "success", undefined],
    ]);
    // Its tokens add to the parent's; its steps and calls are its own.
    const usage = eventsOf(h.events, "usage");
    expect(usage.filter((e) => e.subagent === taskId)).toHaveLength(2);
    expect(summary.usage.input).toBe(usage.reduce((n, e) => n + e.usage.input, 0));
    expect([summary.steps, summary.toolCalls]).toEqual([2, 1]);
  });

  test("explore has no tool that changes files: a write is refused and nothing is written", async () => {
    const model = new RoutedChatModel({
      go: [{ toolCalls: [task("Write x.txt.")] }, "done"],
      "Write x.txt.": [
        { toolCalls: [{ name: "write_file", args: { filePath: "x.txt", content: "x" } }] },
        "I could not.",
      ],
    });
    const h = harness(kind, model);
    await h.run("go");
    expect(existsSync(path.join(tmp.dir, "x.txt"))).toBe(false);
    const refused = eventsOf(h.events, "tool_result").find((e) => e.name === "write_file")!;
    expect(refused.status).toBe("error");
    expect(refused.content).toContain("write_file");
  });

  test("general asks about its edit through the parent's approver, and the edit joins the parent's request", async () => {
    const model = new RoutedChatModel({
      "add a file": [{ toolCalls: [task("Create hello.txt with hi.", "general", "Create file")] }, "Created."],
      "Create hello.txt with hi.": [
        { toolCalls: [{ name: "write_file", args: { filePath: "hello.txt", content: "hi\n" } }] },
        "Wrote hello.txt.",
      ],
    });
    const h = harness(kind, model, "suggest");
    const summary = await h.run("add a file", { answers: [{ decision: "approve" }] });
    expect(summary.reason).toBe("done");
    expect(readFileSync(path.join(tmp.dir, "hello.txt"), "utf8")).toBe("hi\n");
    expect(h.approvals.map((a) => a.tool)).toEqual(["write_file"]);
    const taskId = eventsOf(h.events, "tool_call").find((e) => e.name === "task")!.id;
    expect(eventsOf(h.events, "approval").map((e) => [e.request.tool, e.response.decision, e.subagent])).toEqual([
      ["write_file", "approve", taskId],
    ]);
    expect(shape(await h.history())[2]).toEqual(["tool:task", "Wrote hello.txt."]);
  });

  test("a declined edit inside the sub-agent is not run, and its report says so", async () => {
    const model = new RoutedChatModel({
      "add a file": [{ toolCalls: [task("Create hello.txt.", "general")] }, "It was declined."],
      "Create hello.txt.": [
        { toolCalls: [{ name: "write_file", args: { filePath: "hello.txt", content: "hi\n" } }] },
        "The write was declined.",
      ],
    });
    const h = harness(kind, model, "suggest");
    await h.run("add a file", { answers: [{ decision: "deny" }] });
    expect(existsSync(path.join(tmp.dir, "hello.txt"))).toBe(false);
    expect(shape(await h.history())[2]).toEqual(["tool:task", "The write was declined."]);
  });

  test("several task calls in one turn run in parallel, each labelled, results in the model's order", async () => {
    writeFileSync(path.join(tmp.dir, "a.txt"), "alpha\n");
    writeFileSync(path.join(tmp.dir, "b.txt"), "beta\n");
    let inFlight = 0;
    let most = 0;
    const model = new RoutedChatModel({
      "read both": [
        { toolCalls: [task("Read a.txt.", "explore", "A"), task("Read b.txt.", "explore", "B")] },
        "alpha and beta",
      ],
      "Read a.txt.": [{ toolCalls: [{ name: "read_file", args: { filePath: "a.txt" } }] }, "a.txt: alpha"],
      "Read b.txt.": [{ toolCalls: [{ name: "read_file", args: { filePath: "b.txt" } }] }, "b.txt: beta"],
    });
    // Both sub-agents' first requests are in flight together: the second arrives before the first returns.
    const generate = model._generate.bind(model);
    model._generate = async (messages) => {
      inFlight++;
      most = Math.max(most, inFlight);
      try {
        await new Promise((resolve) => setImmediate(resolve));
        return await generate(messages);
      } finally {
        inFlight--;
      }
    };
    const h = harness(kind, model);
    await h.run("read both");
    expect(most).toBe(2);
    expect(shape(await h.history())).toEqual([
      ["human", "read both"],
      ["ai", "task,task"],
      ["tool:task", "a.txt: alpha"],
      ["tool:task", "b.txt: beta"],
      ["ai", "alpha and beta"],
    ]);
    const [a, b] = eventsOf(h.events, "tool_call")
      .filter((e) => e.name === "task")
      .map((e) => e.id);
    const reads = eventsOf(h.events, "tool_call").filter((e) => e.name === "read_file");
    expect(reads.map((e) => [e.args.filePath, e.subagent]).sort()).toEqual([
      ["a.txt", a],
      ["b.txt", b],
    ]);
  });

  test(`a stop while sub-agents wait for a place cancels the queued ones before they start (at most ${MAX_PARALLEL_SUBAGENTS} at once)`, async () => {
    const COUNT = MAX_PARALLEL_SUBAGENTS + 3;
    const briefs = Array.from({ length: COUNT }, (_, i) => `Look at part ${i + 1}.`);
    const scripts: Record<string, RoutedTurn[]> = {
      "fan out": [{ toolCalls: briefs.map((b, i) => task(b, "explore", `Part ${i + 1}`)) }, "done"],
    };
    for (const b of briefs) scripts[b] = ["seen"];
    const model = new RoutedChatModel(scripts);
    const started = new Set<string>();
    const stop = new AbortController();
    // The running sub-agents' model calls never answer until the stop.
    const generate = model._generate.bind(model);
    model._generate = async (messages: BaseMessage[]) => {
      const first = messageText(messages.find((m) => m.getType() === "human")!);
      if (first === "fan out") return generate(messages);
      started.add(first);
      if (started.size === MAX_PARALLEL_SUBAGENTS) stop.abort();
      await new Promise((_, reject) => stop.signal.addEventListener("abort", () => reject(new Error("aborted"))));
      throw new Error("unreachable");
    };
    const h = harness(kind, model);
    const summary = await h.run("fan out", { signal: stop.signal });
    expect(summary.reason).toBe("interrupted");
    expect(started.size).toBe(MAX_PARALLEL_SUBAGENTS);
    const queued = eventsOf(h.events, "notice").filter((e) => e.message === QUEUED_NOTICE);
    expect(queued).toHaveLength(COUNT - MAX_PARALLEL_SUBAGENTS);
    // No queued sub-agent started: none of their briefs reached the model.
    expect(briefs.filter((b) => started.has(b))).toHaveLength(MAX_PARALLEL_SUBAGENTS);
    expect(
      model.calls.filter((c) => briefs.slice(MAX_PARALLEL_SUBAGENTS).some((b) => c.some((m) => messageText(m) === b))),
    ).toEqual([]);
  });

  test("an unknown subagent_type gets an error result naming the ones there are", async () => {
    const model = new RoutedChatModel({ go: [{ toolCalls: [task("x", "wizard")] }, "ok"] });
    const h = harness(kind, model);
    await h.run("go");
    expect(shape(await h.history())[2]).toEqual([
      "tool:task",
      'Error: there is no subagent_type "wizard". Available: explore, general. Call task again with one of them.',
    ]);
  });

  test("a sub-agent stops at its own step limit, and its parent is told", async () => {
    const model = new RoutedChatModel({
      go: [{ toolCalls: [task("loop", "explore")] }, "gave up"],
      loop: [
        { toolCalls: [{ name: "list_directory", args: { directoryPath: "." } }] },
        { toolCalls: [{ name: "find_files", args: { pattern: "*.md" } }] },
      ],
    });
    const h = engineHarness(
      kind,
      tmp.dir,
      [],
      { approval: "full-auto", maxSteps: 2 },
      { model, subagents: BUILT_IN_SUBAGENTS },
    );
    const summary = await h.run("go");
    expect(summary.reason).toBe("done");
    const result = shape(await h.history())[2]!;
    expect(result[0]).toBe("tool:task");
    expect(result[1]).toMatch(
      /^\[explore sub-agent: it reached its step limit before finishing, after 2 step\(s\)\. Its last words:\]/,
    );
  });
});

test("parity: both engines save the same conversation and emit the same events for a turn with a sub-agent", async () => {
  const runOn = async (kind: EngineKind) => {
    writeFileSync(path.join(tmp.dir, "notes.txt"), "alpha\n");
    const model = new RoutedChatModel({
      "edit notes": [{ toolCalls: [task("Change alpha to beta in notes.txt.", "general", "Edit")] }, "Changed."],
      "Change alpha to beta in notes.txt.": [
        { toolCalls: [{ name: "read_file", args: { filePath: "notes.txt" } }] },
        { toolCalls: [{ name: "edit_file", args: { filePath: "notes.txt", oldString: "alpha", newString: "beta" } }] },
        "Changed alpha to beta in notes.txt.",
      ],
    });
    const h = harness(kind, model, "suggest");
    const summary = await h.run("edit notes", { answers: [{ decision: "approve" }] });
    const content = readFileSync(path.join(tmp.dir, "notes.txt"), "utf8");
    // Ids differ between runs; what happened, in which order and from whom does not.
    const events = h.events
      .filter((e) => e.type !== "token" && e.type !== "run_start")
      .map((e) => {
        const who = e.subagent ? "sub" : "parent";
        if (e.type === "tool_call" || e.type === "tool_result") return `${who} ${e.type} ${e.name}`;
        if (e.type === "approval") return `${who} approval ${e.request.tool} ${e.response.decision}`;
        if (e.type === "step" || e.type === "usage") return `${who} ${e.type} ${e.step}`;
        if (e.type === "run_end") return `${who} run_end ${e.reason} ${e.steps} ${e.toolCalls}`;
        return `${who} ${e.type}`;
      });
    return { reason: summary.reason, content, history: shape(await h.history()), events };
  };
  const graph = await runOn("graph");
  const loop = await runOn("loop");
  expect(graph.content).toBe("beta\n");
  expect(loop).toEqual(graph);
  expect(graph.events).toEqual([
    "parent step 1",
    "parent usage 1",
    "parent tool_call task",
    "sub step 1",
    "sub usage 1",
    "sub tool_call read_file",
    "sub tool_result read_file",
    "sub step 2",
    "sub usage 2",
    "sub tool_call edit_file",
    "sub approval edit_file approve",
    "sub tool_result edit_file",
    "sub step 3",
    "sub usage 3",
    "sub final",
    "parent tool_result task",
    "parent step 2",
    "parent usage 2",
    "parent final",
    "parent run_end done 2 1",
  ]);
});
