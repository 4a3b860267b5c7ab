import { existsSync } from "node:fs";
import path from "node:path";
import { HumanMessage } from "@langchain/core/messages";
import { Command, MemorySaver } from "@langchain/langgraph";
import type { ApprovalRequest } from "../../src/contracts/events.js";
import { createGraph } from "../../src/graph/graph.js";
import { createTools } from "../../src/tools/index.js";
import { formatQuestion, parseApprovalAnswer, wrapText } from "../../src/ui/approval-prompt.js";
import { createPrettyRenderer } from "../../src/ui/render.js";
import { sanitizeForTerminal } from "../../src/ui/sanitize.js";
import { engineHarness } from "../helpers/engine-harness.js";
import { ScriptedChatModel } from "../helpers/scripted-model.js";
import { makeTempDir } from "../helpers/tmp.js";

let tmp: ReturnType<typeof makeTempDir>;
beforeEach(() => {
  tmp = makeTempDir();
});
afterEach(() => tmp.cleanup());

const call = (command: string) => ({ toolCalls: [{ name: "execute_command", args: { command } }] });

// ---------------------------------------------------------------------------------------------
// "always" scopes

test.each(["graph", "loop"] as const)(
  "%s engine: 'always' covers the exact prefix for this session and saves nothing",
  async (kind) => {
    const h = engineHarness(
      kind,
      tmp.dir,
      [call("mkdir -p a"), call("mkdir -p b"), call("mkdir c"), call("git -c core.pager=x status"), "done"],
      { approval: "auto-edit" },
    );
    await h.run("go", { answers: [{ decision: "always" }, { decision: "approve" }, { decision: "deny" }] });
    // `mkdir -p b` ran unasked; `mkdir c` (other options) and the git -c trick asked.
    expect(h.approvals.map((a) => [a.args.command, a.alwaysRules ?? null, a.asksEveryTime ?? false])).toEqual([
      ["mkdir -p a", ["mkdir -p"], false],
      ["mkdir c", ["mkdir"], false],
      ["git -c core.pager=x status", null, true],
    ]);
    expect(existsSync(path.join(tmp.dir, "b"))).toBe(true);
    expect(existsSync(path.join(tmp.dir, ".mini-cursor", "config.json"))).toBe(false);
    // A new thread starts without it.
    const fresh = engineHarness(kind, tmp.dir, [call("mkdir -p d"), "done"], { approval: "auto-edit" });
    await fresh.run("go", { threadId: "t2" });
    expect(fresh.approvals.map((a) => a.args.command)).toEqual(["mkdir -p d"]);
  },
);

test("Studio: resuming an interrupt with {decision: 'always'} keeps the rule in the thread's state (session scope)", async () => {
  const model = new ScriptedChatModel([call("mkdir -p a"), call("mkdir -p b"), "done"]);
  const graph = createGraph(
    {
      workspace: tmp.dir,
      model: "scripted",
      provider: "offline",
      requestTimeoutMs: 5000,
      maxRetries: 0,
      approval: "auto-edit",
      maxSteps: 10,
      contextTokens: 100_000,
    },
    { checkpointer: new MemorySaver(), model, tools: createTools({ workspace: tmp.dir }) },
  );
  const config = { configurable: { thread_id: "s1" } };
  await graph.invoke({ messages: [new HumanMessage("go")] }, config);
  const pending = (await graph.getState(config)).tasks.flatMap((t) =>
    t.interrupts.map((i) => i.value as ApprovalRequest),
  );
  expect(pending.map((p) => [p.args.command, p.alwaysRules])).toEqual([["mkdir -p a", ["mkdir -p"]]]);
  await graph.invoke(new Command({ resume: { decision: "always" } }), config);
  const state = await graph.getState(config);
  expect(state.values.alwaysAllow).toEqual(["execute_command:mkdir -p"]);
  expect(state.tasks.flatMap((t) => t.interrupts)).toEqual([]);
  expect(existsSync(path.join(tmp.dir, "a"))).toBe(true);
  expect(existsSync(path.join(tmp.dir, "b"))).toBe(true);
});

// ---------------------------------------------------------------------------------------------
// The question

const request = (command: string, extra: Partial<ApprovalRequest> = {}): ApprovalRequest => ({
  toolCallId: "c1",
  tool: "execute_command",
  args: { command },
  reason: "runs a shell command (approval mode auto-edit)",
  ...extra,
});

