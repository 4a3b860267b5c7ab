import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { AIMessage, HumanMessage, RemoveMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { END, MemorySaver } from "@langchain/langgraph";
import type { AgentEvent } from "../../src/contracts/events.js";
import { createGraph } from "../../src/graph/graph.js";
import { nextStep, routeAfterAgent } from "../../src/graph/routing.js";
import { ToolNode } from "@langchain/langgraph/prebuilt";
import { createRuntime } from "../../src/agent/runtime.js";
import type { ApprovalMode } from "../../src/contracts/modes.js";
import { createGraphEngine } from "../../src/graph/engine.js";
import { createTools } from "../../src/tools/index.js";
import { SUMMARY_KEY } from "../../src/context/compaction.js";
import { BUILT_IN_SUBAGENTS } from "../../src/tools/task.js";
import { engineHarness, engineSettings } from "../helpers/engine-harness.js";
import { repeatingTurns, ScriptedChatModel, type ScriptedTurn } from "../helpers/scripted-model.js";
import { makeTempDir } from "../helpers/tmp.js";

let tmp: ReturnType<typeof makeTempDir>;
beforeEach(() => (tmp = makeTempDir()));
afterEach(() => tmp.cleanup());

function buildGraph(script: ScriptedTurn[], maxSteps = 30) {
  const settings = engineSettings(tmp.dir, { approval: "auto-edit", maxSteps });
  const model = new ScriptedChatModel(script);
  const graph = createGraph(settings, {
    checkpointer: new MemorySaver(),
    model,
    tools: createTools({ workspace: tmp.dir }),
  });
  return { graph, model, settings };
}

/** The nodes that ran, in order, as the "updates" stream reports them. */
async function nodesRun(
  graph: ReturnType<typeof buildGraph>["graph"],
  task: string,
  maxSteps: number,
): Promise<string[]> {
  const config = {
    configurable: { thread_id: "t1", approval: "auto-edit" as const, maxSteps },
    streamMode: "updates" as const,
  };
  const nodes: string[] = [];
  for await (const chunk of await graph.stream({ messages: [new HumanMessage(task)] }, config))
    nodes.push(...Object.keys(chunk));
  return nodes;
}

test("the compiled graph names each behaviour as a node, and its edges say where a run can go", async () => {
  const { graph } = buildGraph([]);
  const drawn = await graph.getGraphAsync();
  expect(Object.keys(drawn.nodes)).toEqual([
    "__start__",
    "start_step",
    "restore_files",
    "summarise",
    "agent",
    "repeat_stop",
    "approve",
    "tools",
    "subagent",
    "step_done",
    "step_limit",
    "__end__",
  ]);
  const edges = drawn.edges.map((e) => `${e.source} ${e.conditional ? "-.->" : "-->"} ${e.target}`).sort();
  expect(edges).toEqual(
    [
      "__start__ --> start_step",
      "start_step --> restore_files",
      "restore_files --> summarise",
      "summarise --> agent",
      "agent -.-> __end__",
      "agent -.-> repeat_stop",
      "agent -.-> approve",
      "agent -.-> tools",
      "agent -.-> subagent",
      "repeat_stop --> __end__",
      "approve -.-> tools",
      "approve -.-> subagent",
      "approve -.-> start_step",
      "approve -.-> step_limit",
      "tools --> step_done",
      "subagent --> step_done",
      "step_done -.-> subagent",
      "step_done -.-> start_step",
      "step_done -.-> step_limit",
      "step_done -.-> __end__",
      "step_limit --> __end__",
    ].sort(),
  );
});

test("the subagent node's compiled graph is LangGraph's subgraph: getSubgraphs() returns it and xray draws it inside", async () => {
  const settings = engineSettings(tmp.dir, { approval: "auto-edit" });
  const graph = createGraph(settings, {
    checkpointer: new MemorySaver(),
    model: new ScriptedChatModel([]),
    tools: createTools({ workspace: tmp.dir }),
    subagents: BUILT_IN_SUBAGENTS,
  });
  const subgraphs = [];
  for await (const [name, sub] of graph.getSubgraphsAsync()) subgraphs.push([name, sub]);
  expect(subgraphs.map(([name]) => name)).toEqual(["subagent"]);
  // The same graph, one level down: a sub-agent starts no sub-agents.
  const inner = [];
  for await (const entry of graph.getSubgraphsAsync(undefined, true)) inner.push(entry[0]);
  expect(inner).toEqual(["subagent"]);
  const drawn = await graph.getGraphAsync({ xray: true });
  const nested = Object.keys(drawn.nodes).filter((id) => id.startsWith("subagent:"));
  expect(nested.sort()).toEqual(
    [
      "__start__",
      "start_step",
      "restore_files",
      "summarise",
      "agent",
      "repeat_stop",
      "approve",
      "tools",
      "subagent",
      "step_done",
      "step_limit",
      "__end__",
    ]
      .map((n) => `subagent:${n}`)
      .sort(),
  );
  // Without agent types there is no sub-agent to show.
  const plain = createGraph(settings, { model: new ScriptedChatModel([]), tools: createTools({ workspace: tmp.dir }) });
  expect([...plain.getSubgraphs()]).toEqual([]);
});

test("the tools node is LangGraph's own ToolNode, over the runtime's guarded tools", () => {
  const { graph } = buildGraph([]);
  const node = (graph.nodes.tools as unknown as { bound: unknown }).bound;
  expect(node).toBeInstanceOf(ToolNode);
  expect((node as ToolNode).tools.map((t) => t.name)).toEqual(createTools({ workspace: tmp.dir }).map((t) => t.name));
});

describe("routing", () => {
  const call = (name: string, args: Record<string, unknown> = {}) => ({
    id: `c-${name}-${JSON.stringify(args)}`,
    name,
    args,
    type: "tool_call" as const,
  });
  const turn = (...calls: ReturnType<typeof call>[]) => new AIMessage({ content: "", tool_calls: calls });
  const request = new HumanMessage("go");
  /** Where the model's turn goes: a node, or "<node> ×<sends>" for the calls sent on at once. */
  const route = (messages: BaseMessage[], mode: ApprovalMode = "auto-edit") => {
    const runtime = createRuntime(engineSettings(tmp.dir), {
      model: new ScriptedChatModel([]),
      tools: createTools({ workspace: tmp.dir }),
    });
    const to = routeAfterAgent(runtime, { messages }, mode, 30);
    return Array.isArray(to) ? `${to[0]!.node} ×${to.length}` : to;
  };

  test("after the model: an answer ends the run; read-only calls go straight to tools, a Send each; anything else passes approve", () => {
    expect(route([request, new AIMessage("done")])).toBe(END);
    expect(route([request, turn(call("read_file", { filePath: "a" }), call("list_directory"))])).toBe("tools ×2");
    expect(route([request, turn(call("read_file", { filePath: "a" }), call("write_file"))])).toBe("approve");
    expect(route([request, turn(call("execute_command", { command: "ls" }))])).toBe("approve");
    expect(route([request, turn(call("apply_patch"))])).toBe("approve");
    // A tool the policy does not know to be read-only (an MCP server's) is never routed past approve.
    expect(route([request, turn(call("read_file", { filePath: "a" }), call("some_server__delete_all"))])).toBe(
      "approve",
    );
    expect(route([request, turn(call("write_todos", { todos: [] }))])).toBe("tools ×1");
    // A read-only call that cannot run (arguments that do not fit) is answered at approve, never sent to the ToolNode.
    expect(route([request, turn(call("read_file", { nope: 1 }))])).toBe("approve");
  });

  test("in plan mode only plan mode's tools skip approve: stop_process, which runs unasked elsewhere, is refused there", () => {
    expect(route([request, turn(call("stop_process", { id: "bg-1" }))])).toBe("tools ×1");
    expect(route([request, turn(call("stop_process", { id: "bg-1" }))], "plan")).toBe("approve");
    expect(
      route([request, turn(call("read_file", { filePath: "a" }), call("write_todos", { todos: [] }))], "plan"),
    ).toBe("tools ×2");
  });

  test("after the model: the fifth identical turn in a row goes to repeat_stop", () => {
    const same = () => [
      turn(call("list_directory", { directoryPath: "." })),
      new ToolMessage({ tool_call_id: "x", content: "r" }),
    ];
    const four = [request, ...same(), ...same(), ...same(), ...same()];
    expect(route([...four, turn(call("list_directory", { directoryPath: "." }))])).toBe("repeat_stop");
    expect(route([...four.slice(0, -2), turn(call("list_directory", { directoryPath: "." }))])).toBe("tools ×1");
  });

  test("after the calls: the next step, or step_limit when the run used its steps", () => {
    const one = [request, turn(call("read_file")), new ToolMessage({ tool_call_id: "c", content: "r" })];
    expect(nextStep(one, 2)).toBe("start_step");
    expect(nextStep(one, 1)).toBe("step_limit");
  });
});

test("a read-only turn skips approve; a turn with an edit passes through it; the answer leaves stopReason done", async () => {
  const { graph } = buildGraph([
    { toolCalls: [{ name: "list_directory", args: { directoryPath: "." } }] },
    { toolCalls: [{ name: "write_file", args: { filePath: "a.txt", content: "a\n" } }] },
    "Done.",
  ]);
  expect(await nodesRun(graph, "go", 30)).toEqual([
    "start_step",
    "restore_files",
    "summarise",
    "agent",
    "tools",
    "step_done",
    "start_step",
    "restore_files",
    "summarise",
    "agent",
    "approve",
    "tools",
    "step_done",
    "start_step",
    "restore_files",
    "summarise",
    "agent",
  ]);
  const state = await graph.getState({ configurable: { thread_id: "t1" } });
  expect(state.values.stopReason).toBe("done");
  expect(state.next).toEqual([]);
});

test("the step limit is a node, and the state says why the run ended", async () => {
  const { graph } = buildGraph([
    { toolCalls: [{ name: "list_directory", args: { directoryPath: "." } }] },
    { toolCalls: [{ name: "read_file", args: { filePath: "missing.txt" } }] },
    "never reached",
  ]);
  expect(await nodesRun(graph, "go", 2)).toEqual([
    "start_step",
    "restore_files",
    "summarise",
    "agent",
    "tools",
    "step_done",
    "start_step",
    "restore_files",
    "summarise",
    "agent",
    "tools",
    "step_done",
    "step_limit",
  ]);
  expect((await graph.getState({ configurable: { thread_id: "t1" } })).values.stopReason).toBe("max_steps");
});

test("the loop guard's stop is a node (repeat_stop); the engine reports the state's stop reason", async () => {
  const { graph, settings } = buildGraph([
    ...repeatingTurns("list_directory", { directoryPath: "." }, 5),
    "Sorry, here it is.",
  ]);
  const events: AgentEvent[] = [];
  const engine = createGraphEngine({
    graph,
    meta: { engine: "graph", model: "scripted", provider: "offline", workspace: tmp.dir },
    modelSettings: settings,
    approval: "auto-edit",
    maxSteps: 30,
  });
  const run = (task: string) =>
    engine.run({ task, threadId: "t1", emit: (e) => events.push(e), approver: async () => ({ decision: "deny" }) });
  expect((await run("list forever")).reason).toBe("loop_guard");
  expect((await graph.getState({ configurable: { thread_id: "t1" } })).values.stopReason).toBe("loop_guard");
  // The next request is a new run, which ends for its own reason.
  expect((await run("continue")).reason).toBe("done");
  expect((await graph.getState({ configurable: { thread_id: "t1" } })).values.stopReason).toBe("done");
});

describe("both engines report the same events, in the same order", () => {
  const sequence = (events: AgentEvent[]) =>
    events
      .filter((e) => e.type !== "token" && e.type !== "run_start" && e.type !== "run_end")
      .map((e) =>
        e.type === "loop_guard"
          ? `loop_guard:${e.action}`
          : e.type === "tool_result"
            ? `tool_result:${e.status}`
            : e.type,
      );

  test("a run the loop guard stops: the stop is reported before the calls it stops", async () => {
    const runs = await Promise.all(
      (["graph", "loop"] as const).map(async (kind) => {
        const h = engineHarness(kind, tmp.dir, repeatingTurns("list_directory", { directoryPath: "." }, 10));
        await h.run("list forever", { threadId: `t-${kind}` });
        return sequence(h.events);
      }),
    );
    expect(runs[0]).toEqual(runs[1]);
    const stop = runs[0]!.indexOf("loop_guard:stop");
    expect(runs[0]!.slice(stop - 1)).toEqual(["usage", "loop_guard:stop", "tool_call", "tool_result:error"]);
  });

  test("a run that reads, writes and answers", async () => {
    const script = (): ScriptedTurn[] => [
      { toolCalls: [{ name: "list_directory", args: { directoryPath: "." } }] },
      {
        toolCalls: [
          { name: "write_file", args: { filePath: "b.txt", content: "b\n" } },
          { name: "read_file", args: { filePath: "nope.txt" } },
        ],
      },
      "Done.",
    ];
    const graph = engineHarness("graph", tmp.dir, script(), { approval: "auto-edit" });
    await graph.run("go", { threadId: "t-graph" });
    // The loop's thread never read the graph's b.txt, and write_file replaces only what it read: start afresh.
    rmSync(path.join(tmp.dir, "b.txt"));
    const loop = engineHarness("loop", tmp.dir, script(), { approval: "auto-edit" });
    await loop.run("go", { threadId: "t-loop" });
    expect(sequence(graph.events)).toEqual(sequence(loop.events));
    expect(sequence(graph.events)).toEqual([
      "step",
      "usage",
      "tool_call",
      "tool_result:success",
      "step",
      "usage",
      "tool_call",
      "tool_call",
      "tool_result:success",
      "tool_result:error",
      "step",
      "usage",
      "final",
    ]);
  });
});

/** Each node's update, in order, as Studio's thread view shows them ("updates" stream). */
async function updatesOf(
  graph: ReturnType<typeof buildGraph>["graph"],
  task: string,
  configurable: Record<string, unknown> = {},
): Promise<Array<[string, Record<string, unknown>]>> {
  const config = {
    configurable: { thread_id: "t1", approval: "auto-edit" as const, maxSteps: 30, ...configurable },
    streamMode: "updates" as const,
    // Room for the eight steps (three nodes each) the summary test takes.
    recursionLimit: 100,
  };
  const updates: Array<[string, Record<string, unknown>]> = [];
  for await (const chunk of await graph.stream({ messages: [new HumanMessage(task)] }, config))
    for (const [node, update] of Object.entries(chunk)) updates.push([node, (update ?? {}) as Record<string, unknown>]);
  return updates;
}

test("time travel is its own node: restore_files says in state which files it brought back, and only when it did", async () => {
  const { graph } = buildGraph([
    { toolCalls: [{ name: "write_file", args: { filePath: "a.txt", content: "a\n" } }] },
    "Wrote a.",
    { toolCalls: [{ name: "write_file", args: { filePath: "b.txt", content: "b\n" } }] },
    "Wrote b.",
    "Forked.",
  ]);
  const first = await updatesOf(graph, "write a");
  expect(first.filter(([node]) => node === "restore_files").map(([, u]) => u)).toEqual([
    { restoredFiles: [], keptFiles: [] },
    { restoredFiles: [], keptFiles: [] },
  ]);
  await updatesOf(graph, "write b");
  expect(existsSync(path.join(tmp.dir, "b.txt"))).toBe(true);

  // Fork from the checkpoint where the first request had finished, as Studio does.
  let endOfFirst: string | undefined;
  for await (const snapshot of graph.getStateHistory({ configurable: { thread_id: "t1" } })) {
    if (snapshot.next.length === 0 && snapshot.values.messages.length === 4)
      endOfFirst = snapshot.config.configurable?.checkpoint_id as string;
  }
  expect(endOfFirst).toBeDefined();
  const forked = await updatesOf(graph, "go on from here", { checkpoint_id: endOfFirst });
  expect(forked.map(([node]) => node)).toEqual(["start_step", "restore_files", "summarise", "agent"]);
  expect(forked[1]![1]).toEqual({ restoredFiles: ["b.txt"], keptFiles: [] });
  expect(existsSync(path.join(tmp.dir, "b.txt"))).toBe(false);
  expect(readFileSync(path.join(tmp.dir, "a.txt"), "utf8")).toBe("a\n");
});

test("a summary is its own node: summarise's update replaces the conversation with the summary and the recent turns", async () => {
  // Seven results each under what one may take at first sight in a 16k window fill it.
  const files = ["a", "b", "c", "d", "e", "f", "g"];
  const text = (ch: string) => Array.from({ length: 50 }, () => ch.repeat(99)).join("\n");
  for (const f of files) writeFileSync(path.join(tmp.dir, `${f}.txt`), text(f));
  const settings = engineSettings(tmp.dir, { approval: "auto-edit", contextTokens: 16_000 });
  const graph = createGraph(settings, {
    checkpointer: new MemorySaver(),
    model: new ScriptedChatModel([
      ...files.map((f) => ({ toolCalls: [{ name: "read_file", args: { filePath: `${f}.txt` } }] })),
      "SUMMARY: read a.txt.",
      "All files are fine.",
    ]),
    tools: createTools({ workspace: tmp.dir }),
  });
  const updates = await updatesOf(graph, "check the seven files");
  const summaries = updates.filter(([node]) => node === "summarise");
  // Nothing to summarise in the first seven steps: the node runs and changes nothing.
  expect(summaries.slice(0, 7).map(([, u]) => u)).toEqual([{}, {}, {}, {}, {}, {}, {}]);
  const made = summaries[7]![1].messages as BaseMessage[];
  expect(made[0]).toBeInstanceOf(RemoveMessage);
  const summary = made.find((m) => AIMessage.isInstance(m) && String(m.content).includes("SUMMARY: read a.txt."));
  expect(summary?.response_metadata).toHaveProperty(SUMMARY_KEY);
  expect(updates.map(([node]) => node).slice(-2)).toEqual(["summarise", "agent"]);
});
