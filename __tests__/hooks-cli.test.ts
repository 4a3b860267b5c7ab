import { chmodSync, existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { jest } from "@jest/globals";
import { DO_NOT_GET_AROUND } from "../src/guard/failure.js";
import { contentHash } from "../src/security/trust.js";
import { baseEnv, NOBODY, runCliAs } from "./helpers/cli.js";
import { runsAs, chownTree } from "./helpers/as-user.js";
import { startOpenAIServer, type OpenAIServer, type ScriptStep } from "./helpers/openai-server.js";
import { waitFor } from "./helpers/tmp.js";
import { pidAlive } from "./helpers/tmux.js";
import { useWorkspaceAndHome } from "./helpers/server-home.js";

/**
 * Hooks (issue 32, item 3) through the real CLI and the scripted OpenAI-compatible server: a hook
 * before a call blocks it with its stderr as the reason the model reads; a hook after a call sees
 * the result; a hook that hangs is stopped; hooks get the scrubbed environment and run in the
 * sandbox; a repository's hooks wait for the person's trust (as root and as an ordinary user).
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
const file = (name: string) => readFileSync(path.join(dirs.ws.dir, name), "utf8");

function configureHooks(hooks: object): void {
  writeFileSync(userConfig(), JSON.stringify({ hooks }));
}

/** Runs the CLI on `script` (then "Done."); returns the result, its events, and the tool results each later request carried. */
async function run(
  script: ScriptStep[],
  {
    engine = "graph",
    uid,
    env = {},
    sandbox = "off",
  }: { engine?: string; uid?: number; env?: NodeJS.ProcessEnv; sandbox?: string } = {},
) {
  await server?.close();
  server = await startOpenAIServer([...script, { content: "Done." }]);
  const r = await runCliAs(
    uid,
    ["--workspace", dirs.ws.dir, "--engine", engine, "--approval", "full-auto", "--sandbox", sandbox, "--json", "go"],
    {
      cwd: dirs.ws.dir,
      env: baseEnv({
        HOME: dirs.home.dir,
        OPENAI_BASE_URL: server.url,
        OPENAI_API_KEY: "sk-test",
        MINI_CURSOR_USER_CONFIG: userConfig(),
        MINI_CURSOR_TRUST_FILE: trustFile(),
        ...env,
      }),
      timeoutMs: 150_000,
    },
  );
  const results = server.requests.slice(1).map((req) => {
    const last = req.messages.map((m) => m.role).lastIndexOf("assistant");
    return req.messages.slice(last + 1).map((m) => String(m.content));
  });
  return { ...r, results, hooks: r.events.filter((e) => e.type === "hook") };
}

const writeCall = { name: "write_file", args: { filePath: "f.txt", content: "new\n" }, id: "call_w" };
const newFileCall = { name: "write_file", args: { filePath: "g.txt", content: "new\n" }, id: "call_g" };
const readCall = { name: "read_file", args: { filePath: "f.txt" }, id: "call_r" };
const READ_OLD = "     1\told\n\n[Lines 1-1 of 1, end of file.]";

describe.each(["graph", "loop"])("%s engine", (engine) => {
  test("a hook before write_file blocks it: the model reads the hook's stderr, the file is untouched, the hook saw the call", async () => {
    configureHooks({
      PreToolUse: [
        {
          matcher: "write_file|edit_file",
          hooks: [
            {
              type: "command",
              name: "freeze",
              command: "cat > hook-input.json; echo 'f.txt is frozen: edit g.txt instead' >&2; exit 1",
            },
          ],
        },
        // Another tool's hook does not run for this call.
        { matcher: "execute_command", hooks: [{ command: "touch other-hook-ran" }] },
      ],
    });
    const r = await run([{ toolCalls: [writeCall] }], { engine });
    // Every call the model asked for was blocked: nothing was done (exit 4).
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 4, stderr: "" });
    expect(file("f.txt")).toBe("old\n");
    expect(existsSync(path.join(dirs.ws.dir, "other-hook-ran"))).toBe(false);
    expect(r.results).toEqual([
      [
        `Refused: this write_file call was not run, because a hook the user configured (freeze) blocked it: f.txt is frozen: edit g.txt instead. ${DO_NOT_GET_AROUND}`,
      ],
    ]);
    const threadId = r.events.find((e) => e.type === "run_start")!.threadId;
    // Claude Code's payload, with our own names beside its own (issue 43).
    expect(JSON.parse(file("hook-input.json"))).toEqual({
      hook_event_name: "PreToolUse",
      tool_name: "Write",
      tool: "write_file",
      tool_input: { filePath: "f.txt", content: "new\n", file_path: path.join(dirs.ws.dir, "f.txt") },
      tool_use_id: "call_w",
      session_id: threadId,
      transcript_path: null,
      cwd: dirs.ws.dir,
      permission_mode: "bypassPermissions",
      approval_mode: "full-auto",
    });
    expect(r.hooks).toEqual([
      {
        type: "hook",
        id: "call_w",
        tool: "write_file",
        event: "before",
        hook: "freeze",
        outcome: "blocked",
        exitCode: 1,
        durationMs: expect.any(Number),
        message: "f.txt is frozen: edit g.txt instead",
      },
    ]);
    expect(r.events.find((e) => e.type === "tool_result")).toMatchObject({
      id: "call_w",
      notRun: true,
      status: "error",
    });
  });
});

