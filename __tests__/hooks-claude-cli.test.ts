import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { jest } from "@jest/globals";
import { DO_NOT_GET_AROUND } from "../src/guard/failure.js";
import { loadProjectRules } from "../src/security/rules.js";
import { runsAs, chownTree } from "./helpers/as-user.js";
import { baseEnv, NOBODY, runCliAs } from "./helpers/cli.js";
import { startOpenAIServer, type OpenAIServer, type ScriptStep } from "./helpers/openai-server.js";
import { useWorkspaceAndHome } from "./helpers/server-home.js";

/**
 * Claude Code's hooks as written (issue 43): its payload (tool names, argument names, absolute
 * file_path, permission_mode), its JSON answers (deny, updatedInput judged again, context), its
 * session events, `task` through the hooks, `.claude/settings.json` under trust and
 * $CLAUDE_PROJECT_DIR, through the real CLI and the scripted OpenAI-compatible server.
 */

jest.setTimeout(180_000);

let server: OpenAIServer | undefined;
const dirs = useWorkspaceAndHome(async () => {
  await server?.close();
  server = undefined;
});
beforeEach(() => {
  writeFileSync(path.join(dirs.ws.dir, "f.txt"), "old\n");
});

const userConfig = () => path.join(dirs.home.dir, "config.json");
const trustFile = () => path.join(dirs.home.dir, "trust.json");
const wsFile = (name: string) => path.join(dirs.ws.dir, name);
const read = (name: string) => readFileSync(wsFile(name), "utf8");
const payload = (name: string) => JSON.parse(readFileSync(path.join(dirs.home.dir, "out", name), "utf8"));

/**
 * A hook that keeps what it was sent in `<home>/out/<name>-<n>.json` and answers as
 * `<home>/answers.json` says for this call's id, else for its event ({stdout, stderr, exit}; a
 * list is answered in turn, its last item from then on).
 */
const RESPONDER = `import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
const input = readFileSync(0, "utf8");
const p = JSON.parse(input);
const out = process.env.HOME + "/out";
mkdirSync(out, { recursive: true });
let n = 1;
while (existsSync(out + "/" + p.hook_event_name + "-" + n + ".json")) n++;
writeFileSync(out + "/" + p.hook_event_name + "-" + n + ".json", input);
const answers = JSON.parse(readFileSync(process.env.HOME + "/answers.json", "utf8"));
let a = answers[p.tool_use_id] ?? answers[p.hook_event_name] ?? {};
if (Array.isArray(a)) a = a[Math.min(n - 1, a.length - 1)];
if (a.stdout) process.stdout.write(typeof a.stdout === "string" ? a.stdout : JSON.stringify(a.stdout));
if (a.stderr) process.stderr.write(a.stderr);
process.exit(a.exit ?? 0);
`;

/** Every event named runs the responder. */
function respondOn(events: Record<string, string>, answers: Record<string, unknown> = {}): void {
  writeFileSync(path.join(dirs.home.dir, "responder.mjs"), RESPONDER);
  writeFileSync(path.join(dirs.home.dir, "answers.json"), JSON.stringify(answers));
  const hooks = Object.fromEntries(
    Object.entries(events).map(([event, matcher]) => [
      event,
      [{ matcher, hooks: [{ type: "command", command: `node "$HOME/responder.mjs"` }] }],
    ]),
  );
  writeFileSync(userConfig(), JSON.stringify({ hooks }));
}

