import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { AIMessage, HumanMessage, SystemMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import {
  compactHistory,
  offloadLargeResults,
  OFFLOAD_PREVIEW_CHARS,
  SUMMARY_PROMPT,
  summarySteps,
} from "../../src/context/compaction.js";
import { estimateTokens, estimateTotalTokens } from "../../src/context/budget.js";
import { measureContext } from "../../src/context/context-size.js";
import { stepsSinceLastRequest } from "../../src/agent/turn.js";
import { engineHarness, eventsOf } from "../helpers/engine-harness.js";
import { ScriptedChatModel } from "../helpers/scripted-model.js";
import { makeTempDir } from "../helpers/tmp.js";
import { stateDirOf } from "../helpers/state-dir.js";

let tmp: ReturnType<typeof makeTempDir>;
beforeEach(() => (tmp = makeTempDir()));
afterEach(() => tmp.cleanup());

let n = 0;
function toolTurn(result: string, name = "read_file"): BaseMessage[] {
  const id = `call_${++n}`;
  return [
    new AIMessage({ content: "", tool_calls: [{ id, name, args: { filePath: `f${n}.txt` }, type: "tool_call" }] }),
    new ToolMessage({ tool_call_id: id, name, content: result }),
  ];
}
const roles = (ms: BaseMessage[]) => ms.map((m) => m.getType());

describe("measureContext", () => {
  const system = () => estimateTokens(new SystemMessage("system"));

  test("estimates without a provider count, the system prompt included", () => {
    const history = [new HumanMessage("hello there"), new AIMessage("hi")];
    expect(measureContext("system", history)).toEqual({
      tokens: system() + estimateTotalTokens(history),
      fixed: system(),
      request: estimateTokens(history[0]!),
      scale: 1,
      estimated: true,
    });
  });

  test("scales the estimate by what the provider counted for the latest response", () => {
    const question = new HumanMessage("q");
    const answered = new AIMessage({
      content: "x",
      usage_metadata: { input_tokens: 0, output_tokens: 0, total_tokens: 0 },
    });
    const estimate = system() + estimateTotalTokens([question, answered]);
    answered.usage_metadata = { input_tokens: estimate * 2 - 10, output_tokens: 10, total_tokens: estimate * 2 };
    const after = new HumanMessage("next question");
    const size = measureContext("system", [question, answered, after]);
    expect(size).toMatchObject({ scale: 2, estimated: false, fixed: system() * 2 });
    expect(size.tokens).toBe(2 * (estimate + estimateTokens(after)));
  });

  test("ignores counts from before a compaction, also those of the turns it kept verbatim", () => {
    const stale = () =>
      new AIMessage({
        content: "x",
        usage_metadata: { input_tokens: 90_000, output_tokens: 10, total_tokens: 90_010 },
      });
    const summary = new AIMessage({
      content: "summary",
      response_metadata: { mini_cursor_summary: { steps: 3, kept: 1 } },
    });
    expect(measureContext("s", [stale(), summary]).estimated).toBe(true);
    expect(measureContext("s", [new HumanMessage("q"), summary, stale()]).estimated).toBe(true);
    const fresh = measureContext("s", [new HumanMessage("q"), summary, stale(), new HumanMessage("r"), stale()]);
    expect(fresh.estimated).toBe(false);
  });

  test("a latest request over its share counts as what is sent of it", () => {
    const huge = new HumanMessage("y".repeat(400_000));
    const size = measureContext("s", [huge], undefined, 10_000);
    expect(size.request).toBe(Math.floor((10_000 - size.fixed) * 0.5));
  });
});

describe("offloadLargeResults", () => {
  test("results the model has read that are over the threshold stay on disk with a pointer", () => {
    const big = `${"a".repeat(3000)}THE END`;
    const [call1, result1] = toolTurn(big);
    const [call2, result2] = toolTurn(big);
    const history = [new HumanMessage("go"), call1!, result1!, call2!, result2!];
    const view = offloadLargeResults(history, tmp.dir, 1000);
    expect(view[4]).toBe(result2); // not read yet: stays whole
    const pointer = String(view[2]!.content);
    const saved = path.join(stateDirOf(tmp.dir), "output", `result-${(result1 as ToolMessage).tool_call_id}.txt`);
    expect(pointer).toBe(
      `${"a".repeat(OFFLOAD_PREVIEW_CHARS)}\n[... this result (3,007 characters) was moved out of the conversation to save context. The full text is in ${saved}; read it with read_file if you need it again.]`,
    );
    expect(readFileSync(saved, "utf8")).toBe(big);
    expect(existsSync(path.join(tmp.dir, ".mini-cursor"))).toBe(false);
    expect(String(history[2]!.content)).toBe(big); // the saved history is untouched
    // The same every time (prompt caches stay valid).
    expect(offloadLargeResults(history, tmp.dir, 1000)[2]!.content).toBe(pointer);
  });

  test("a moved-out result is saved through the output gate: shaped secrets masked, control characters visible", () => {
    const token = `ghp_${"Z9y8X7w6".repeat(5)}`;
    const big = `${"a".repeat(3000)}\ntoken ${token} esc \x1b[2J bell \x07\n`;
    const [call, result] = toolTurn(big);
    const history = [new HumanMessage("go"), call!, result!, ...toolTurn("small")];
    offloadLargeResults(history, tmp.dir, 1000);
    const saved = path.join(stateDirOf(tmp.dir), "output", `result-${(result as ToolMessage).tool_call_id}.txt`);
    expect(readFileSync(saved, "utf8")).toBe(`${"a".repeat(3000)}\ntoken [redacted] esc ^[[2J bell ^G\n`);
  });

  test("small results are left alone", () => {
    const history = [new HumanMessage("go"), ...toolTurn("small"), new AIMessage("done")];
    expect(offloadLargeResults(history, tmp.dir, 1000)).toEqual(history);
    expect(existsSync(path.join(stateDirOf(tmp.dir), "output"))).toBe(false);
  });
});

describe("compactHistory", () => {
  const budget = 2000;

  test("summarises earlier requests; the latest request and recent turns stay verbatim", async () => {
    const model = new ScriptedChatModel(["They set up the project and fixed the build."]);
    const older = [new HumanMessage("set up the project"), ...toolTurn("x".repeat(4000)), new AIMessage("Set up.")];
    const latest = new HumanMessage("now add a README");
    const recent = toolTurn("small result");
    const result = await compactHistory(model, [...older, latest, ...recent], {
      systemPrompt: "sys",
      budgetTokens: budget,
    });
    expect(result).toBeDefined();
    expect(roles(result!.history)).toEqual(["human", "human", "ai", "tool"]);
    expect(result!.history[0]!.content).toBe(
      "[Summary of the earlier conversation, compacted to save context]\nThey set up the project and fixed the build.",
    );
    expect(result!.history[1]).toBe(latest);
    expect(result!.history.slice(2)).toEqual(recent);
    expect(result!.summarised).toBe(4);
    expect(result!.tokensAfter).toBeLessThan(result!.tokensBefore);

    // The summariser got its instructions and a plain transcript, no tools.
    const [system, transcript] = model.calls[0]!;
    expect(system!.content).toBe(SUMMARY_PROMPT);
    expect(String(transcript!.content)).toContain("USER: set up the project");
    expect(String(transcript!.content)).toContain('[called read_file {"filePath":');
    expect(String(transcript!.content)).toContain("TOOL RESULT (read_file):");
    expect(String(transcript!.content)).toContain(
      "The user's latest request, kept verbatim after your summary (do not repeat it): now add a README",
    );
  });

  test("in one long run, earlier steps become the agent's own note and the step count goes on", async () => {
    const model = new ScriptedChatModel(["Read f1 and f2; both fine."]);
    const request = new HumanMessage("check every file");
    const history = [
      request,
      ...toolTurn("y".repeat(3000)),
      ...toolTurn("y".repeat(3000)),
      ...toolTurn("z".repeat(3000)),
    ];
    expect(stepsSinceLastRequest(history)).toBe(3);
    const result = (await compactHistory(model, history, { systemPrompt: "sys", budgetTokens: budget }))!;
    expect(roles(result.history)).toEqual(["human", "ai", "ai", "tool"]);
    expect(result.history[0]).toBe(request);
    expect(summarySteps(result.history[1]!)).toBe(2);
    expect(String(result.history[1]!.content)).toMatch(
      /^\[Summary of the conversation so far, including my work on this request/,
    );
    expect(stepsSinceLastRequest(result.history)).toBe(3);
  });

  test("nothing to summarise, or a failing model, leave the history alone", async () => {
    const model = new ScriptedChatModel([Object.assign(new Error("boom"), { status: 500 })]);
    expect(
      await compactHistory(model, [new HumanMessage("only this")], { systemPrompt: "s", budgetTokens: budget }),
    ).toBeUndefined();
    expect(model.calls).toHaveLength(0);
    const history = [new HumanMessage("a"), ...toolTurn("q".repeat(9000)), new HumanMessage("b"), ...toolTurn("r")];
    expect(await compactHistory(model, history, { systemPrompt: "s", budgetTokens: budget })).toBeUndefined();
    expect(model.calls).toHaveLength(1);
  });
});

describe.each(["graph", "loop"] as const)("the %s engine", (kind) => {
  test("near the budget, older steps are summarised, the request and AGENTS.md stay, and the run goes on", async () => {
    writeFileSync(path.join(tmp.dir, "AGENTS.md"), "Rule 42: keep answers short.\n");
    const text = (ch: string) => Array.from({ length: 180 }, () => ch.repeat(99)).join("\n");
    writeFileSync(path.join(tmp.dir, "a.txt"), text("a"));
    writeFileSync(path.join(tmp.dir, "b.txt"), text("b"));
    const h = engineHarness(
      kind,
      tmp.dir,
      [
        { toolCalls: [{ name: "read_file", args: { filePath: "a.txt" } }] },
        { toolCalls: [{ name: "read_file", args: { filePath: "b.txt" } }] },
        "SUMMARY: read a.txt (180 lines of a).",
        "Both files are fine.",
        "Still fine.",
      ],
      // The fixed part (system prompt and the real tools' schemas) is about 4,300 tokens of it.
      { contextTokens: 16_000 },
    );
    const summary = await h.run("check a.txt and b.txt");
    expect(summary.reason).toBe("done");
    expect(summary.steps).toBe(3);
    expect(h.model.played).toBe(4);

    // Call 3 was the summary request; call 4 the next step, on the compacted conversation.
    expect(h.model.calls[2]![0]!.content).toBe(SUMMARY_PROMPT);
    const next = h.model.calls[3]!;
    expect(roles(next)).toEqual(["system", "human", "ai", "ai", "tool"]);
    expect(String(next[0]!.content)).toContain("<AGENTS.md>\nRule 42: keep answers short.\n</AGENTS.md>");
    expect(next[1]!.content).toBe("check a.txt and b.txt");
    expect(String(next[2]!.content)).toContain("SUMMARY: read a.txt (180 lines of a).");
    expect(String(next[4]!.content)).toContain("b".repeat(99));

    const compactions = eventsOf(h.events, "compaction");
    expect(compactions).toHaveLength(1);
    expect(compactions[0]).toMatchObject({ type: "compaction", step: 3, summarised: 2 });
    expect(compactions[0]!.tokensAfter).toBeLessThan(compactions[0]!.tokensBefore);
    expect(eventsOf(h.events, "step").map((e) => e.step)).toEqual([1, 2, 3]);
    expect(eventsOf(h.events, "final").map((e) => e.text)).toEqual(["Both files are fine."]);
    expect(eventsOf(h.events, "token").some((e) => e.text.includes("SUMMARY"))).toBe(false);
    expect(eventsOf(h.events, "tool_call")).toHaveLength(2);

    // The saved thread is the compacted one, and it goes on from there.
    expect(roles(await h.history())).toEqual(["human", "ai", "ai", "tool", "ai"]);
    await h.run("and now?");
    expect(roles(h.model.calls[4]!)).toEqual(["system", "human", "ai", "ai", "tool", "ai", "human"]);
  });
});
