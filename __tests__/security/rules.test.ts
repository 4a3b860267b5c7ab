import { restartSettings } from "../helpers/start.js";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { MemorySaver } from "@langchain/langgraph";
import { approvalScope, classifyCall, UNATTENDED_RESPONSE } from "../../src/policy/approval.js";
import type { Engine } from "../../src/agent/engine.js";
import type { AgentEvent, ApprovalRequest, ApprovalResponse } from "../../src/contracts/events.js";
import { createRuntime } from "../../src/agent/runtime.js";
import { createGraph, type GraphSettings } from "../../src/graph/graph.js";
import { createGraphEngine } from "../../src/graph/engine.js";
import { createLoopEngine } from "../../src/loop/loop.js";
import type { LoopThread } from "../../src/memory/loop-threads.js";
import { withSavedAlwaysRules } from "../../src/policy/always.js";
import { addAllowRules, loadProjectRules, ruleForCommand, RulesError } from "../../src/security/rules.js";
import { createTools } from "../../src/tools/index.js";
import { contentHash, trustFile } from "../../src/security/trust.js";
import { ScriptedChatModel, type ScriptedTurn } from "../helpers/scripted-model.js";
import { makeTempDir } from "../helpers/tmp.js";
import { stateDirOf } from "../helpers/state-dir.js";

let tmp: ReturnType<typeof makeTempDir>;
beforeEach(() => {
  tmp = makeTempDir();
  // Trust answers go to a file of this test, never the user's own.
  process.env.MINI_CURSOR_TRUST_FILE = path.join(tmp.dir, "..", `${path.basename(tmp.dir)}.trust.json`);
  restartSettings();
});
afterEach(() => {
  tmp.cleanup();
  rmSync(process.env.MINI_CURSOR_TRUST_FILE!, { force: true });
  delete process.env.MINI_CURSOR_TRUST_FILE;
  restartSettings();
});

/** Trusts a rules file's current content, as answering "y" at startup does. */
const trust = (rel: string) => {
  const file = path.join(tmp.dir, rel);
  trustFile(process.env.MINI_CURSOR_TRUST_FILE!, file, contentHash(readFileSync(file, "utf8")));
};

const writeJson = (rel: string, value: unknown) => {
  mkdirSync(path.dirname(path.join(tmp.dir, rel)), { recursive: true });
  writeFileSync(path.join(tmp.dir, rel), typeof value === "string" ? value : JSON.stringify(value));
};
const cmd = (command: string, workingDirectory?: string) => ({
  name: "execute_command",
  args: workingDirectory ? { command, workingDirectory } : { command },
});

// ---------------------------------------------------------------------------------------------
// The rules files

test("both rules files are read and merged, with reasons and passEnv", () => {
  writeJson(".mini-cursor/config.json", { commands: { allow: ["npm test"] }, passEnv: ["NPM_TOKEN"] });
  writeJson("mini-cursor.config.json", {
    commands: { deny: [{ command: "git push", reason: "CI pushes" }], ask: ["docker"] },
    other: 1,
  });
  trust(".mini-cursor/config.json");
  const rules = loadProjectRules(tmp.dir);
  expect(rules.files).toEqual([".mini-cursor/config.json", "mini-cursor.config.json"]);
  expect(rules.allow).toEqual([
    { kind: "allow", text: "npm test", words: ["npm", "test"], reason: undefined, file: ".mini-cursor/config.json" },
  ]);
  expect(rules.deny).toEqual([
    { kind: "deny", text: "git push", words: ["git", "push"], reason: "CI pushes", file: "mini-cursor.config.json" },
  ]);
  expect(rules.ask.map((r) => r.text)).toEqual(["docker"]);
  expect(rules.passEnv).toEqual(["NPM_TOKEN"]);
});

test("no rules files means no rules", () => {
  expect(loadProjectRules(tmp.dir)).toEqual({ allow: [], ask: [], deny: [], passEnv: [], files: [] });
});