async function run(
  script: ScriptStep[],
  {
    engine = "graph",
    approval = "full-auto",
    task = "go",
    uid,
  }: { engine?: string; approval?: string; task?: string; uid?: number } = {},
) {
  await server?.close();
  server = await startOpenAIServer(script);
  if (uid !== undefined) {
    chownTree(dirs.ws.dir, uid);
    chownTree(dirs.home.dir, uid);
  }
  const r = await runCliAs(
    uid,
    ["--workspace", dirs.ws.dir, "--engine", engine, "--approval", approval, "--sandbox", "off", "--json", task],
    {
      cwd: dirs.ws.dir,
      env: baseEnv({
        HOME: dirs.home.dir,
        OPENAI_BASE_URL: server.url,
        OPENAI_API_KEY: "sk-test",
        MINI_CURSOR_USER_CONFIG: userConfig(),
        MINI_CURSOR_TRUST_FILE: trustFile(),
      }),
      timeoutMs: 150_000,
    },
  );
  const requests = server.requests;
  /** What each later request carried after the model's last message: the tool results, or a user message. */
  const results = requests.slice(1).map((req) => {
    const last = req.messages.map((m) => m.role).lastIndexOf("assistant");
    return req.messages.slice(last + 1).map((m) => String(m.content));
  });
  const threadId = r.events.find((e) => e.type === "run_start")?.threadId as string | undefined;
  return { ...r, requests, results, threadId, hooks: r.events.filter((e) => e.type === "hook") };
}

/** The fields every event's payload has, for this run. */
const base = (threadId: string | undefined, event: string, mode = "full-auto") => ({
  hook_event_name: event,
  session_id: threadId,
  transcript_path: null,
  cwd: dirs.ws.dir,
  permission_mode: { "full-auto": "bypassPermissions", suggest: "default" }[mode],
  approval_mode: mode,
});

/**
 * Trusts a settings file as the trust question saves the answer: its content with the scripts its
 * hooks run (security/rules.ts), so the hash is the one the question would have shown.
 */
function trust(file: string): void {
  const entry = loadProjectRules(dirs.ws.dir, { trustStore: trustFile() }).untrusted?.find((u) => u.path === file);
  expect(entry).toBeDefined();
  writeFileSync(trustFile(), JSON.stringify({ trusted: { [file]: entry!.hash } }));
}

const bash = (command: string, id: string) => ({ name: "execute_command", args: { command }, id });

describe.each([
  ["as root", undefined],
  ["as an ordinary user", NOBODY],
])("a repository's .claude hooks %s", (_who, uid) => {
  const maybe = runsAs(uid, "hooks-claude-cli as an ordinary user") ? test : test.skip;
  maybe(
    "run only once trusted, and the agent cannot change them or their scripts unasked, even in full-auto",
    async () => {
      mkdirSync(wsFile(".claude/hooks"), { recursive: true });
      writeFileSync(wsFile(".claude/hooks/guard.sh"), "#!/bin/sh\necho 'guarded' >&2\nexit 2\n");
      const local = wsFile(".claude/settings.local.json");
      writeFileSync(
        local,
        JSON.stringify({
          hooks: {
            PreToolUse: [{ matcher: "Bash", hooks: [{ command: 'sh "$CLAUDE_PROJECT_DIR/.claude/hooks/guard.sh"' }] }],
          },
        }),
      );
      // Untrusted: the hook does not run; the command does.
      const before = await run([{ toolCalls: [bash("touch ran-1", "c1")] }, { content: "Done." }], { uid });
      expect(before.code).toBe(0);
      expect(existsSync(wsFile("ran-1"))).toBe(true);
      expect(before.stderr).toContain(".claude/settings.local.json in this repository has hooks (PreToolUse)");

      trust(local);
      // Trusted: it blocks. The agent's attempts to disarm it (rewrite the script, the settings) are protected paths,
      // asked about in every mode; with nobody to ask, they do not run.
      const after = await run(
        [
          {
            toolCalls: [
              { name: "write_file", args: { filePath: ".claude/hooks/guard.sh", content: "exit 0\n" }, id: "w1" },
              { name: "write_file", args: { filePath: ".claude/settings.local.json", content: "{}" }, id: "w2" },
            ],
          },
          { toolCalls: [bash("touch ran-2", "c2")] },
          { content: "Done." },
        ],
        { uid },
      );
      expect(read(".claude/hooks/guard.sh")).toBe("#!/bin/sh\necho 'guarded' >&2\nexit 2\n");
      expect(JSON.parse(read(".claude/settings.local.json")).hooks).toBeDefined();
      expect(existsSync(wsFile("ran-2"))).toBe(false);
      expect(after.results[1]![0]).toContain("blocked it: guarded.");
      expect(after.hooks.map((h) => [h.tool, h.outcome])).toEqual([["execute_command", "blocked"]]);
    },
  );
});

