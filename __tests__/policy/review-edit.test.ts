import { declarationOf } from "../../src/contracts/tools.js";
import { readOnlyTools } from "../../src/policy/effects.js";
import { existsSync, writeFileSync } from "node:fs";
import path from "node:path";
import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { Command, MemorySaver } from "@langchain/langgraph";
import type { ApprovalRequest, ApprovalResponse } from "../../src/contracts/events.js";
import { createGraph } from "../../src/graph/graph.js";
import { DO_NOT_GET_AROUND } from "../../src/guard/failure.js";
import { refusedEditNote } from "../../src/policy/edit-call.js";
import { planModeReason } from "../../src/policy/plan-mode.js";
import { reviewToolCalls } from "../../src/policy/review.js";
import { createTools, offeredToolNames } from "../../src/tools/index.js";
import { engineHarness, engineSettings, eventsOf, type EngineKind } from "../helpers/engine-harness.js";
import { ScriptedChatModel } from "../helpers/scripted-model.js";
import { makeTempDir } from "../helpers/tmp.js";

/**
 * Issue 32 item 4, "the call then runs as edited, through the same classifier": an edit made at
 * the approval question is judged again by everything that judges a call. A project's deny rule
 * refuses it (never run, the model told what the person wrote and which rule); plan mode refuses
 * what it refuses. Plan mode never asks (a call either reads, and runs, or is refused unasked),
 * and an edit keeps the call's tool, so the one way an edit meets plan mode is a run resumed in
 * plan mode with an answer to a question an earlier run asked (a Studio resume carries its own
 * configuration): the call is then refused as plan mode refuses it, and the edit never runs.
 */

let tmp: ReturnType<typeof makeTempDir>;
beforeEach(() => {
  tmp = makeTempDir();
});
afterEach(() => tmp.cleanup());

/** A committed rules file with one deny rule (deny rules apply without trust: they only tighten). */
function denyCurl(): void {
  writeFileSync(
    path.join(tmp.dir, "mini-cursor.config.json"),
    JSON.stringify({ commands: { deny: [{ command: "curl", reason: "no network from this project" }] } }),
  );
}

/** The refusal of a command the deny rule covers; `matched` is the command of the line it matched. */
const curlRefusal = (matched: string) =>
  `Refused: this execute_command call was not run, because the project rules (mini-cursor.config.json) deny \`curl\`: no network from this project (it matches \`${matched}\`). ${DO_NOT_GET_AROUND}`;

const call = (id: string, name: string, args: Record<string, unknown>) => ({
  id,
  name,
  args,
  type: "tool_call" as const,
});

/** reviewToolCalls on `calls` with scripted answers; returns the outcome and the questions asked. */
async function review(
  calls: ReturnType<typeof call>[],
  mode: "suggest" | "auto-edit" | "full-auto" | "plan",
  answers: ApprovalResponse[],
) {
  const asked: ApprovalRequest[] = [];
  const outcome = await reviewToolCalls({
    calls,
    answered: new Set(),
    mode,
    always: [],
    workspace: tmp.dir,
    tools: createTools({ workspace: tmp.dir }),
    configFiles: { trustStore: path.join(tmp.dir, "no-trust.json"), mcpUserConfig: path.join(tmp.dir, "no-mcp.json") },
    ask: (request) => {
      asked.push(request);
      const answer = answers.shift();
      if (!answer) throw new Error(`no scripted answer for the question about ${request.tool}`);
      return answer;
    },
  });
  return { ...outcome, asked };
}

describe("reviewToolCalls judges an edit again", () => {
  test("an edit that a project deny rule covers is refused unasked: the model reads what the person wrote and the rule", async () => {
    denyCurl();
    const edited = { command: "curl -s http://127.0.0.1:9/install.sh" };
    const r = await review([call("c1", "execute_command", { command: "echo hi > hi.txt" })], "suggest", [
      { decision: "edit", args: edited },
    ]);
    expect(r.asked.map((q) => q.args)).toEqual([{ command: "echo hi > hi.txt" }]);
    expect(r.edits).toEqual({});
    expect(refusedEditNote("execute_command", edited)).toBe(
      '[The user edited this execute_command call before approving it, to these arguments: {"command":"curl -s http://127.0.0.1:9/install.sh"}. Neither the edited call nor yours ran:]',
    );
    expect(r.declined.map((m) => [m.tool_call_id, m.status, m.content, m.artifact])).toEqual([
      [
        "c1",
        "error",
        `${refusedEditNote("execute_command", edited)}\n${curlRefusal(edited.command)}`,
        { notRun: true },
      ],
    ]);
  });

  test("the deny rule is matched on the parsed command, through wrappers and after other commands", async () => {
    denyCurl();
    for (const command of ["true && curl http://127.0.0.1:9/x", "env X=1 sh -c 'curl http://127.0.0.1:9/x'"]) {
      const r = await review([call("c1", "execute_command", { command: "echo hi > hi.txt" })], "auto-edit", [
        { decision: "edit", args: { command } },
      ]);
      expect(r.edits).toEqual({});
      expect(r.declined.map((m) => m.content)).toEqual([
        `${refusedEditNote("execute_command", { command })}\n${curlRefusal("curl http://127.0.0.1:9/x")}`,
      ]);
    }
  });

  test("an edit of a file change is judged against the project's rules too: a rules file asks again, edited", async () => {
    const r = await review([call("c1", "write_file", { filePath: "notes.txt", content: "x\n" })], "suggest", [
      { decision: "edit", args: { filePath: "mini-cursor.config.json", content: '{"commands":{"allow":["curl"]}}' } },
      { decision: "deny" },
    ]);
    expect(r.asked.map((q) => [q.args.filePath, q.edited, q.asksEveryTime])).toEqual([
      ["notes.txt", undefined, undefined],
      ["mini-cursor.config.json", true, true],
    ]);
    expect(r.edits).toEqual({});
    expect(existsSync(path.join(tmp.dir, "mini-cursor.config.json"))).toBe(false);
  });

  test("plan mode asks nothing, so no edit is made there: every call that is not a read is refused unasked", async () => {
    const tools = createTools({ workspace: tmp.dir });
    const args: Record<string, Record<string, unknown>> = {
      write_file: { filePath: "a.txt", content: "x" },
      edit_file: { filePath: "a.txt", oldString: "x", newString: "y" },
      apply_patch: { patch: "*** Begin Patch\n*** Add File: b.txt\n+x\n*** End Patch" },
      execute_command: { command: "ls" },
      stop_process: { processId: "p1" },
    };
    const names = offeredToolNames("both").filter((n) => declarationOf(tools[n as "read_file"]).kind !== "read");
    expect(names.sort()).toEqual(Object.keys(args).sort());
    const calls = names.map((n, i) => call(`c${i}`, n, args[n]!));
    const r = await review(calls, "plan", []);
    expect(r.asked).toEqual([]);
    expect(r.declined.map((m) => m.content)).toEqual(
      names.map(
        (n) =>
          `Refused: this ${n} call was not run, because ${planModeReason(n, readOnlyTools(tools))}. ${DO_NOT_GET_AROUND}`,
      ),
    );
  });
});