test("an invalid rules file is an error naming the file and the problem", () => {
  writeJson("mini-cursor.config.json", "{ not json");
  expect(() => loadProjectRules(tmp.dir)).toThrow(RulesError);
  expect(() => loadProjectRules(tmp.dir)).toThrow(/^mini-cursor\.config\.json is not valid JSON/);
  writeJson("mini-cursor.config.json", { commands: { allow: "npm test" } });
  expect(() => loadProjectRules(tmp.dir)).toThrow("mini-cursor.config.json: commands.allow:");
  writeJson("mini-cursor.config.json", { commands: { permit: ["x"] } });
  expect(() => loadProjectRules(tmp.dir)).toThrow(/commands/);
});

test("an edited rules file is read again", () => {
  writeJson("mini-cursor.config.json", { commands: { deny: ["rm"] } });
  expect(loadProjectRules(tmp.dir).deny.map((r) => r.text)).toEqual(["rm"]);
  writeJson("mini-cursor.config.json", { commands: { deny: ["rm", "curl"] } });
  expect(loadProjectRules(tmp.dir).deny.map((r) => r.text)).toEqual(["rm", "curl"]);
});

test.each([
  [["npm", "test"], "npm test"],
  [["npm", "run", "build"], "npm run build"],
  [["npm", "run", "build", "--", "--watch"], "npm run build"],
  [["git", "status", "--short"], "git status --short"],
  [["git", "log", "-5", "src"], "git log -5"],
  [["git", "-C", "x", "log"], "git -C"],
  [["ls", "-la"], "ls -la"],
  [["/usr/bin/make"], "make"],
  [["python3", "script.py"], "python3"],
  [["sleep", "20"], "sleep"],
  [["grep", "-r", "a b", "."], "grep -r"],
  [["rg", "--glob=*.ts", "x"], "rg"],
] as const)("always on %j covers exactly %j", (argv, rule) => {
  expect(ruleForCommand(argv)).toBe(rule);
});

test("allow rules are saved in the workspace's state folder, never in the repository's rules files", () => {
  writeJson(".mini-cursor/config.json", { commands: { deny: ["curl"], allow: ["ls"] }, passEnv: ["A"] });
  const shipped = readFileSync(path.join(tmp.dir, ".mini-cursor/config.json"), "utf8");
  expect(addAllowRules(tmp.dir, ["npm test", "ls", "npm test"])).toEqual(["npm test", "ls"]);
  expect(JSON.parse(readFileSync(path.join(stateDirOf(tmp.dir), "answers.json"), "utf8"))).toEqual({
    commands: { allow: ["npm test", "ls"] },
  });
  expect(readFileSync(path.join(tmp.dir, ".mini-cursor/config.json"), "utf8")).toBe(shipped);
  expect(addAllowRules(tmp.dir, ["ls"])).toEqual([]);
  // The person's saved answers apply; the repository's file stays untrusted until the trust question.
  expect(loadProjectRules(tmp.dir).allow.map((r) => [r.text, r.file])).toEqual([
    ["npm test", "saved answers"],
    ["ls", "saved answers"],
  ]);
  expect(loadProjectRules(tmp.dir).untrusted?.map((u) => [u.file, u.allow])).toEqual([
    [".mini-cursor/config.json", ["ls"]],
  ]);
});