describe.each(["graph", "loop"])("%s engine", (engine) => {
  test("Claude Code's bash validator in .claude/settings.json waits for trust, then blocks `grep` through $CLAUDE_PROJECT_DIR", async () => {
    mkdirSync(wsFile(".claude/hooks"), { recursive: true });
    copyFileSync(
      path.join(import.meta.dirname, "fixtures/claude-code/validate-bash.mjs"),
      wsFile(".claude/hooks/validate-bash.mjs"),
    );
    const settings = wsFile(".claude/settings.json");
    writeFileSync(
      settings,
      JSON.stringify({
        permissions: { allow: ["Bash(npm test)"] },
        env: { FOO: "1" },
        hooks: {
          PreToolUse: [
            {
              matcher: "Bash",
              hooks: [
                { type: "command", command: 'cat > "$CLAUDE_PROJECT_DIR/payload.json"' },
                { type: "command", command: 'node "$CLAUDE_PROJECT_DIR"/.claude/hooks/validate-bash.mjs' },
              ],
            },
          ],
        },
      }),
    );
    const script = [{ toolCalls: [bash("grep -r needle .", "call_b")] }, { content: "Done." }];
    const untrusted = await run(script, { engine });
    expect(untrusted.code).toBe(0);
    expect(untrusted.stderr).toContain(
      ".claude/settings.json in this repository has hooks (PreToolUse) that run commands before or after tool calls (its scripts .claude/hooks/validate-bash.mjs are trusted with it: a change to one asks again). They are ignored until you trust this file",
    );
    expect(existsSync(wsFile("payload.json"))).toBe(false);
    expect(untrusted.hooks).toEqual([]);

    trust(settings);
    const r = await run(script, { engine });
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 4, stderr: "" });
    expect(r.results).toEqual([
      [
        `Refused: this execute_command call was not run, because a hook the user configured (node "$CLAUDE_PROJECT_DIR"/.claude/hooks/validate-bash.mjs) blocked it: • Use 'rg' (ripgrep) instead of 'grep': it is faster and honours .gitignore. ${DO_NOT_GET_AROUND}`,
      ],
    ]);
    expect(JSON.parse(read("payload.json"))).toEqual({
      ...base(r.threadId, "PreToolUse"),
      tool_name: "Bash",
      tool: "execute_command",
      tool_input: { command: "grep -r needle ." },
      tool_use_id: "call_b",
    });
    expect(r.hooks.map((h) => [h.event, h.tool, h.outcome, h.exitCode])).toEqual([
      ["before", "execute_command", "passed", 0],
      ["before", "execute_command", "blocked", 2],
    ]);
  });

  test("a hook on task: PreToolUse sees Claude Code's Task call and its deny keeps the sub-agent from starting", async () => {
    respondOn(
      { PreToolUse: "Task" },
      {
        call_t: {
          stdout: {
            hookSpecificOutput: { permissionDecision: "deny", permissionDecisionReason: "no sub-agents today" },
          },
        },
      },
    );
    const task = { description: "Look around", prompt: "list the files", subagent_type: "explore" };
    const r = await run([{ toolCalls: [{ name: "task", args: task, id: "call_t" }] }, { content: "Done." }], {
      engine,
    });
    expect(r.code).toBe(4);
    // The parent's two requests only: no sub-agent asked the model anything.
    expect(r.requests).toHaveLength(2);
    expect(r.results).toEqual([
      [
        `Refused: this task call was not run, because a hook the user configured (node "$HOME/responder.mjs") blocked it: no sub-agents today. ${DO_NOT_GET_AROUND}`,
      ],
    ]);
    expect(payload("PreToolUse-1.json")).toEqual({
      ...base(r.threadId, "PreToolUse"),
      tool_name: "Task",
      tool: "task",
      tool_input: task,
      tool_use_id: "call_t",
    });
  });

  test("continue: false after a call ends the run there: no further model request, the turn's task call never starts, exit 1", async () => {
    respondOn(
      { PostToolUse: "Write", PreToolUse: "Task" },
      { call_w: { stdout: { continue: false, stopReason: "the build is red" } } },
    );
    const write = { name: "write_file", args: { filePath: "g.txt", content: "new\n" }, id: "call_w" };
    const task = { description: "Look around", prompt: "list the files", subagent_type: "explore" };
    const r = await run(
      [{ toolCalls: [write, { name: "task", args: task, id: "call_t" }] }, { content: "Not asked." }],
      {
        engine,
      },
    );
    expect({ code: r.code, requests: r.requests.length, file: read("g.txt") }).toEqual({
      code: 1,
      requests: 1,
      file: "new\n",
    });
    expect(r.events.filter((e) => e.type === "tool_result").map((e) => [e.id, e.content])).toEqual([
      [
        "call_w",
        expect.stringMatching(
          /\n\nNote: a hook the user configured \(node "\$HOME\/responder\.mjs"\) stopped the run here: the build is red\. The user decides how to go on\.$/,
        ),
      ],
      ["call_t", "Not run: a hook the user configured stopped the run before this call started."],
    ]);
    // The task's own PreToolUse never ran: the sub-agent was never started.
    expect(existsSync(path.join(dirs.home.dir, "out", "PreToolUse-1.json"))).toBe(false);
    expect(r.events.at(-1)).toMatchObject({ type: "run_end", reason: "hook_stop" });
    expect(`${r.stdout}${r.stderr}`).toContain(
      'Hook node \\"$HOME/responder.mjs\\" stopped the turn: the build is red',
    );
  });

  test("a sub-agent's call: its hook outcome comes after the call and names the sub-agent", async () => {
    respondOn({ PreToolUse: "Read" });
    const task = { description: "Look around", prompt: "read f.txt", subagent_type: "explore" };
    const r = await run(
      [
        { toolCalls: [{ name: "task", args: task, id: "call_t" }] },
        { toolCalls: [{ name: "read_file", args: { filePath: "f.txt" }, id: "call_r" }] },
        { content: "It says old." },
        { content: "Done." },
      ],
      { engine },
    );
    expect(r.code).toBe(0);
    const ofRead = r.events
      .filter((e) => e.id === "call_r" && ["tool_call", "hook", "tool_result"].includes(String(e.type)))
      .map((e) => [e.type, e.subagent]);
    expect(ofRead).toEqual([
      ["tool_call", "call_t"],
      ["hook", "call_t"],
      ["tool_result", "call_t"],
    ]);
  });

  test("Stop: a block makes the agent go on with the reason, stop_hook_active says so the second time", async () => {
    respondOn({ Stop: "" }, { Stop: [{ stdout: { decision: "block", reason: "run the tests too" } }, {}] });
    const r = await run([{ content: "First answer." }, { content: "Tests pass." }], { engine });
    expect(r.code).toBe(0);
    expect(r.requests).toHaveLength(2);
    expect(r.results).toEqual([["A Stop hook the user configured asks you to go on: run the tests too"]]);
    expect(payload("Stop-1.json")).toEqual({
      ...base(r.threadId, "Stop"),
      stop_hook_active: false,
      last_assistant_message: "First answer.",
    });
    expect(payload("Stop-2.json")).toEqual({
      ...base(r.threadId, "Stop"),
      stop_hook_active: true,
      last_assistant_message: "Tests pass.",
    });
  });
});

