import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { AIMessage, HumanMessage, SystemMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import {
  compactHistory,
  compactionCanHelp,
  offloadLargeResults,
  offloadLimits,
  OFFLOAD_PREVIEW_CHARS,
  SUMMARY_PROMPT,
  summarySteps,
} from "../../src/context/compaction.js";
import { estimateTokens, estimateTotalTokens } from "../../src/context/budget.js";
import { measureContext } from "../../src/context/context-size.js";
import { stepsSinceLastRequest } from "../../src/contracts/conversation.js";
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
  // A tenth of the read limit stays, as 2,000 of the default 20,000.
  const READ_1000 = { read: 1000, unseen: Number.POSITIVE_INFINITY };
  test("results the model has read that are over the threshold stay on disk with a pointer", () => {
    const big = `${"a".repeat(3000)}THE END`;
    const [call1, result1] = toolTurn(big);
    const [call2, result2] = toolTurn(big);
    const history = [new HumanMessage("go"), call1!, result1!, call2!, result2!];
    const view = offloadLargeResults(history, tmp.dir, READ_1000);
    expect(view[4]).toBe(result2); // not read yet: stays whole
    const pointer = String(view[2]!.content);
    const saved = path.join(stateDirOf(tmp.dir), "output", `result-${(result1 as ToolMessage).tool_call_id}.txt`);
    expect(pointer).toBe(
      `${"a".repeat(100)}\n[... this result (3,007 characters) was moved out of the conversation to save context. The full text is in ${saved}; read it with read_file if you need it again.]`,
    );
    expect(readFileSync(saved, "utf8")).toBe(big);
    expect(existsSync(path.join(tmp.dir, ".mini-cursor"))).toBe(false);
    expect(String(history[2]!.content)).toBe(big); // the saved history is untouched
    // The same every time (prompt caches stay valid).
    expect(offloadLargeResults(history, tmp.dir, READ_1000)[2]!.content).toBe(pointer);
  });

  test("a moved-out result is saved through the output gate: shaped secrets masked, control characters visible", () => {
    const token = `ghp_${"Z9y8X7w6".repeat(5)}`;
    const big = `${"a".repeat(3000)}\ntoken ${token} esc \x1b[2J bell \x07\n`;
    const [call, result] = toolTurn(big);
    const history = [new HumanMessage("go"), call!, result!, ...toolTurn("small")];
    offloadLargeResults(history, tmp.dir, READ_1000);
    const saved = path.join(stateDirOf(tmp.dir), "output", `result-${(result as ToolMessage).tool_call_id}.txt`);
    expect(readFileSync(saved, "utf8")).toBe(`${"a".repeat(3000)}\ntoken [redacted] esc ^[[2J bell ^G\n`);
  });

  test("the limits follow the budget: the default 100k keeps 20,000 for read results; a small window takes less", () => {
    // Half the budget, less the fixed part and the summary's allowance, three quarters of it, 4 characters a token.
    expect(offloadLimits(100_000, 5_400)).toEqual({ read: 20_000, unseen: 130_800 });
    expect(offloadLimits(16_000, 5_400)).toEqual({ read: 4_800, unseen: 4_800 });
    // However little room there is, a first sight shows something.
    expect(offloadLimits(8_000, 7_000)).toEqual({ read: 1_000, unseen: 1_000 });
  });

  test("with the default limits a read result keeps OFFLOAD_PREVIEW_CHARS and an unseen one stays whole", () => {
    const big = "b".repeat(25_000);
    const history = [new HumanMessage("go"), ...toolTurn(big), ...toolTurn(big)];
    const view = offloadLargeResults(history, tmp.dir);
    expect(String(view[2]!.content).startsWith(`${"b".repeat(OFFLOAD_PREVIEW_CHARS)}\n[... this result (25,000`)).toBe(
      true,
    );
    expect(view[4]).toBe(history[4]);
  });

  test("an unseen result over the first-sight limit is its start and a pointer with the page size, the saved file whole", () => {
    const big = Array.from({ length: 100 }, (_, i) => `line ${i} `.padEnd(49, "x")).join("\n");
    const [call, result] = toolTurn(big);
    const history = [new HumanMessage("go"), call!, result!];
    const view = offloadLargeResults(history, tmp.dir, { read: 1_000, unseen: 1_000 });
    const saved = path.join(stateDirOf(tmp.dir), "output", `result-${(result as ToolMessage).tool_call_id}.txt`);
    expect(view[2]!.content).toBe(
      `${big.slice(0, 500)}\n[... this is the start (500 characters) of a result of 4,999 characters, more than the context window holds at once. The full text is in ${saved}; read it page by page with read_file (offset and limit, about 10 lines at a time) if you need the rest.]`,
    );
    expect(readFileSync(saved, "utf8")).toBe(big);
    expect(String(history[2]!.content)).toBe(big);
  });

  test("small results are left alone", () => {
    const history = [new HumanMessage("go"), ...toolTurn("small"), new AIMessage("done")];
    expect(offloadLargeResults(history, tmp.dir, READ_1000)).toEqual(history);
    expect(existsSync(path.join(stateDirOf(tmp.dir), "output"))).toBe(false);
  });
});