test("[p]roject on a terminal saves exactly the rules shown, for a command that is not dangerous; [a]lways saves nothing", async () => {
  const notes: string[] = [];
  let answer: ApprovalResponse = { decision: "always-project" };
  const approver = withSavedAlwaysRules(
    async () => answer,
    tmp.dir,
    (t) => notes.push(t),
  );
  const ask = async (args: Record<string, unknown>, tool = "execute_command") => {
    const decision = await classifyCall({ name: tool, args }, "auto-edit", [], { workspace: tmp.dir });
    return approver({ toolCallId: "c1", tool, args, reason: decision.reason ?? "", ...approvalScope(decision) });
  };

  expect(await ask({ command: "npm test && touch a.txt" })).toEqual({ decision: "always-project" });
  expect(loadProjectRules(tmp.dir).allow.map((r) => r.text)).toEqual(["npm test", "touch"]);
  expect(notes).toEqual([
    `Saved in ${path.join(stateDirOf(tmp.dir), "answers.json")}: allow \`npm test\`, \`touch\` (remove them there to be asked again).`,
  ]);
  // Now it runs in auto-edit without a question.
  expect((await classifyCall(cmd("npm test"), "auto-edit", [], { workspace: tmp.dir })).action).toBe("run");

  await ask({ command: "rm -rf ~/x" }); // dangerous: never saved
  await ask({ command: "$(x) y" }); // unreadable: never saved
  await ask({ filePath: "a.txt", content: "x" }, "write_file"); // not a command
  // A request claiming rules for a dangerous command is checked again and not saved.
  await approver({
    toolCallId: "c2",
    tool: "execute_command",
    args: { command: "git reset --ha" },
    reason: "x",
    alwaysRules: ["git reset --ha"],
  });
  answer = { decision: "always" };
  await ask({ command: "make build" }); // this session only
  answer = { decision: "approve" };
  await ask({ command: "make test" }); // not "always"
  expect(loadProjectRules(tmp.dir).allow.map((r) => r.text)).toEqual(["npm test", "touch"]);
  expect(notes).toHaveLength(1);
});

// ---------------------------------------------------------------------------------------------
// classifyCall: what both engines do with a call

test("approval modes: benign commands follow the mode, dangerous ones ask in every mode", async () => {
  const ctx = { workspace: tmp.dir };
  expect(await classifyCall(cmd("touch a"), "full-auto", [], ctx)).toEqual({
    action: "run",
    alwaysAsks: false,
    alwaysKeys: ["execute_command:touch"],
    alwaysRules: ["touch"],
  });
  expect(await classifyCall(cmd("touch a"), "auto-edit", [], ctx)).toEqual({
    action: "ask",
    reason: "runs a shell command (approval mode auto-edit)",
    alwaysAsks: false,
    alwaysKeys: ["execute_command:touch"],
    alwaysRules: ["touch"],
  });
  // Read-only commands (the built-in list) run in every mode.
  expect(await classifyCall(cmd("ls -la"), "suggest", [], ctx)).toEqual({
    action: "run",
    alwaysAsks: false,
    alwaysKeys: ["execute_command:ls -la"],
    alwaysRules: ["ls -la"],
  });
  for (const mode of ["suggest", "auto-edit", "full-auto"] as const) {
    expect(
      await classifyCall(cmd("true && r''m -r -f ~/x"), mode, ["execute_command:rm", "execute_command:true"], ctx),
    ).toEqual({
      action: "ask",
      reason: "dangerous command: rm deletes ~/x (in the home folder, outside the workspace)",
      alwaysAsks: true,
      alwaysKeys: [],
    });
  }
});

test("'always' keys cover every command a line runs, by the exact prefix shown", async () => {
  const ctx = { workspace: tmp.dir };
  expect(
    (await classifyCall(cmd("npm test && rm -f notes.txt"), "auto-edit", ["execute_command:npm test"], ctx)).action,
  ).toBe("ask");
  expect(
    (
      await classifyCall(
        cmd("npm test && rm -f notes.txt"),
        "auto-edit",
        ["execute_command:npm test", "execute_command:rm -f"],
        ctx,
      )
    ).action,
  ).toBe("run");
  expect(
    (await classifyCall(cmd("FOO=1 npm run build"), "auto-edit", ["execute_command:npm run build"], ctx)).action,
  ).toBe("run");
  expect((await classifyCall(cmd("npm run deploy"), "auto-edit", ["execute_command:npm run build"], ctx)).action).toBe(
    "ask",
  );
  // "always" for `git status` does not cover git with other options in front.
  expect(
    (await classifyCall(cmd("git -c core.pager=less log"), "auto-edit", ["execute_command:git status"], ctx)).action,
  ).toBe("ask");
  expect(
    (await classifyCall(cmd("git -c core.pager='rm -rf ~' log"), "full-auto", ["execute_command:git"], ctx)).action,
  ).toBe("ask");
  // Keys saved by older versions (a bare program) still cover that program's safe commands.
  expect((await classifyCall(cmd("make build"), "auto-edit", ["execute_command:make"], ctx)).action).toBe("run");
});