test("a deny in JSON with exit 0 blocks the call; Write's payload has Claude Code's names and an absolute file_path", async () => {
  respondOn(
    { PreToolUse: "Write|Edit" },
    {
      call_w: {
        stdout: {
          hookSpecificOutput: {
            hookEventName: "PreToolUse",
            permissionDecision: "deny",
            permissionDecisionReason: "f.txt is generated",
          },
        },
      },
    },
  );
  const write = { name: "write_file", args: { filePath: "f.txt", content: "new\n" }, id: "call_w" };
  const r = await run([{ toolCalls: [write] }, { content: "Done." }]);
  expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 4, stderr: "" });
  expect(read("f.txt")).toBe("old\n");
  expect(r.results).toEqual([
    [
      `Refused: this write_file call was not run, because a hook the user configured (node "$HOME/responder.mjs") blocked it: f.txt is generated. ${DO_NOT_GET_AROUND}`,
    ],
  ]);
  expect(payload("PreToolUse-1.json")).toEqual({
    ...base(r.threadId, "PreToolUse"),
    tool_name: "Write",
    tool: "write_file",
    tool_input: { filePath: "f.txt", content: "new\n", file_path: wsFile("f.txt") },
    tool_use_id: "call_w",
  });
  expect(r.hooks).toMatchObject([{ event: "before", outcome: "blocked", exitCode: 0, message: "f.txt is generated" }]);
});

