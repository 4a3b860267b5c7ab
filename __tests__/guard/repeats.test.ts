import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import {
  checkRepeats,
  LOOP_NOTE_AT,
  LOOP_STOP_AT,
  loopNote,
  loopStopResult,
  turnSignature,
  withLoopNote,
} from "../../src/guard/repeats.js";
import { engineHarness, eventsOf } from "../helpers/engine-harness.js";
import { repeatingTurns } from "../helpers/scripted-model.js";
import { makeTempDir } from "../helpers/tmp.js";

let n = 0;
function turn(name: string, args: Record<string, unknown>): BaseMessage[] {
  const id = `c${++n}`;
  return [
    new AIMessage({ content: "", tool_calls: [{ id, name, args, type: "tool_call" }] }),
    new ToolMessage({ tool_call_id: id, name, content: "same result" }),
  ];
}
const same = () => turn("read_file", { filePath: "a.txt", offset: 1 });

describe("checkRepeats", () => {
  test("counts identical turns in a row since the latest request", () => {
    expect(checkRepeats([new HumanMessage("go"), ...same()]).repeats).toBe(1);
    expect(checkRepeats([new HumanMessage("go"), ...same(), ...same()])).toMatchObject({ repeats: 2, action: "none" });
    const three = [new HumanMessage("go"), ...same(), ...same(), ...same()];
    expect(checkRepeats(three)).toEqual({
      repeats: 3,
      action: "note",
      call: { name: "read_file", args: { filePath: "a.txt", offset: 1 } },
    });
    expect(checkRepeats([...three, ...same(), ...same()])).toMatchObject({ repeats: 5, action: "stop" });
  });

  test("argument order does not matter; different arguments, text turns and new requests break the run", () => {
    const reordered = turn("read_file", { offset: 1, filePath: "a.txt" });
    expect(turnSignature(reordered[0] as AIMessage)).toBe(turnSignature(same()[0] as AIMessage));
    expect(checkRepeats([...same(), ...same(), ...reordered]).repeats).toBe(3);
    expect(checkRepeats([...same(), ...same(), ...turn("read_file", { filePath: "b.txt" })]).repeats).toBe(1);
    expect(checkRepeats([...same(), ...same(), new AIMessage("thinking"), ...same()]).repeats).toBe(1);
    expect(checkRepeats([...same(), ...same(), new HumanMessage("again"), ...same()]).repeats).toBe(1);
    expect(checkRepeats([new HumanMessage("hi"), new AIMessage("hello")])).toEqual({
      repeats: 0,
      action: "none",
      call: undefined,
    });
  });

  test("the note goes on the last result of the turn", () => {
    const check = checkRepeats([...same(), ...same(), ...same()]);
    const results = [new ToolMessage({ tool_call_id: "x", name: "read_file", content: "text" })];
    const [noted] = withLoopNote(results, check);
    expect(noted!.content).toBe(`text\n\n${loopNote(check)}`);
    expect(noted!.tool_call_id).toBe("x");
    expect(loopNote(check)).toMatch(/third time in a row you made this exact read_file call/);
  });
});

describe.each(["graph", "loop"] as const)("the %s engine", (kind) => {
  let tmp: ReturnType<typeof makeTempDir>;
  beforeEach(() => (tmp = makeTempDir()));
  afterEach(() => tmp.cleanup());

  test("a model that repeats one identical call forever is stopped within eight model requests", async () => {
    const h = engineHarness(kind, tmp.dir, repeatingTurns("list_directory", { directoryPath: "." }, 50));
    const summary = await h.run("list forever");
    expect(summary.reason).toBe("loop_guard");
    expect(h.model.played).toBe(LOOP_STOP_AT);
    expect(h.model.played).toBeLessThanOrEqual(8);

    const guard = eventsOf(h.events, "loop_guard");
    expect(guard.map((e) => [e.action, e.repeats])).toEqual([
      ["note", LOOP_NOTE_AT],
      ["note", LOOP_NOTE_AT + 1],
      ["stop", LOOP_STOP_AT],
    ]);
    expect(guard[2]!.message).toBe(
      'The model made the same list_directory call with the same arguments 5 times in a row, so the run was stopped. Give it more guidance, or say "continue" to let it try again.',
    );
    const end = eventsOf(h.events, "run_end")[0]!;
    expect(end).toMatchObject({ reason: "loop_guard", steps: 5, toolCalls: 5 });

    // The model read the note with the third and fourth results; the fifth call was not run.
    const results = eventsOf(h.events, "tool_result");
    expect(results.map((r) => r.content.includes("[Note from mini-cursor"))).toEqual([false, false, true, true, false]);
    expect(results[4]!.status).toBe("error");
    expect(results[4]!.content).toBe(
      loopStopResult({ repeats: 5, action: "stop", call: { name: "list_directory", args: {} } }),
    );

    // The saved conversation is whole: every call has its result, so the thread can continue.
    const saved = await h.history();
    expect(saved.map((m) => m.getType())).toEqual(["human", ...Array.from({ length: 5 }, () => ["ai", "tool"]).flat()]);
    const sentFourth = h.model.calls[3]!;
    expect(String(sentFourth[sentFourth.length - 1]!.content)).toContain("third time in a row");
  });

  test("varying calls are not stopped", async () => {
    const script = Array.from({ length: 7 }, (_, i) => ({
      toolCalls: [{ name: "list_directory", args: { directoryPath: i % 2 ? "." : "" } }],
    }));
    const h = engineHarness(kind, tmp.dir, [...script, "done"]);
    const summary = await h.run("explore");
    expect(summary.reason).toBe("done");
    expect(eventsOf(h.events, "loop_guard")).toEqual([]);
  });
});