describe("compactionCanHelp", () => {
  test("counts the newest turn, kept verbatim: when it alone comes near the trigger, no summary is run", () => {
    const budgetTokens = 4_000;
    const small = [new HumanMessage("go"), ...toolTurn("x".repeat(4_000)), ...toolTurn("y".repeat(400))];
    expect(compactionCanHelp({ systemPrompt: "system", budgetTokens }, small)).toBe(true);
    // 12,000 characters is 3,000 tokens; with the summary's allowance of 400 it is past 80% of 4,000.
    const big = [new HumanMessage("go"), ...toolTurn("x".repeat(4_000)), ...toolTurn("y".repeat(12_000))];
    expect(compactionCanHelp({ systemPrompt: "system", budgetTokens }, big)).toBe(false);
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
    // Each file is under what one result may take at first sight in a 16k window (~8,000
    // characters with these tools), so seven of them fill it.
    const files = ["a", "b", "c", "d", "e", "f", "g"];
    const text = (ch: string) => Array.from({ length: 50 }, () => ch.repeat(99)).join("\n");
    for (const f of files) writeFileSync(path.join(tmp.dir, `${f}.txt`), text(f));
    const h = engineHarness(
      kind,
      tmp.dir,
      [
        ...files.map((f) => ({ toolCalls: [{ name: "read_file", args: { filePath: `${f}.txt` } }] })),
        "SUMMARY: read a.txt to f.txt (50 lines each).",
        "All files are fine.",
        "Still fine.",
      ],
      // The fixed part (system prompt and the real tools' schemas) is about 4,300 tokens of it.
      { contextTokens: 16_000 },
    );
    const summary = await h.run("check the seven files");
    expect(summary.reason).toBe("done");
    expect(summary.steps).toBe(8);
    expect(h.model.played).toBe(9);

    // Call 8 was the summary request; call 9 the next step, on the compacted conversation.
    expect(h.model.calls[7]![0]!.content).toBe(SUMMARY_PROMPT);
    const next = h.model.calls[8]!;
    expect(roles(next)).toEqual(["system", "human", "ai", "ai", "tool"]);
    expect(String(next[0]!.content)).toContain("<AGENTS.md>\nRule 42: keep answers short.\n</AGENTS.md>");
    expect(next[1]!.content).toBe("check the seven files");
    expect(String(next[2]!.content)).toContain("SUMMARY: read a.txt to f.txt (50 lines each).");
    expect(String(next[4]!.content)).toContain("g".repeat(99));

    const compactions = eventsOf(h.events, "compaction");
    expect(compactions).toHaveLength(1);
    expect(compactions[0]).toMatchObject({ type: "compaction", step: 8, summarised: 12 });
    expect(compactions[0]!.tokensAfter).toBeLessThan(compactions[0]!.tokensBefore);
    expect(eventsOf(h.events, "step").map((e) => e.step)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(eventsOf(h.events, "final").map((e) => e.text)).toEqual(["All files are fine."]);
    expect(eventsOf(h.events, "token").some((e) => e.text.includes("SUMMARY"))).toBe(false);
    expect(eventsOf(h.events, "tool_call")).toHaveLength(7);

    // The saved thread is the compacted one, and it goes on from there.
    expect(roles(await h.history())).toEqual(["human", "ai", "ai", "tool", "ai"]);
    await h.run("and now?");
    expect(roles(h.model.calls[9]!)).toEqual(["system", "human", "ai", "ai", "tool", "ai", "human"]);
  });

  test("when the newest turn's results alone keep the request near the budget, no summary runs, and that is said once", async () => {
    // Six results a step, each under what one may take at first sight (~6,700 characters with these
    // tools): together, with the fixed part, past the trigger, which no summary could change.
    const names = Array.from({ length: 12 }, (_, i) => `p${i}.txt`);
    for (const name of names)
      writeFileSync(path.join(tmp.dir, name), Array.from({ length: 55 }, () => "p".repeat(99)).join("\n"));
    const calls = (from: number) =>
      names.slice(from, from + 6).map((filePath) => ({ name: "read_file", args: { filePath } }));
    const h = engineHarness(kind, tmp.dir, [{ toolCalls: calls(0) }, { toolCalls: calls(6) }, "Read."], {
      contextTokens: 16_000,
    });
    const summary = await h.run("read them");
    expect(summary.reason).toBe("done");
    expect(h.model.played).toBe(3);
    expect(h.model.calls.some((sent) => sent[0]!.content === SUMMARY_PROMPT)).toBe(false);
    expect(eventsOf(h.events, "compaction")).toEqual([]);
    expect(eventsOf(h.events, "notice").map((e) => [e.step, e.message])).toEqual([
      [
        2,
        "The latest tool results, the request, the system prompt and the tools together come near the context budget of 16000 tokens (MINI_CURSOR_CONTEXT_TOKENS), so a summary of the older turns could not make room: the oldest turns are left out of the requests instead. Set MINI_CURSOR_CONTEXT_TOKENS to the model's real context window.",
      ],
    ]);
  });
});