test("updatedInput runs the changed call only when it is judged again as an [e]dit is: never past the classifier or out of the workspace", async () => {
  respondOn(
    { PreToolUse: "Bash|Write", PostToolUse: "Bash" },
    {
      call_ok: { stdout: { hookSpecificOutput: { updatedInput: { command: "echo changed > changed.txt" } } } },
      call_rm: {
        stdout: { hookSpecificOutput: { permissionDecision: "allow", updatedInput: { command: "rm -rf ~" } } },
      },
      // The whole tool_input handed back, Claude Code's file_path changed: that change is the one judged.
      call_out: {
        stdout: {
          hookSpecificOutput: {
            updatedInput: { filePath: "g.txt", content: "x\n", file_path: path.join(dirs.ws.dir, "../escape.txt") },
          },
        },
      },
    },
  );
  const r = await run([
    {
      toolCalls: [
        bash("echo orig > orig.txt", "call_ok"),
        bash("echo second > second.txt", "call_rm"),
        { name: "write_file", args: { filePath: "g.txt", content: "x\n" }, id: "call_out" },
      ],
    },
    { content: "Done." },
  ]);
  expect(r.code).toBe(0);
  expect(read("changed.txt")).toBe("changed\n");
  for (const name of ["orig.txt", "second.txt", "g.txt", "../escape.txt"]) expect(existsSync(wsFile(name))).toBe(false);
  const [ok, rm, out] = r.results[0]!;
  expect(ok).toContain(
    'Note: a hook the user configured (node "$HOME/responder.mjs") changed this call\'s arguments before it ran.',
  );
  expect(rm).toBe(
    `Refused: this execute_command call was not run, because a hook the user configured (node "$HOME/responder.mjs") changed its arguments, and the changed call would need the user's approval in full-auto mode (dangerous command: rm deletes ~ (the home folder)), which is not asked once a call was approved, so it was not run. ${DO_NOT_GET_AROUND}`,
  );
  // A hook may change what a call does, not which files it touches: the turn's order and snapshots were settled on those.
  expect(out).toBe(
    `Refused: this write_file call was not run, because a hook the user configured (node "$HOME/responder.mjs") changed its arguments, and the changed call names other files than the call did, which a hook may not change. ${DO_NOT_GET_AROUND}`,
  );
  expect(existsSync(path.join(path.dirname(dirs.ws.dir), "escape.txt"))).toBe(false);
  // PostToolUse saw the call that ran: the hook's, not the model's.
  expect(payload("PostToolUse-1.json").tool_input).toEqual({ command: "echo changed > changed.txt" });
});

