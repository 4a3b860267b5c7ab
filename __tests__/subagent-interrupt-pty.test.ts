import { existsSync, mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, jest, test } from "@jest/globals";
import { INTERRUPTED_NOTE } from "../src/agent/turn.js";
import { baseEnv } from "./helpers/cli.js";
import { routedScript, startOpenAIServer, type ChatRequest } from "./helpers/openai-server.js";
import { waitFor } from "./helpers/tmp.js";
import { atPrompt, count, createTmux, paneExitCode, startCliInPane } from "./helpers/tmux.js";
import { usePaneFixture } from "./helpers/pane-fixture.js";

/**
 * Ctrl-C on a real terminal (tmux) while a `task` call's sub-agent waits for the model, after it
 * wrote a file (issue 32 item 1: undo covers a sub-agent's file changes). The turn is closed
 * truthfully (the next request says the sub-agent was interrupted and names its file), and
 * /undo of that turn, typed at the prompt, takes the file back. Both engines.
 */

jest.setTimeout(240_000);

const fx = usePaneFixture();

/** The latest user message of a request: which turn (the parent's, or a sub-agent's, which has one) it belongs to. */
function latestRequest(request: ChatRequest): string {
  const latest = request.messages.filter((m) => m.role === "user").at(-1);
  return typeof latest?.content === "string" ? latest.content : JSON.stringify(latest?.content);
}

const BRIEF = "Write a.txt with one line.";
const CANCELLED =
  "This task call's sub-agent was interrupted by the user (Ctrl-C) before it gave its report, so it may have done part of its task. Since this step started, these files changed: a.txt (added). Check them before running it again.";

describe.each(["graph", "loop"])("Ctrl-C inside a sub-agent (%s)", (engine) => {
  test("the next request says what the sub-agent changed, and /undo of the turn removes its file", async () => {
    const ws = path.join(fx.tmp.dir, "ws");
    fx.server = await startOpenAIServer(
      routedScript(
        {
          FIRST: [
            {
              toolCalls: [
                { name: "task", args: { description: "Write the file", prompt: BRIEF, subagent_type: "general" } },
              ],
            },
          ],
          [BRIEF]: [
            { toolCalls: [{ name: "write_file", args: { filePath: "a.txt", content: "one\n" } }] },
            { content: "The sub-agent's report streams and then stalls here", stallAfterChunks: 2 },
          ],
          SECOND: [{ content: "Second answer." }],
        },
        latestRequest,
      ),
    );
    fx.term = createTmux(
      baseEnv({
        OPENAI_BASE_URL: fx.server.url,
        OPENAI_API_KEY: "test",
        MINI_CURSOR_MAX_RETRIES: "0",
        MINI_CURSOR_SANDBOX: "off",
      }),
    );
    mkdirSync(ws);
    await startCliInPane(fx.term, ws, ["--engine", engine, "--approval", "full-auto"], { oneProcess: true });
    await fx.term.waitForScreen(atPrompt, "the first prompt", 60_000);

    await fx.term.type("FIRST");
    await fx.term.press("Enter");
    // The sub-agent wrote a.txt and its next answer stalls.
    await waitFor(() => fx.server!.requests.filter((r) => latestRequest(r) === BRIEF).length === 2, 90_000, 50);
    expect(readFileSync(path.join(ws, "a.txt"), "utf8")).toBe("one\n");
    await fx.term.press("C-c");
    await fx.term.waitForScreen(
      (s) => atPrompt(s) && s.includes("Turn cancelled; the conversation so far is kept."),
      "the prompt after Ctrl-C",
      60_000,
    );

    await fx.term.type("SECOND");
    await fx.term.press("Enter");
    await fx.term.waitForScreen((s) => atPrompt(s) && s.includes("Second answer."), "the second turn's answer", 60_000);
    const sent = fx.server.requests.at(-1)!.messages.filter((m) => m.role !== "system" && m.role !== "developer");
    const call = sent[1]!.tool_calls![0]!;
    expect(sent.map((m) => [m.role, m.role === "assistant" && m.tool_calls ? "" : m.content])).toEqual([
      ["user", "FIRST"],
      ["assistant", ""],
      ["tool", CANCELLED],
      ["assistant", INTERRUPTED_NOTE],
      ["user", "SECOND"],
    ]);
    expect([call.function.name, sent[2]!.tool_call_id]).toEqual(["task", call.id]);

    // The second turn changed nothing; undoing it, then the cancelled turn, takes a.txt away.
    await fx.term.type("/undo");
    await fx.term.press("Enter");
    await fx.term.waitForScreen((s) => atPrompt(s) && s.includes("Undid turn 2: SECOND"), "the first undo", 60_000);
    await fx.term.type("/undo");
    await fx.term.press("Enter");
    const screen = await fx.term.waitForScreen(
      (s) => atPrompt(s) && s.includes("Undid turn 1: FIRST"),
      "the second undo",
      60_000,
    );
    expect(screen).toContain("Undid turn 1: FIRST\nFiles (1):\n  removed    a.txt");
    expect(existsSync(path.join(ws, "a.txt"))).toBe(false);
    expect(count(screen, "Undid turn")).toBe(2);

    await fx.term.press("C-d");
    expect(await paneExitCode(ws)).toBe("EXITED:0");
  });
});
