import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { Writable } from "node:stream";
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { journalStarted } from "../helpers/journal.js";
import { interruptedResultText, recoverInterruptedCalls, UNKNOWN_CHANGES } from "../../src/agent/crash-recovery.js";
import { fileToolJournal } from "../../src/memory/tool-journal.js";
import { createJsonRenderer } from "../../src/ui/render.js";
import { BUILT_IN_SUBAGENTS } from "../../src/tools/task.js";
import { RoutedChatModel } from "../helpers/routed-model.js";
import type { ApprovalResponse } from "../../src/contracts/events.js";
import { editNote } from "../../src/guard/results.js";
import { engineHarness, eventsOf, type EngineKind } from "../helpers/engine-harness.js";
import type { ScriptedTurn } from "../helpers/scripted-model.js";
import { makeTempDir } from "../helpers/tmp.js";

/**
 * Approve with an edit (issue 32, item 4), in both engines: the person's arguments run instead
 * of the model's, the edited call is judged again (schema, classifier, protected paths), the
 * model is told, and the saved model turn keeps the model's own call.
 */

let tmp: ReturnType<typeof makeTempDir>;
beforeEach(() => {
  tmp = makeTempDir();
});
afterEach(() => tmp.cleanup());

describe.each(["graph", "loop"] as const)("%s engine", (kind: EngineKind) => {
  const harness = (script: ScriptedTurn[], answers: ApprovalResponse[] = []) => {
    const h = engineHarness(kind, tmp.dir, script, { approval: "suggest" });
    return { h, run: () => h.run("go", { answers }) };
  };

  test("an edited command runs as edited; the model reads the note and the saved turn keeps its call", async () => {
    const { h, run } = harness(
      [{ toolCalls: [{ name: "execute_command", args: { command: "echo model > out.txt" } }] }, "done"],
      [{ decision: "edit", args: { command: "echo person > out.txt" } }],
    );
    expect((await run()).reason).toBe("done");
    expect(readFileSync(path.join(tmp.dir, "out.txt"), "utf8")).toBe("person\n");
    expect(h.approvals.map((a) => a.args)).toEqual([{ command: "echo model > out.txt" }]);
    const [approval] = eventsOf(h.events, "approval");
    expect(approval!.response).toEqual({ decision: "edit", args: { command: "echo person > out.txt" } });
    const [result] = eventsOf(h.events, "tool_result");
    expect(result!.editedArgs).toEqual({ command: "echo person > out.txt" });
    const note = editNote("execute_command", { command: "echo person > out.txt" });
    expect(note).toBe(
      '[The user edited this execute_command call before approving it. It ran with these arguments instead of yours: {"command":"echo person > out.txt"}]',
    );
    expect(result!.content.startsWith(`${note}\n`)).toBe(true);
    // The next request: the model's own call, then the result that says what ran.
    const sent = h.model.calls[1]!;
    const ai = sent.find((m) => AIMessage.isInstance(m)) as AIMessage;
    expect(ai.tool_calls!.map((c) => c.args)).toEqual([{ command: "echo model > out.txt" }]);
    const tool = sent.find((m) => ToolMessage.isInstance(m)) as ToolMessage;
    expect(tool.content).toBe(result!.content);
    const saved = await h.history();
    expect((saved.find((m) => AIMessage.isInstance(m)) as AIMessage).tool_calls!.map((c) => c.args)).toEqual([
      { command: "echo model > out.txt" },
    ]);
  });

  test("an edit that makes the command dangerous is asked about again, showing the edited call", async () => {
    const { h, run } = harness(
      [{ toolCalls: [{ name: "execute_command", args: { command: "echo keep > keep.txt" } }] }, "done"],
      [{ decision: "edit", args: { command: "rm -rf ~/x-edit-test" } }, { decision: "deny" }],
    );
    await run();
    expect(h.approvals.map((a) => [a.args, a.edited, a.asksEveryTime])).toEqual([
      [{ command: "echo keep > keep.txt" }, undefined, undefined],
      [{ command: "rm -rf ~/x-edit-test" }, true, true],
    ]);
    expect(h.approvals[1]!.reason).toMatch(/dangerous|outside|home/);
    expect(existsSync(path.join(tmp.dir, "keep.txt"))).toBe(false);
    const [result] = eventsOf(h.events, "tool_result");
    expect(result).toMatchObject({ notRun: true, status: "error" });
  });

  test("an edit that does not fit the tool is asked about again with what is wrong; approving then runs the model's call", async () => {
    const { h, run } = harness(
      [{ toolCalls: [{ name: "write_file", args: { filePath: "w.txt", content: "model\n" } }] }, "done"],
      [{ decision: "edit", args: { filePath: "w.txt", body: "person\n" } }, { decision: "approve" }],
    );
    await run();
    expect(h.approvals).toHaveLength(2);
    expect(h.approvals[1]!.editError).toBe(
      'the edited arguments do not fit write_file: write_file does not take "body".\nIts arguments are: filePath, content.\nwrite_file got invalid arguments:\n- content: required, and missing.',
    );
    expect(h.approvals[1]!.editDraft).toEqual({ filePath: "w.txt", body: "person\n" });
    expect(readFileSync(path.join(tmp.dir, "w.txt"), "utf8")).toBe("model\n");
    expect(eventsOf(h.events, "tool_result")[0]!.editedArgs).toBeUndefined();
  });

  test("an edit of a file change to a protected path is asked about again; an edit without args asks again", async () => {
    const { h, run } = harness(
      [{ toolCalls: [{ name: "write_file", args: { filePath: "ok.txt", content: "x\n" } }] }, "done"],
      [
        { decision: "edit" },
        { decision: "edit", args: { filePath: ".git/hooks/pre-commit", content: "x\n" } },
        { decision: "approve" },
      ],
    );
    await run();
    expect(h.approvals.map((a) => [a.args.filePath, a.edited, a.editError])).toEqual([
      ["ok.txt", undefined, undefined],
      ["ok.txt", undefined, "the edit must be a JSON object of write_file's arguments"],
      [".git/hooks/pre-commit", true, undefined],
    ]);
    expect(h.approvals[2]!.asksEveryTime).toBe(true);
    expect(readFileSync(path.join(tmp.dir, ".git/hooks/pre-commit"), "utf8")).toBe("x\n");
    expect(existsSync(path.join(tmp.dir, "ok.txt"))).toBe(false);
    expect(eventsOf(h.events, "tool_result")[0]!.editedArgs).toEqual({
      filePath: ".git/hooks/pre-commit",
      content: "x\n",
    });
  });

  test("an edit equal to the call is an approval, with no note", async () => {
    const { h, run } = harness(
      [{ toolCalls: [{ name: "execute_command", args: { command: "echo same > same.txt" } }] }, "done"],
      [{ decision: "edit", args: { command: "echo same > same.txt" } }],
    );
    await run();
    expect(readFileSync(path.join(tmp.dir, "same.txt"), "utf8")).toBe("same\n");
    expect(eventsOf(h.events, "tool_result")[0]!.editedArgs).toBeUndefined();
    expect(eventsOf(h.events, "tool_result")[0]!.content.startsWith("[The user edited")).toBe(false);
  });
});