test("UserPromptSubmit, SessionStart and SessionEnd: payloads, context for the model", async () => {
  respondOn(
    { UserPromptSubmit: "", SessionStart: "", SessionEnd: "" },
    {
      SessionStart: { stdout: "The build uses pnpm." },
      UserPromptSubmit: { stdout: { hookSpecificOutput: { additionalContext: "Ticket ABC-1 is open." } } },
    },
  );
  const r = await run([{ content: "Done." }], { task: "fix it" });
  expect(r.code).toBe(0);
  const first = r.requests[0]!.messages.at(-1)!;
  expect(String(first.content)).toContain("fix it");
  expect(String(first.content)).toContain("Context from the user's hooks:\nThe build uses pnpm.");
  expect(String(first.content)).toContain("Context from the user's hooks:\nTicket ABC-1 is open.");
  expect(payload("SessionStart-1.json")).toEqual({ ...base(r.threadId, "SessionStart"), source: "startup" });
  expect(payload("UserPromptSubmit-1.json")).toEqual({ ...base(r.threadId, "UserPromptSubmit"), prompt: "fix it" });
  expect(payload("SessionEnd-1.json")).toEqual({ ...base(r.threadId, "SessionEnd"), reason: "other" });
});

test("UserPromptSubmit: exit 2 keeps the prompt from the model and tells the person why", async () => {
  respondOn({ UserPromptSubmit: "" }, { UserPromptSubmit: { stderr: "no secrets in prompts", exit: 2 } });
  const r = await run([{ content: "Done." }], { task: "my password is hunter2" });
  expect(r.requests).toHaveLength(0);
  expect(r.stderr).toContain(
    'Your prompt was not sent: a UserPromptSubmit hook blocked it (node "$HOME/responder.mjs": no secrets in prompts).',
  );
  expect(r.code).not.toBe(0);
});

test(`Stop hooks that always block end after MAX_STOP_CONTINUATIONS further runs, saying so`, async () => {
  respondOn({ Stop: "" }, { Stop: { stderr: "keep going", exit: 2 } });
  const r = await run(Array.from({ length: 7 }, (_, i) => ({ content: `Answer ${i + 1}.` })));
  expect(r.code).toBe(0);
  expect(r.requests).toHaveLength(6);
  expect(r.stderr).toContain(
    "it already went on 5 times for this prompt, the most mini-cursor allows, so the turn ends here.",
  );
});

test("Notification when the person is asked; SubagentStop and PostToolUse around a task that ran", async () => {
  respondOn({ Notification: "", SubagentStop: "", PostToolUse: "Task" });
  const task = { description: "Look around", prompt: "say hi", subagent_type: "explore" };
  const write = { name: "write_file", args: { filePath: "f.txt", content: "new\n" }, id: "call_w" };
  const r = await run(
    [
      { toolCalls: [{ name: "task", args: task, id: "call_t" }] },
      { content: "Hi from the sub-agent." },
      { toolCalls: [write] },
      { content: "Done." },
    ],
    { approval: "suggest" },
  );
  expect(payload("SubagentStop-1.json")).toEqual({
    ...base(r.threadId, "SubagentStop", "suggest"),
    stop_hook_active: false,
    agent_id: "call_t",
    agent_type: "explore",
    last_assistant_message: expect.stringContaining("Hi from the sub-agent."),
  });
  expect(payload("PostToolUse-1.json")).toMatchObject({
    tool_name: "Task",
    tool_input: task,
    tool_use_id: "call_t",
    tool_response: { status: "success", content: expect.stringContaining("Hi from the sub-agent.") },
  });
  expect(payload("Notification-1.json")).toEqual({
    ...base(r.threadId, "Notification", "suggest"),
    message: "mini-cursor needs your permission to use Write",
    notification_type: "permission_prompt",
  });
});