test("the question shows the whole command, wrapped, with the exact rules 'always' covers", () => {
  const long = `npm test && ${"echo padding; ".repeat(15)}rm -rf build # the end`;
  const q = formatQuestion(request(long, { alwaysRules: ["npm test", "echo", "rm -rf"] }));
  const shown = q.text
    .split("\n")
    .filter((l) => l.startsWith("  │ "))
    .map((l) => l.slice(4))
    .join("");
  expect(shown).toBe(long);
  expect(q.text.split("\n").every((l) => l.length <= 100 + 4)).toBe(true);
  expect(q.text).toContain("? Allow execute_command:\n  │ npm test && echo padding;");
  expect(q.prompt).toBe(
    "  [y]es / [n]o / [e]dit / [a]lways this session (`npm test`, `echo`, `rm -rf`) / [p]roject: save the same allow rules in this workspace's saved answers / or type feedback: ",
  );
  expect(wrapText("abcdef", 4)).toEqual(["abcd", "ef"]);
});

test("a dangerous command's question offers no always, and 'a' or 'p' is not taken as one", () => {
  const danger = request("git reset --hard", {
    reason: "dangerous command: git reset --hard discards uncommitted changes",
    asksEveryTime: true,
  });
  const q = formatQuestion(danger);
  expect(q.prompt).toBe("  [y]es / [n]o / [e]dit / or type feedback: ");
  expect(q.text).toContain("This call asks every time; it cannot be allowed for later.");
  expect(parseApprovalAnswer("a", danger)).toBeUndefined();
  expect(parseApprovalAnswer("p", danger)).toBeUndefined();
  expect(parseApprovalAnswer("y", danger)).toEqual({ decision: "approve" });
  expect(parseApprovalAnswer("a", request("ls", { alwaysRules: ["ls"] }))).toEqual({ decision: "always" });
  expect(parseApprovalAnswer("p", request("ls", { alwaysRules: ["ls"] }))).toEqual({ decision: "always-project" });
  expect(parseApprovalAnswer("p", { tool: "write_file" } as never)).toBeUndefined();
  expect(parseApprovalAnswer("not that")).toEqual({ decision: "deny", feedback: "not that" });
});

// ---------------------------------------------------------------------------------------------
// Control characters

const ESC = "\x1b";

test("sanitizeForTerminal makes ESC, CSI, OSC, C1, BEL, backspace and CR visible and keeps newlines and tabs", () => {
  expect(sanitizeForTerminal(`a${ESC}[1A${ESC}[2Kb`)).toBe("a^[[1A^[[2Kb");
  expect(sanitizeForTerminal(`${ESC}]52;c;ZWNobyBoaQ==\x07`)).toBe("^[]52;c;ZWNobyBoaQ==^G");
  expect(sanitizeForTerminal("\x9b31m\x90x")).toBe("<U+009B>31m<U+0090>x");
  expect(sanitizeForTerminal("rm -rf ~\rnpm test")).toBe("rm -rf ~^Mnpm test");
  expect(sanitizeForTerminal("abc\b\b\bxyz\x7f")).toBe("abc^H^H^Hxyz^?");
  expect(sanitizeForTerminal("line 1\r\n\tline 2\n")).toBe("line 1\n\tline 2\n");
  expect(sanitizeForTerminal("safe\u202Etxt.exe")).toBe("safe<U+202E>txt.exe");
});

test("the question cannot be repainted by the command it shows", () => {
  const hostile = `rm -rf ~/x ${ESC}[2K${ESC}[1A\rnpm test`;
  const q = formatQuestion(request(hostile, { reason: `because ${ESC}]0;title\x07` }));
  expect(q.text + q.prompt).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/);
  expect(q.text).toContain("  │ rm -rf ~/x ^[[2K^[[1A^Mnpm test");
});

test("the renderer neutralises control characters in model text, tool calls, tool output and results", () => {
  let written = "";
  const out = { write: (s: string) => ((written += s), true) } as unknown as NodeJS.WritableStream;
  const r = createPrettyRenderer({ color: false, spinner: false, verbose: false, out });
  const evil = `x${ESC}[2J${ESC}]52;c;aGk=\x07\x9b1Ay\rz`;
  r.event({ type: "step", step: 1 });
  r.event({ type: "token", step: 1, text: evil });
  r.event({ type: "tool_call", step: 1, id: "c", name: "execute_command", args: { command: evil } });
  r.event({ type: "tool_output", id: "c", stream: "stdout", text: `${evil}\n` } as never);
  r.event({
    type: "tool_result",
    step: 1,
    id: "c",
    name: "execute_command",
    status: "success",
    content: evil,
    durationMs: 1,
  } as never);
  r.event({ type: "final", text: evil });
  r.note(evil);
  expect(written).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/);
  expect(written).toContain("x^[[2J^[]52;c;aGk=^G<U+009B>1Ay^Mz");
});