test("the journal records the arguments an edited call runs with, and --json prints the edit's events", async () => {
  const journal = fileToolJournal(tmp.dir);
  const messages = [new HumanMessage({ id: "req-1", content: "go" })];
  const calls = [
    { id: "c1", name: "execute_command" },
    { id: "c2", name: "read_file" },
  ];
  await journalStarted({ journal, threadId: "t", messages, calls, edits: { c1: { command: "echo person" } } });
  const entries = await journal.read("t");
  expect(entries.map((e) => [e.callId, e.editedArgs])).toEqual([
    ["c1", { command: "echo person" }],
    ["c2", undefined],
  ]);

  const h = engineHarness(
    "graph",
    tmp.dir,
    [{ toolCalls: [{ name: "execute_command", args: { command: "echo model > j.txt" } }] }, "done"],
    { approval: "suggest" },
  );
  await h.run("go", { answers: [{ decision: "edit", args: { command: "echo person > j.txt" } }] });
  let printed = "";
  const out = new Writable({
    write(chunk, _enc, done) {
      printed += String(chunk);
      done();
    },
  });
  const json = createJsonRenderer({ verbose: false, out });
  for (const event of h.events) if (event.type === "approval" || event.type === "tool_result") json.event(event);
  const lines = printed
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  expect(lines.map((l) => l.type)).toEqual(["approval", "tool_result"]);
  expect(lines[0]!.response).toEqual({ decision: "edit", args: { command: "echo person > j.txt" } });
  expect(lines[1]!.editedArgs).toEqual({ command: "echo person > j.txt" });
});