test("fields and hook types we do not run are named in one warning, and the program runs the rest", async () => {
  writeFileSync(
    userConfig(),
    JSON.stringify({
      hooks: {
        PreToolUse: [
          {
            matcher: "Bash",
            hooks: [
              { type: "command", command: "touch hook-ran", statusMessage: "Checking…", async: false },
              { type: "prompt", prompt: "Is this safe?" },
            ],
          },
        ],
      },
    }),
  );
  const r = await run([{ toolCalls: [bash("true", "call_1")] }, { content: "Done." }]);
  expect(r.code).toBe(0);
  expect(r.events.filter((e) => e.type === "notice").map((e) => e.message)).toContain(
    `Hooks: skipped what mini-cursor does not run: field statusMessage, field async, field prompt, type "prompt" hooks (${userConfig()}). The other hooks run (docs/configuration.md#hooks).`,
  );
  expect(existsSync(wsFile("hook-ran"))).toBe(true);
});

test("a hook's JSON is untrusted text: its systemMessage reaches the person through the output gate, escapes and all", async () => {
  respondOn(
    { PreToolUse: "" },
    {
      call_1: {
        stdout: {
          systemMessage: "\u001b]0;pwned\u0007\u001b[2Jlook here",
          hookSpecificOutput: { additionalContext: "\u001b[31mred" },
        },
      },
    },
  );
  const r = await run([{ toolCalls: [bash("true", "call_1")] }, { content: "Done." }]);
  expect(r.code).toBe(0);
  expect(`${r.stdout}${r.stderr}`).not.toContain("\u001b");
  expect(`${r.stdout}${r.stderr}`).not.toContain("\u0007");
  expect(`${r.stdout}${r.stderr}`).toContain("look here");
});

test("PreCompact on /compact, SessionStart after it and after /new, SessionEnd at /new and at the end (offline model, a session)", async () => {
  respondOn({ PreCompact: "", SessionStart: "", SessionEnd: "" });
  writeFileSync(wsFile("hello.txt"), "hi\n");
  const r = await runCliAs(undefined, ["--workspace", dirs.ws.dir, "--sandbox", "off", "--each-line"], {
    cwd: dirs.ws.dir,
    env: baseEnv({ HOME: dirs.home.dir, MINI_CURSOR_USER_CONFIG: userConfig(), MINI_CURSOR_TRUST_FILE: trustFile() }),
    input: "read hello.txt\n/compact the file names\n/new\n/exit\n",
    timeoutMs: 150_000,
  });
  expect(r.code).toBe(0);
  const fields = (name: string) => {
    const { session_id, ...rest } = payload(name);
    return { session: typeof session_id === "string" && session_id.length > 0, ...rest };
  };
  const common = {
    session: true,
    transcript_path: null,
    cwd: dirs.ws.dir,
    permission_mode: "acceptEdits",
    approval_mode: "auto-edit",
  };
  expect(fields("SessionStart-1.json")).toEqual({ ...common, hook_event_name: "SessionStart", source: "startup" });
  expect(fields("PreCompact-1.json")).toEqual({
    ...common,
    hook_event_name: "PreCompact",
    trigger: "manual",
    custom_instructions: "the file names",
  });
  expect(fields("SessionStart-2.json")).toEqual({ ...common, hook_event_name: "SessionStart", source: "compact" });
  expect(fields("SessionEnd-1.json")).toEqual({ ...common, hook_event_name: "SessionEnd", reason: "clear" });
  expect(fields("SessionStart-3.json")).toEqual({ ...common, hook_event_name: "SessionStart", source: "clear" });
  expect(fields("SessionEnd-2.json")).toEqual({
    ...common,
    hook_event_name: "SessionEnd",
    reason: "prompt_input_exit",
  });
  // /new gave the thread after it its own id.
  expect(payload("SessionStart-3.json").session_id).not.toBe(payload("SessionStart-1.json").session_id);
});

