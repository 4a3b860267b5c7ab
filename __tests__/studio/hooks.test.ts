import { expect, jest, test } from "@jest/globals";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { ThreadState } from "@langchain/langgraph-sdk";
import { DO_NOT_GET_AROUND } from "../../src/guard/failure.js";
import { contentHash } from "../../src/security/trust.js";
import type { ScriptStep } from "../helpers/openai-server.js";
import { STUDIO_STARTUP_DEADLINE_MS, useStudioServer } from "../helpers/studio-server.js";
import { makeTempDir, waitFor } from "../helpers/tmp.js";

/**
 * Hooks (issue 32, item 3) through the real Studio dev server, with the rules of the CLI: the
 * user config's hook before a call blocks it (exit 2), its stderr the result the model reads; the
 * hook after a call sees the call's result; the server's terminal says what each hook did. A
 * repository's own hooks are ignored until the person trusted that file's content (the server
 * says so), and run once it is trusted.
 */

jest.setTimeout(STUDIO_STARTUP_DEADLINE_MS + 300_000);

const RUN_DEADLINE_MS = 90_000;

interface ApiMessage {
  type: string;
  content: unknown;
  status?: string;
  tool_call_id?: string;
}
type Values = { messages: ApiMessage[] };

const textOf = (content: unknown): string =>
  typeof content === "string"
    ? content
    : Array.isArray(content)
      ? content.map((p) => String((p as { text?: string }).text ?? p)).join("")
      : "";

const home = makeTempDir("mini-cursor-studio-hooks-home-");
afterAll(() => home.cleanup());
const userConfig = path.join(home.dir, "config.json");
const trustFile = path.join(home.dir, "trust.json");

writeFileSync(
  userConfig,
  JSON.stringify({
    hooks: {
      PreToolUse: [
        {
          matcher: "write_file",
          hooks: [
            {
              name: "freeze",
              command: "cat > pre-input.json; echo 'f.txt is frozen: edit g.txt instead' >&2; exit 2",
            },
          ],
        },
      ],
      PostToolUse: [{ matcher: "read_file", hooks: [{ name: "record", command: "cat > post-input.json" }] }],
    },
  }),
);

/** Every run's first turn: a write the user's hook blocks, a read it records, a listing a repository's hook would block. */
const fx = useStudioServer(
  (request): ScriptStep =>
    request.messages.at(-1)?.role === "user"
      ? {
          toolCalls: [
            { id: "call_w", name: "write_file", args: { filePath: "f.txt", content: "new\n" } },
            { id: "call_r", name: "read_file", args: { filePath: "f.txt" } },
            { id: "call_l", name: "list_directory", args: { directoryPath: "." } },
          ],
        }
      : { content: "Done." },
  () => ({ MINI_CURSOR_USER_CONFIG: userConfig, MINI_CURSOR_TRUST_FILE: trustFile }),
);

/** A repository's rules file with a hook that blocks every listing and leaves a mark. */
const REPO_HOOKS = JSON.stringify({
  hooks: {
    PreToolUse: [
      {
        matcher: "list_directory",
        hooks: [{ command: "touch repo-hook-ran; echo 'the repository says no' >&2; exit 2" }],
      },
    ],
  },
});

/** Two workspaces under the server's root: the root itself, whose rules file nobody trusted, and `trusted/`, whose content the person trusted. */
let trusted: string;
beforeAll(() => {
  trusted = path.join(fx.workspace.dir, "trusted");
  mkdirSync(trusted);
  for (const dir of [fx.workspace.dir, trusted]) {
    writeFileSync(path.join(dir, "f.txt"), "old\n");
    writeFileSync(path.join(dir, "mini-cursor.config.json"), REPO_HOOKS);
  }
  const config = path.join(trusted, "mini-cursor.config.json");
  writeFileSync(trustFile, JSON.stringify({ trusted: { [config]: contentHash(REPO_HOOKS) } }));
});