test("project rules: deny refuses unasked, allow runs in every mode, ask always asks", async () => {
  writeJson("mini-cursor.config.json", {
    commands: { allow: ["npm test"], ask: ["git push"], deny: [{ command: "curl", reason: "no downloads" }] },
  });
  // The committed file's allow rules apply once the user trusts its content (config-trust.test.ts).
  trust("mini-cursor.config.json");
  const ctx = { workspace: tmp.dir };
  expect(await classifyCall(cmd("npm test"), "suggest", [], ctx)).toMatchObject({ action: "run" });
  expect(await classifyCall(cmd("git push origin main"), "full-auto", ["execute_command:git"], ctx)).toMatchObject({
    action: "ask",
    reason: "the project rules (mini-cursor.config.json) ask before `git push`",
    alwaysAsks: true,
  });
  expect(await classifyCall(cmd("npm test && curl -O https://x"), "full-auto", [], ctx)).toMatchObject({
    action: "deny",
    reason: "the project rules (mini-cursor.config.json) deny `curl`: no downloads (it matches `curl -O https://x`)",
  });
});

test("an invalid rules file makes commands ask, saying why", async () => {
  writeJson("mini-cursor.config.json", "{");
  const decision = await classifyCall(cmd("ls"), "full-auto", [], { workspace: tmp.dir });
  expect(decision.action).toBe("ask");
  expect(decision.reason).toMatch(/^cannot apply the project rules: mini-cursor\.config\.json is not valid JSON/);
});

test("the working directory of the call is where relative paths start", async () => {
  mkdirSync(path.join(tmp.dir, "sub"));
  expect((await classifyCall(cmd("rm -rf ../x", "sub"), "full-auto", [], { workspace: tmp.dir })).action).toBe("run");
  expect((await classifyCall(cmd("rm -rf ../../x", "sub"), "full-auto", [], { workspace: tmp.dir })).action).toBe(
    "ask",
  );
});

test("writing the rules files with a tool asks in every mode; other writes follow the mode", async () => {
  const ctx = { workspace: tmp.dir };
  const write = (filePath: string) => ({ name: "write_file", args: { filePath, content: "{}" } });
  for (const file of [".mini-cursor/config.json", "mini-cursor.config.json", "./mini-cursor.config.json"]) {
    expect(await classifyCall(write(file), "full-auto", ["write_file"], ctx)).toMatchObject({
      action: "ask",
      alwaysAsks: true,
      reason: `changes the project's command rules (${file})`,
    });
  }
  expect(await classifyCall(write("src/a.ts"), "auto-edit", [], ctx)).toMatchObject({ action: "run" });
  expect(await classifyCall(write("src/a.ts"), "suggest", [], ctx)).toMatchObject({
    action: "ask",
    reason: "changes src/a.ts (approval mode suggest)",
  });
  expect(await classifyCall({ name: "read_file", args: { filePath: "a" } }, "suggest", [], ctx)).toMatchObject({
    action: "run",
  });
});

// ---------------------------------------------------------------------------------------------
// Both engines

function settingsFor(workspace: string): GraphSettings {
  return {
    workspace,
    model: "scripted",
    provider: "offline",
    requestTimeoutMs: 5000,
    maxRetries: 0,
    approval: "full-auto",
    maxSteps: 10,
    contextTokens: 100_000,
  };
}