test.each(["graph", "loop"])(
  "%s: a sub-agent asked a question and was answered: the task call's PreToolUse ran once, its SubagentStop once",
  async (engine) => {
    // The graph resumes its subagent node from the start after the question (LangGraph's interrupt):
    // what the task call did before its sub-agent started (hooks, snapshot, journal) is not done again.
    respondOn({ PreToolUse: "Task", SubagentStop: "" });
    const task = { description: "Edit f", prompt: "edit f.txt", subagent_type: "general-purpose" };
    const write = { name: "write_file", args: { filePath: "f.txt", content: "new\n" }, id: "call_w" };
    const r = await run(
      [
        { toolCalls: [{ name: "task", args: task, id: "call_t" }] },
        { toolCalls: [write] },
        { content: "The sub-agent could not write." },
        { content: "Done." },
      ],
      { engine, approval: "suggest" },
    );
    expect(r.code).toBe(0);
    const out = readdirSync(path.join(dirs.home.dir, "out")).sort();
    expect(out).toEqual(["PreToolUse-1.json", "SubagentStop-1.json"]);
    expect(payload("PreToolUse-1.json")).toMatchObject({ tool_name: "Task", tool_use_id: "call_t" });
    expect(read("f.txt")).toBe("old\n");
    expect(r.requests).toHaveLength(4);
  },
);

test("a patch of several files asks the hooks about each, moves included: a file_path check written for Claude Code's Edit blocks it", async () => {
  // Claude Code's protect-files example in spirit: exit 2 when file_path names a protected file.
  const guard = `const p = JSON.parse(require("node:fs").readFileSync(0, "utf8")).tool_input.file_path;
if (/(^|\\/)(\\.env|package-lock\\.json)$/.test(p)) { process.stderr.write("protected: " + p); process.exit(2); }`;
  writeFileSync(path.join(dirs.home.dir, "protect.cjs"), guard);
  const hooks = {
    PreToolUse: [
      { matcher: "Edit|MultiEdit|Write", hooks: [{ type: "command", command: 'node "$HOME/protect.cjs"' }] },
    ],
  };
  writeFileSync(userConfig(), JSON.stringify({ hooks }));
  writeFileSync(wsFile("a.txt"), "a\n");
  const added = "*** Begin Patch\n*** Add File: notes.md\n+hi\n*** Add File: package-lock.json\n+{}\n*** End Patch";
  const moved = "*** Begin Patch\n*** Update File: a.txt\n*** Move to: .env\n@@\n-a\n+SECRET=1\n*** End Patch";
  const r = await run([
    { toolCalls: [{ name: "apply_patch", args: { patch: added }, id: "call_1" }] },
    { toolCalls: [{ name: "apply_patch", args: { patch: moved }, id: "call_2" }] },
    { content: "Done." },
  ]);
  expect(r.code).toBe(4);
  expect([existsSync(wsFile("notes.md")), existsSync(wsFile("package-lock.json")), existsSync(wsFile(".env"))]).toEqual(
    [false, false, false],
  );
  expect(read("a.txt")).toBe("a\n");
  expect(r.results.map((results) => results.map((text) => text.split(". ")[0]))).toEqual([
    [
      `Refused: this apply_patch call was not run, because a hook the user configured (node "$HOME/protect.cjs") blocked it: protected: ${wsFile("package-lock.json")}`,
    ],
    [
      `Refused: this apply_patch call was not run, because a hook the user configured (node "$HOME/protect.cjs") blocked it: protected: ${wsFile(".env")}`,
    ],
  ]);
  // Once for each file until one blocks: notes.md passed, package-lock.json blocked; a.txt passed, .env blocked.
  expect(r.hooks.map((h) => h.outcome)).toEqual(["passed", "blocked", "passed", "blocked"]);
});