describe.each(["graph", "loop"] as const)("inside a sub-agent (%s engine)", (kind: EngineKind) => {
  const task = (prompt: string) => ({
    name: "task",
    args: { description: "Do it", prompt, subagent_type: "general" },
  });

  test("an edit through the parent's question runs in the sub-agent as edited, and the sub-agent is told", async () => {
    const model = new RoutedChatModel({
      "add a file": [{ toolCalls: [task("Create hello.txt with hi.")] }, "Created."],
      "Create hello.txt with hi.": [
        { toolCalls: [{ name: "write_file", args: { filePath: "hello.txt", content: "hi\n" } }] },
        "Wrote hello.txt.",
      ],
    });
    const h = engineHarness(kind, tmp.dir, [], { approval: "suggest" }, { model, subagents: BUILT_IN_SUBAGENTS });
    const edited = { filePath: "hello.txt", content: "edited\n" };
    await h.run("add a file", { answers: [{ decision: "edit", args: edited }] });
    expect(readFileSync(path.join(tmp.dir, "hello.txt"), "utf8")).toBe("edited\n");
    const [, second] = model.callsOf("Create hello.txt with hi.");
    const result = second!.find((m) => ToolMessage.isInstance(m)) as ToolMessage;
    expect(String(result.content).startsWith(`${editNote("write_file", edited)}\n`)).toBe(true);
  });

  test("a dangerous edit inside the sub-agent is asked about again; declined, nothing runs", async () => {
    const victim = makeTempDir();
    try {
      writeFileSync(path.join(victim.dir, "keep.txt"), "keep\n");
      const model = new RoutedChatModel({
        "run it": [{ toolCalls: [task("Run the command.")] }, "Done."],
        "Run the command.": [
          { toolCalls: [{ name: "execute_command", args: { command: "echo hi > a.txt" } }] },
          "It was declined.",
        ],
      });
      const h = engineHarness(kind, tmp.dir, [], { approval: "suggest" }, { model, subagents: BUILT_IN_SUBAGENTS });
      const dangerous = { command: `rm -rf ${victim.dir}` };
      await h.run("run it", { answers: [{ decision: "edit", args: dangerous }, { decision: "deny" }] });
      expect(h.approvals.map((a) => [a.args, a.edited])).toEqual([
        [{ command: "echo hi > a.txt" }, undefined],
        [dangerous, true],
      ]);
      expect(readFileSync(path.join(victim.dir, "keep.txt"), "utf8")).toBe("keep\n");
      expect(existsSync(path.join(tmp.dir, "a.txt"))).toBe(false);
    } finally {
      victim.cleanup();
    }
  });
});

test("a killed run's edited call is closed with the edit note: the model learns what ran", async () => {
  const journal = fileToolJournal(tmp.dir);
  const edited = { command: "echo person > k.txt" };
  const ai = new AIMessage({
    content: "",
    tool_calls: [{ id: "k1", name: "execute_command", args: { command: "echo model > k.txt" }, type: "tool_call" }],
  });
  const messages = [new HumanMessage({ id: "req-k", content: "go" }), ai];
  await journalStarted({ journal, threadId: "tk", messages, calls: ai.tool_calls!, edits: { k1: edited } });
  const recovered = await recoverInterruptedCalls({
    journal,
    threadId: "tk",
    workspace: tmp.dir,
    messages,
    timeTravelThread: "",
  });
  expect(recovered.results.map((r) => r.content)).toEqual([
    `${editNote("execute_command", edited)}\n${interruptedResultText("execute_command", undefined, { unknown: UNKNOWN_CHANGES.none })}`,
  ]);
  // No snapshot before the step (none was taken here): the text says so, not that snapshots were off.
  expect(String(recovered.results[0]!.content)).toContain(
    "What changed on disk is not known (no workspace snapshot was taken before this step: its tools are not ones that change files, or the snapshot could not be taken in time).",
  );
});
