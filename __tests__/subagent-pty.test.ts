import { existsSync, mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, jest, test } from "@jest/globals";
import { baseEnv } from "./helpers/cli.js";
import { conversationOf, routedScript, startOpenAIServer, type ChatRequest } from "./helpers/openai-server.js";
import { count, createTmux, paneExitCode, startCliInPane } from "./helpers/tmux.js";
import { usePaneFixture } from "./helpers/pane-fixture.js";

/**
 * Issue 32 item 1 on a real terminal (tmux) against the scripted provider: a general
 * sub-agent's command asks through the parent's one approval question, which names the
 * sub-agent; the person's answer (yes, then no) reaches the sub-agent, which goes on, and its
 * report reaches the parent.
 */

jest.setTimeout(240_000);

const fx = usePaneFixture((dir) => mkdirSync(path.join(dir, "ws")));

const ws = () => path.join(fx.tmp.dir, "ws");
const CHOICES = "[y]es / [n]o / [e]dit";
const REQUEST = "write out.txt";
const PROMPT = "Write sub into out.txt.";
const COMMAND = "echo sub > out.txt";

const roles = (request: ChatRequest) => request.messages.map((m) => (m.role === "developer" ? "system" : m.role));
const last = (request: ChatRequest) => request.messages.at(-1);

async function start(engine: string): Promise<void> {
  fx.server = await startOpenAIServer(
    routedScript({
      [REQUEST]: [
        {
          toolCalls: [{ name: "task", args: { description: "Write out", prompt: PROMPT, subagent_type: "general" } }],
        },
        { content: "The sub-agent reported." },
      ],
      [PROMPT]: [
        { toolCalls: [{ name: "execute_command", args: { command: COMMAND } }] },
        { content: "Sub-agent done." },
      ],
    }),
  );
  fx.term = createTmux(
    baseEnv({ OPENAI_BASE_URL: fx.server.url, OPENAI_API_KEY: "test", MINI_CURSOR_MAX_RETRIES: "0" }),
  );
  await startCliInPane(fx.term, ws(), ["--engine", engine, "--sandbox", "off", "--approval", "suggest", REQUEST], {
    oneProcess: true,
  });
}

/** The question block as the pane shows it: from the sub-agent's line to the choices. */
async function question(): Promise<string[]> {
  const screen = await fx.term!.waitForScreen((s) => count(s, CHOICES) === 1, "the approval question");
  const lines = screen.split("\n");
  const first = lines.findIndex((l) => l.includes("asks:"));
  const choices = lines.findIndex((l) => l.includes(CHOICES));
  expect(first).toBeGreaterThan(-1);
  return lines.slice(first, choices + 1);
}

async function answer(text: string): Promise<void> {
  await fx.term!.type(text);
  await fx.term!.press("Enter");
}

describe.each(["graph", "loop"])("%s engine", (engine) => {
  test("yes: the sub-agent's command runs, and its report reaches the parent", async () => {
    await start(engine);
    expect(await question()).toEqual([
      "  ⎿ [general: Write out] asks:",
      "? Allow execute_command:",
      `  │ ${COMMAND}`,
      "  (runs a shell command (approval mode suggest))",
      "  [y]es / [n]o / [e]dit / [a]lways this session (`echo`) / [p]roject: save the same allow rules in this workspace's saved answers / or type feedback:",
    ]);
    // Nothing ran before the answer.
    expect(existsSync(path.join(ws(), "out.txt"))).toBe(false);
    await answer("y");
    expect(await paneExitCode(ws())).toBe("EXITED:0");
    expect(readFileSync(path.join(ws(), "out.txt"), "utf8")).toBe("sub\n");

    const sub = fx.server!.requests.filter((q) => conversationOf(q) === PROMPT);
    expect(sub.map(roles)).toEqual([
      ["system", "user"],
      ["system", "user", "assistant", "tool"],
    ]);
    expect(last(sub[1]!)).toMatchObject({ role: "tool", content: "Exit code: 0\n(no output)" });
    const parent = fx.server!.requests.filter((q) => conversationOf(q) === REQUEST);
    expect(parent.map(roles)).toEqual([
      ["system", "user"],
      ["system", "user", "assistant", "tool"],
    ]);
    expect(last(parent[1]!)).toMatchObject({ role: "tool", content: "Sub-agent done." });
    const screen = await fx.term!.screen();
    expect(screen).toContain("  ⎿ [general: Write out] ? execute_command: approved");
    expect(screen).toContain("  ⎿ [general: Write out] report: Sub-agent done.");
  });

  test("no: the command does not run, the sub-agent is told and goes on, and the parent gets its report", async () => {
    await start(engine);
    expect((await question()).slice(0, 3)).toEqual([
      "  ⎿ [general: Write out] asks:",
      "? Allow execute_command:",
      `  │ ${COMMAND}`,
    ]);
    await answer("n");
    expect(await paneExitCode(ws())).toBe("EXITED:0");
    expect(existsSync(path.join(ws(), "out.txt"))).toBe(false);

    const sub = fx.server!.requests.filter((q) => conversationOf(q) === PROMPT);
    expect(sub.map(roles)).toEqual([
      ["system", "user"],
      ["system", "user", "assistant", "tool"],
    ]);
    expect(last(sub[1]!)).toMatchObject({
      role: "tool",
      content:
        "This execute_command call was not run, because the user declined it. Do something else or ask the user.",
    });
    const parent = fx.server!.requests.filter((q) => conversationOf(q) === REQUEST);
    expect(parent).toHaveLength(2);
    expect(last(parent[1]!)).toMatchObject({ role: "tool", content: "Sub-agent done." });
    expect(await fx.term!.screen()).toContain("  ⎿ [general: Write out] ? execute_command: declined, not run");
  });
});