test("a hook after a call sees its result as JSON; one that fails adds its stderr to what the model reads", async () => {
  configureHooks({
    PostToolUse: [
      { matcher: "Read", hooks: [{ command: "cat > post-input.json" }] },
      { hooks: [{ name: "lint", command: "echo 'lint: 2 warnings' >&2; exit 1" }] },
    ],
  });
  const r = await run([{ toolCalls: [readCall] }]);
  expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
  expect(JSON.parse(file("post-input.json"))).toMatchObject({
    hook_event_name: "PostToolUse",
    tool_name: "Read",
    tool: "read_file",
    tool_input: { filePath: "f.txt", file_path: path.join(dirs.ws.dir, "f.txt") },
    tool_response: { status: "success", content: READ_OLD },
  });
  expect(r.results).toEqual([
    [`${READ_OLD}\n\nNote: a hook the user configured to run after this call (lint) reported: lint: 2 warnings`],
  ]);
  expect(r.hooks.map((h) => [h.event, h.hook, h.outcome])).toEqual([
    ["after", "cat > post-input.json", "passed"],
    ["after", "lint", "failed"],
  ]);
});

test("a hook that does not finish in time is stopped with everything it started, and the call is blocked", async () => {
  configureHooks({
    PreToolUse: [{ matcher: "*", hooks: [{ command: "sleep 300 & echo $! > sleep.pid; wait" }] }],
  });
  const r = await run([{ toolCalls: [writeCall] }], { env: { MINI_CURSOR_HOOK_TIMEOUT_MS: "1500" } });
  expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 4, stderr: "" });
  expect(file("f.txt")).toBe("old\n");
  expect(r.results).toEqual([
    [
      `Refused: this write_file call was not run, because a hook the user configured (sleep 300 & echo $! > sleep.pid; wait) blocked it: it did not finish within 1.5 s. ${DO_NOT_GET_AROUND}`,
    ],
  ]);
  expect(r.hooks).toMatchObject([{ event: "before", outcome: "timed_out" }]);
  const pid = Number(file("sleep.pid"));
  await waitFor(() => !pidAlive(pid), 10_000);
});

test("a hook gets the environment commands get (secrets scrubbed), runs in the sandbox, and what it prints is redacted", async () => {
  const secret = "tok-very-secret-0123456789";
  configureHooks({
    PreToolUse: [
      {
        matcher: "write_file",
        hooks: [
          {
            name: "env",
            command: `env > hook-env.txt; echo escaped 2>/dev/null > "${dirs.home.dir}/escaped.txt"; echo "saw ${secret}" >&2; exit 1`,
          },
        ],
      },
    ],
  });
  const r = await run([{ toolCalls: [writeCall] }], { env: { MY_API_TOKEN: secret }, sandbox: "on" });
  expect(r.code).toBe(4);
  const env = file("hook-env.txt");
  expect(env).toContain("MINI_CURSOR=1");
  expect(env).not.toContain(secret);
  expect(env).not.toContain("MY_API_TOKEN");
  expect(env).not.toContain("OPENAI_API_KEY");
  // The sandbox keeps the hook to the workspace: nothing was written in the home folder.
  expect(existsSync(path.join(dirs.home.dir, "escaped.txt"))).toBe(false);
  expect(r.results[0]![0]).toContain("blocked it: saw [redacted]");
  expect(r.stdout).not.toContain(secret);
});