/** One run on a new thread in `workspace`; returns the thread's messages by tool call id and the thread's id. */
async function runIn(workspace: string) {
  const { client, assistantId } = fx.studio;
  const thread = await client.threads.create();
  await client.runs.wait(thread.thread_id, assistantId, {
    input: { messages: [{ type: "human", content: "go" }] },
    config: { configurable: { workspace } },
  });
  const state = (await client.threads.getState(thread.thread_id)) as ThreadState<Values>;
  const results = new Map(
    state.values.messages.filter((m) => m.type === "tool").map((m) => [m.tool_call_id!, m] as const),
  );
  return { threadId: thread.thread_id, messages: state.values.messages, results };
}

const READ_OLD = "     1\told\n\n[Lines 1-1 of 1, end of file.]";

test(
  "the user's hook blocks write_file with its stderr as the result, the hook after read_file sees its result, and the repository's untrusted hook does not run",
  async () => {
    const ws = fx.workspace.dir;
    const run = await runIn(ws);
    expect(run.messages.map((m) => m.type)).toEqual(["human", "ai", "tool", "tool", "tool", "ai"]);
    const blocked = run.results.get("call_w")!;
    expect([blocked.status, textOf(blocked.content)]).toEqual([
      "error",
      `Refused: this write_file call was not run, because a hook the user configured (freeze) blocked it: f.txt is frozen: edit g.txt instead. ${DO_NOT_GET_AROUND}`,
    ]);
    expect(readFileSync(path.join(ws, "f.txt"), "utf8")).toBe("old\n");
    // The model's next request carried the hook's refusal.
    expect(
      fx.model.requests.some((r) =>
        r.messages.some((m) => m.role === "tool" && textOf(m.content) === textOf(blocked.content)),
      ),
    ).toBe(true);
    expect(JSON.parse(readFileSync(path.join(ws, "pre-input.json"), "utf8"))).toEqual({
      hook_event_name: "PreToolUse",
      tool_name: "Write",
      tool: "write_file",
      tool_input: { filePath: "f.txt", content: "new\n", file_path: path.join(ws, "f.txt") },
      tool_use_id: "call_w",
      session_id: run.threadId,
      transcript_path: null,
      cwd: ws,
      permission_mode: "acceptEdits",
      approval_mode: "auto-edit",
    });
    expect(textOf(run.results.get("call_r")!.content)).toBe(READ_OLD);
    expect(JSON.parse(readFileSync(path.join(ws, "post-input.json"), "utf8"))).toEqual({
      hook_event_name: "PostToolUse",
      tool_name: "Read",
      tool: "read_file",
      tool_input: { filePath: "f.txt", file_path: path.join(ws, "f.txt") },
      tool_use_id: "call_r",
      session_id: run.threadId,
      transcript_path: null,
      cwd: ws,
      permission_mode: "acceptEdits",
      approval_mode: "auto-edit",
      tool_response: { status: "success", content: READ_OLD },
    });
    // The repository's hook waits for trust: the listing ran, and the server said why the hook did not.
    expect(run.results.get("call_l")!.status).not.toBe("error");
    expect(existsSync(path.join(ws, "repo-hook-ran"))).toBe(false);
    const output = fx.studio.output();
    expect(output).toContain(
      "mini-cursor: mini-cursor.config.json in this repository has hooks (PreToolUse) that run commands before or after tool calls. They are ignored until you trust this file",
    );
    expect(output).toContain(
      "mini-cursor: hook freeze before write_file: blocked: f.txt is frozen: edit g.txt instead",
    );
    expect(output).toContain("mini-cursor: hook record after read_file: passed");
  },
  RUN_DEADLINE_MS,
);

test(
  "a repository's hooks run once the person trusted the file's content",
  async () => {
    const run = await runIn(trusted);
    const listed = run.results.get("call_l")!;
    expect([listed.status, textOf(listed.content)]).toEqual([
      "error",
      `Refused: this list_directory call was not run, because a hook the user configured (touch repo-hook-ran; echo 'the repository says no' >&2; exit 2) blocked it: the repository says no. ${DO_NOT_GET_AROUND}`,
    ]);
    expect(existsSync(path.join(trusted, "repo-hook-ran"))).toBe(true);
    // The user's own hooks hold there too.
    expect(readFileSync(path.join(trusted, "f.txt"), "utf8")).toBe("old\n");
    await waitFor(() => fx.studio.output().includes("blocked: the repository says no"), 10_000);
  },
  RUN_DEADLINE_MS,
);