function engineFor(kind: "graph" | "loop", script: ScriptedTurn[]): { engine: Engine; model: ScriptedChatModel } {
  const model = new ScriptedChatModel(script);
  const settings = settingsFor(tmp.dir);
  const tools = createTools({ workspace: tmp.dir });
  const meta = { engine: kind, model: "scripted", provider: "offline", workspace: tmp.dir };
  if (kind === "graph") {
    const graph = createGraph(settings, { checkpointer: new MemorySaver(), model, tools });
    return {
      engine: createGraphEngine({ graph, meta, modelSettings: settings, approval: "full-auto", maxSteps: 10 }),
      model,
    };
  }
  const threads = new Map<string, LoopThread>();
  const memory = {
    load: (id: string) => threads.get(id) ?? { messages: [], alwaysAllow: [] },
    save: (id: string, t: LoopThread) => void threads.set(id, t),
  };
  const runtime = createRuntime(settings, { model, tools });
  return {
    engine: createLoopEngine({ runtime: { ...runtime, workspace: tmp.dir }, meta, modelSettings: settings, memory }),
    model,
  };
}

describe.each(["graph", "loop"] as const)("%s engine", (kind) => {
  test("deny rules refuse without asking, dangerous commands ask with the reason, the rest runs", async () => {
    writeJson("mini-cursor.config.json", { commands: { deny: [{ command: "touch", reason: "use write_file" }] } });
    const { engine } = engineFor(kind, [
      {
        toolCalls: [
          { name: "execute_command", args: { command: "echo ok && touch made.txt" } },
          { name: "execute_command", args: { command: "bash -c 'rm -rf ~/x'" } },
          { name: "execute_command", args: { command: "echo ran > ran.txt" } },
        ],
      },
      "done",
    ]);
    const events: AgentEvent[] = [];
    const approvals: ApprovalRequest[] = [];
    await engine.run({
      task: "go",
      threadId: "t1",
      emit: (e) => events.push(e),
      approver: async (request) => {
        approvals.push(request);
        return { ...UNATTENDED_RESPONSE };
      },
    });
    expect(approvals).toEqual([
      {
        toolCallId: expect.any(String),
        tool: "execute_command",
        args: { command: "bash -c 'rm -rf ~/x'" },
        reason: "dangerous command: rm deletes ~/x (in the home folder, outside the workspace)",
        asksEveryTime: true,
      },
    ]);
    const results = events.filter((e): e is Extract<AgentEvent, { type: "tool_result" }> => e.type === "tool_result");
    const byCommand = (needle: string) => {
      const call = events.find((e) => e.type === "tool_call" && String(e.args.command).includes(needle)) as {
        id: string;
      };
      return results.find((r) => r.id === call.id)!;
    };
    expect(byCommand("touch")).toMatchObject({
      status: "error",
      content:
        "Refused: this execute_command call was not run, because the project rules (mini-cursor.config.json) deny `touch`: use write_file (it matches `touch made.txt`). Do not try to get around the rule; do something else or ask the user.",
    });
    expect(byCommand("rm -rf")).toMatchObject({
      status: "error",
      content:
        "This execute_command call was not run, because nobody could be asked to approve it (mini-cursor is not running on a terminal). It needed approval because: dangerous command: rm deletes ~/x (in the home folder, outside the workspace). Such a call asks in every approval mode and no allow rule covers it: it needs a person on a terminal to approve it. Tell the user what was not done and why.",
    });
    expect(byCommand("ran.txt").status).toBe("success");
    expect(existsSync(path.join(tmp.dir, "made.txt"))).toBe(false);
    expect(readFileSync(path.join(tmp.dir, "ran.txt"), "utf8")).toBe("ran\n");
  });

  test("'always' does not cover a dangerous command: it asks again", async () => {
    const { engine } = engineFor(kind, [
      { toolCalls: [{ name: "execute_command", args: { command: "git reset --hard" } }] },
      { toolCalls: [{ name: "execute_command", args: { command: "git reset --hard" } }] },
      "done",
    ]);
    const approvals: ApprovalRequest[] = [];
    await engine.run({
      task: "go",
      threadId: "t1",
      emit: () => undefined,
      approver: async (request) => {
        approvals.push(request);
        return { decision: "always" };
      },
    });
    expect(approvals.map((a) => a.reason)).toEqual([
      "dangerous command: git reset --hard discards uncommitted changes",
      "dangerous command: git reset --hard discards uncommitted changes",
    ]);
  });
});