describe.each(["graph", "loop"] as const)("%s engine", (kind: EngineKind) => {
  test("an edit at the question that hits a project deny rule is refused and never runs; the run goes on", async () => {
    denyCurl();
    const edited = { command: "curl -o got.txt http://127.0.0.1:9/x; echo ran > ran.txt" };
    const h = engineHarness(
      kind,
      tmp.dir,
      [{ toolCalls: [{ name: "execute_command", args: { command: "echo model > out.txt" } }] }, "ok"],
      { approval: "suggest" },
    );
    expect((await h.run("go", { answers: [{ decision: "edit", args: edited }] })).reason).toBe("not_run");
    expect(h.approvals.map((a) => a.args)).toEqual([{ command: "echo model > out.txt" }]);
    for (const file of ["out.txt", "ran.txt", "got.txt"]) expect(existsSync(path.join(tmp.dir, file))).toBe(false);
    const [result] = eventsOf(h.events, "tool_result");
    expect(result).toMatchObject({ notRun: true, status: "error" });
    expect(result!.editedArgs).toBeUndefined();
    const tool = h.model.calls[1]!.find((m) => ToolMessage.isInstance(m)) as ToolMessage;
    expect(tool.content).toBe(
      `${refusedEditNote("execute_command", edited)}\n${curlRefusal("curl -o got.txt http://127.0.0.1:9/x")}`,
    );
  });

  test("in plan mode the model's write and command are refused unasked: there is no question to edit at", async () => {
    const h = engineHarness(
      kind,
      tmp.dir,
      [
        {
          toolCalls: [
            { name: "write_file", args: { filePath: "w.txt", content: "x\n" } },
            { name: "execute_command", args: { command: "echo x > c.txt" } },
          ],
        },
        "planned",
      ],
      { approval: "plan" },
    );
    await h.run("go", { answers: [{ decision: "edit", args: { command: "echo edited > e.txt" } }] });
    expect(h.approvals).toEqual([]);
    for (const file of ["w.txt", "c.txt", "e.txt"]) expect(existsSync(path.join(tmp.dir, file))).toBe(false);
    expect(eventsOf(h.events, "tool_result").map((r) => [r.name, r.notRun])).toEqual([
      ["write_file", true],
      ["execute_command", true],
    ]);
  });
});

test("graph: an edit answering a question, resumed in plan mode, is refused as plan mode refuses it; nothing runs", async () => {
  const model = new ScriptedChatModel([
    { toolCalls: [{ name: "execute_command", args: { command: "echo model > out.txt" } }] },
    "planned instead",
  ]);
  const graph = createGraph(engineSettings(tmp.dir, { approval: "suggest" }), {
    checkpointer: new MemorySaver(),
    model,
    tools: createTools({ workspace: tmp.dir }),
  });
  const thread = { thread_id: "plan-resume" };
  const first = await graph.invoke(
    { messages: [new HumanMessage({ id: "req-1", content: "go" })] },
    { configurable: { ...thread, approval: "suggest" } },
  );
  const waiting = (first as { __interrupt__?: Array<{ value: ApprovalRequest }> }).__interrupt__ ?? [];
  expect(waiting.map((i) => i.value.args)).toEqual([{ command: "echo model > out.txt" }]);
  // The person answers with an edit, in a run whose configuration is plan mode.
  const edited = { command: "echo person > edited.txt" };
  const done = await graph.invoke(new Command({ resume: { decision: "edit", args: edited } }), {
    configurable: { ...thread, approval: "plan" },
  });
  expect((done as { __interrupt__?: unknown[] }).__interrupt__ ?? []).toEqual([]);
  expect(existsSync(path.join(tmp.dir, "out.txt"))).toBe(false);
  expect(existsSync(path.join(tmp.dir, "edited.txt"))).toBe(false);
  const messages = (await graph.getState({ configurable: thread })).values.messages as BaseMessage[];
  expect(messages.map((m) => m.getType())).toEqual(["human", "ai", "tool", "ai"]);
  expect((messages[1] as AIMessage).tool_calls!.map((c) => c.args)).toEqual([{ command: "echo model > out.txt" }]);
  expect(messages[2]!.content).toBe(
    `Refused: this execute_command call was not run, because ${planModeReason("execute_command", readOnlyTools(createTools({ workspace: tmp.dir })))}. ${DO_NOT_GET_AROUND}`,
  );
});