const REPO_HOOKS = {
  hooks: { PreToolUse: [{ matcher: "*", hooks: [{ command: "touch repo-hook-ran; exit 1" }] }] },
};

describe.each([
  ["as root", undefined],
  ["as an ordinary user", NOBODY],
])("a repository's hooks %s", (_who, uid) => {
  const maybe = runsAs(uid, "hooks-cli as an ordinary user") ? test : test.skip;
  maybe("are ignored until the person trusts the file, then run", async () => {
    const config = path.join(dirs.ws.dir, "mini-cursor.config.json");
    writeFileSync(config, JSON.stringify(REPO_HOOKS));
    if (uid !== undefined) {
      chownTree(dirs.ws.dir, uid);
      chmodSync(dirs.home.dir, 0o755);
    }
    const before = await run([{ toolCalls: [newFileCall] }], { uid });
    expect(before.code).toBe(0);
    expect(before.stderr).toContain(
      "mini-cursor.config.json in this repository has hooks (PreToolUse) that run commands before or after tool calls. They are ignored until you trust this file",
    );
    expect(existsSync(path.join(dirs.ws.dir, "repo-hook-ran"))).toBe(false);
    expect(before.hooks).toEqual([]);
    expect(file("g.txt")).toBe("new\n");

    // The person trusted this content (as the trust question saves it): now the hook runs and blocks.
    writeFileSync(trustFile(), JSON.stringify({ trusted: { [config]: contentHash(readFileSync(config, "utf8")) } }));
    rmSync(path.join(dirs.ws.dir, "g.txt"));
    if (uid !== undefined) chownTree(dirs.ws.dir, uid);
    const after = await run([{ toolCalls: [newFileCall] }], { uid });
    expect(after.code).toBe(4);
    expect(existsSync(path.join(dirs.ws.dir, "repo-hook-ran"))).toBe(true);
    expect(after.hooks).toMatchObject([{ outcome: "blocked", hook: "touch repo-hook-ran; exit 1" }]);
    expect(existsSync(path.join(dirs.ws.dir, "g.txt"))).toBe(false);
  });
});

test("a hooks block that cannot be read stops the run before anything runs, saying which file and why", async () => {
  configureHooks({ PreToolUse: [{ matcher: "(", hooks: [{ command: "true" }] }] });
  const r = await run([{ toolCalls: [writeCall] }]);
  expect(r.code).toBe(1);
  expect(r.stderr).toContain(`${userConfig()}: hooks.PreToolUse[0]: matcher "(" is not a valid regular expression`);
  expect(r.stderr).toContain("mini-cursor does not start with hooks it cannot read");
  expect(file("f.txt")).toBe("old\n");
});

test("with the offline model (no key), a blocked call is said not to have run, with the hook's reason", async () => {
  configureHooks({
    PreToolUse: [
      { matcher: "write_file", hooks: [{ name: "no-writes", command: "echo 'writes wait for review' >&2; exit 1" }] },
    ],
  });
  const r = await runCliAs(
    undefined,
    ["--workspace", dirs.ws.dir, "--sandbox", "off", "create a file hello.txt with content Hi"],
    {
      cwd: dirs.ws.dir,
      env: baseEnv({ HOME: dirs.home.dir, MINI_CURSOR_USER_CONFIG: userConfig(), MINI_CURSOR_TRUST_FILE: trustFile() }),
      timeoutMs: 150_000,
    },
  );
  expect(r.code).toBe(4);
  expect(existsSync(path.join(dirs.ws.dir, "hello.txt"))).toBe(false);
  expect(r.stdout).toContain("⚑ before write_file: hook no-writes blocked the call (exit 1)");
  expect(r.stdout).toContain(
    "Did not run write_file:\n\nRefused: this write_file call was not run, because a hook the user configured (no-writes) blocked it: writes wait for review.",
  );
});
