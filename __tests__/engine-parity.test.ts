import { type BaseMessage, ToolMessage, AIMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { z } from "zod";
import type { AgentEvent } from "../src/contracts/events.js";
import { createTools } from "../src/tools/index.js";
import { engineHarness, type EngineKind } from "./helpers/engine-harness.js";
import type { ScriptedTurn } from "./helpers/scripted-model.js";
import { makeTempDir } from "./helpers/tmp.js";

/**
 * One step, written once (src/agent/step.ts): both engines run the same scripted turns and must
 * leave the same conversation, send the model the same messages and report the same events.
 * The turn mixes every way a call gets a result without its tool's own answer: a tool that
 * throws, a call the user refuses, an unknown tool, arguments that do not fit, next to a
 * write_todos list that is kept.
 */

const dirs: Array<ReturnType<typeof makeTempDir>> = [];
afterEach(() => {
  for (const d of dirs.splice(0)) d.cleanup();
});

/** A tool outside defineTool, so its error reaches the engine's own catch (the shared tool-error result). */
const flaky = tool(
  async () => {
    throw new Error("the disk is on fire");
  },
  { name: "flaky", description: "test tool that always throws", schema: z.object({}) },
);

const TODOS = [
  { content: "Read the code", status: "completed" },
  { content: "Fix the bug", status: "in_progress" },
];

function script(): ScriptedTurn[] {
  return [
    {
      toolCalls: [
        { name: "write_todos", args: { todos: TODOS } },
        { name: "flaky", args: {} },
        { name: "delete_everything", args: {} },
        { name: "read_file", args: { filePath: 42 } },
        { name: "execute_command", args: { command: "touch refused.txt" } },
      ],
    },
    { toolCalls: [{ name: "write_todos", args: { todos: [{ content: "Fix the bug", status: "completed" }] } }] },
    "All done.",
  ];
}

interface Shape {
  type: string;
  content: unknown;
  name?: string;
  status?: string;
  call?: string;
  calls?: Array<{ name: string; args: unknown; id: string }>;
}

/** Messages with the run's random ids and workspace replaced by stable names, so two runs compare exactly. */
function shapes(messages: readonly BaseMessage[], workspace: string): Shape[] {
  const ids = new Map<string, string>();
  const idOf = (id: string | undefined) => {
    if (!id) return "";
    if (!ids.has(id)) ids.set(id, `call${ids.size + 1}`);
    return ids.get(id)!;
  };
  const clean = (value: unknown) =>
    JSON.parse(
      JSON.stringify(value ?? "")
        .split(workspace)
        .join("<workspace>"),
    );
  return messages.map((m) => {
    const shape: Shape = { type: m.getType(), content: clean(m.content) };
    if (AIMessage.isInstance(m) && m.tool_calls?.length)
      shape.calls = m.tool_calls.map((c) => ({ name: c.name, args: c.args, id: idOf(c.id) }));
    if (ToolMessage.isInstance(m)) {
      shape.name = m.name;
      shape.status = m.status;
      shape.call = idOf(m.tool_call_id);
    }
    return shape;
  });
}

/** Events without timings, ids and token counts. */
function eventShapes(events: readonly AgentEvent[]): unknown[] {
  return events
    .filter((e) => !["usage", "token", "run_start", "run_end"].includes(e.type))
    .map((e) => {
      if (e.type === "tool_call") return { type: e.type, name: e.name, args: e.args };
      if (e.type === "tool_result") return { type: e.type, name: e.name, status: e.status, content: e.content };
      if (e.type === "approval") return { type: e.type, tool: e.request.tool, decision: e.response.decision };
      return e;
    });
}

async function runEngine(kind: EngineKind) {
  const tmp = makeTempDir();
  dirs.push(tmp);
  const h = engineHarness(
    kind,
    tmp.dir,
    script(),
    { approval: "auto-edit" },
    {
      tools: [...createTools({ workspace: tmp.dir }), flaky],
    },
  );
  const summary = await h.run("fix the bug", {
    // flaky declares nothing, so it asks; the command is refused.
    answers: [{ decision: "approve" }, { decision: "deny", feedback: "not that" }],
  });
  return {
    summary,
    history: shapes(await h.history(), tmp.dir),
    sent: h.model.calls.map((call) => shapes(call, tmp.dir)),
    events: eventShapes(h.events),
    todos: await h.todos(),
    approvals: h.approvals.map((a) => a.tool),
  };
}

test("both engines leave the same messages, send the same requests and report the same events", async () => {
  const graph = await runEngine("graph");
  const loop = await runEngine("loop");

  expect(graph.summary.reason).toBe("done");
  expect(loop.summary.reason).toBe("done");
  expect(graph.approvals).toEqual(["flaky", "execute_command"]);
  expect(loop.approvals).toEqual(graph.approvals);

  // The results of the first turn, as the model reads them, in one order for both engines
  // (agent/dispatch.ts): refused calls, calls that cannot run, then the calls that ran.
  const firstResults = graph.history.slice(2, 7);
  expect(firstResults.map((m) => [m.name, m.status, m.call])).toEqual([
    ["execute_command", "error", "call5"],
    ["delete_everything", "error", "call3"],
    ["read_file", "error", "call4"],
    ["write_todos", "success", "call1"],
    ["flaky", "error", "call2"],
  ]);
  expect(firstResults[0]!.content).toBe(
    "This execute_command call was not run, because the user declined it. Their feedback: not that",
  );
  expect(String(firstResults[1]!.content)).toMatch(/^Error: there is no tool named "delete_everything"\./);
  expect(String(firstResults[2]!.content)).toMatch(/filePath/);
  expect(firstResults[4]!.content).toBe("Error: the disk is on fire\n Please fix your mistakes.");

  expect(loop.history).toEqual(graph.history);
  expect(loop.sent).toEqual(graph.sent);
  expect(loop.events).toEqual(graph.events);
  expect(graph.todos).toEqual([{ content: "Fix the bug", status: "completed" }]);
  expect(loop.todos).toEqual(graph.todos);
  expect(graph.events.filter((e) => (e as { type: string }).type === "todos")).toEqual([
    { type: "todos", step: 1, todos: TODOS },
    { type: "todos", step: 2, todos: [{ content: "Fix the bug", status: "completed" }] },
  ]);
});
