import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, jest, test } from "@jest/globals";
import { baseEnv } from "./helpers/cli.js";
import { startOpenAIServer } from "./helpers/openai-server.js";
import { createTmux, NARROW_PANE, paneExitCode, startCliInPane, type TmuxTerminal } from "./helpers/tmux.js";
import { usePaneFixture } from "./helpers/pane-fixture.js";
import { writeHello } from "./helpers/session-fixture.js";

/**
 * Issue 44 item 5 on a real pseudo-terminal (tmux) 80 columns wide, the width terminals open at:
 * the spinner's line never wraps (a wrapped line leaves a copy behind at every redraw: about 600
 * lines for a 60 s wait), and the approval and plan questions wrap at words, between choices
 * where they can, never in the middle of a word and never by the terminal.
 */

jest.setTimeout(120_000);

const fx = usePaneFixture(writeHello);
let term: TmuxTerminal;

async function startCli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<void> {
  term = fx.term = createTmux(baseEnv(env));
  await startCliInPane(term, fx.tmp.dir, args, { oneProcess: true, size: NARROW_PANE });
}

const exitCode = () => paneExitCode(fx.tmp.dir);
const rowsWith = (screen: string, text: string) => screen.split("\n").filter((l) => l.includes(text));

/**
 * The rows from the last line starting with `first` to the end, as the screen shows them and as
 * tmux joins the rows it wrapped itself: equal when nothing was wrapped by the terminal.
 */
async function lastBlock(first: string): Promise<{ rows: string[]; joined: string[] }> {
  const from = (s: string) => {
    const lines = s.split("\n");
    const at = lines.map((l) => l.startsWith(first)).lastIndexOf(true);
    return lines.slice(at);
  };
  return { rows: from(await term.screen({ joined: false })), joined: from(await term.screen()) };
}

/** The words of a text, as a person reads them. */
const words = (text: string) => text.split(/\s+/).filter(Boolean);

describe("80 columns", () => {
  test("the spinner of a slow provider keeps to one row, and leaves none behind", async () => {
    fx.server = await startOpenAIServer([{ content: "Hello after a while.", delayMs: 4_000 }]);
    await startCli(["say hello"], {
      OPENAI_BASE_URL: fx.server.url,
      OPENAI_API_KEY: "test",
      MINI_CURSOR_MAX_RETRIES: "0",
      MINI_CURSOR_WAIT_NOTICE_MS: "300",
    });
    const during = await term.waitForScreen(/waiting for the model provider/, "the wait on the spinner");
    // Let it redraw for a while: every frame so far is on the screen if any wrapped.
    await term.waitForScreen(/waiting for the model provider[^\n]* [2-9]\.\ds/, "two seconds of spinner");
    const rows = rowsWith(await term.screen({ joined: false }), "waiting for the model");
    expect(rows).toHaveLength(1);
    expect(rows[0]!.length).toBeLessThanOrEqual(NARROW_PANE.columns - 1);
    expect(rows[0]).toMatch(/^⠋|^⠙|^⠹|^⠸|^⠼|^⠴|^⠦|^⠧|^⠇|^⠏/);
    expect(rows[0]).toMatch(/… \d+\.\ds$/);
    expect(during).toContain("❯ say hello");
    await term.waitForScreen(/✔ Done:/, "the answer");
    expect(await exitCode()).toBe("EXITED:0");
    const after = await term.screen({ joined: false });
    expect(rowsWith(after, "waiting for the model")).toEqual([]);
    expect(after).toContain("Hello after a while.");
  });

  test("the approval question wraps at words, between choices, and the terminal wraps nothing", async () => {
    await startCli(["run `echo hi > y.txt`"]);
    await term.waitForScreen((s) => s.endsWith("or type feedback:"), "the approval question");
    const { rows, joined } = await lastBlock("? Allow execute_command");
    expect(rows).toEqual(joined);
    expect(rows.every((r) => r.length <= NARROW_PANE.columns - 1)).toBe(true);
    expect(rows.slice(0, 3)).toEqual([
      "? Allow execute_command:",
      "  │ echo hi > y.txt",
      "  (runs a shell command (approval mode auto-edit))",
    ]);
    // Every word whole, in order: the choices as one line would have them.
    expect(words(rows.slice(3).join(" "))).toEqual(
      words(
        "[y]es / [n]o / [e]dit / [a]lways this session (`echo`) / [p]roject: save the same allow rules in this workspace's saved answers / or type feedback:",
      ),
    );
    expect(rows.at(-1)!.trim().endsWith("or type feedback:")).toBe(true);
    await term.type("y");
    await term.press("Enter");
    expect(await exitCode()).toBe("EXITED:0");
    expect(readFileSync(path.join(fx.tmp.dir, "y.txt"), "utf8")).toBe("hi\n");
  });

  test("the plan question wraps the same way, and Enter still means not now", async () => {
    await startCli(["--approval", "plan", "read hello.txt"]);
    await term.waitForScreen((s) => s.endsWith("Enter: not now:"), "the plan question");
    const { rows, joined } = await lastBlock("? The plan is ready");
    expect(rows).toEqual(joined);
    expect(rows.every((r) => r.length <= NARROW_PANE.columns - 1)).toBe(true);
    expect(words(rows.slice(1).join(" "))).toEqual(
      words(
        "[a]ccept and carry it out (auto-edit) / accept in [s]uggest, auto-[e]dit or [f]ull-auto / or type what to change / Enter: not now:",
      ),
    );
    await term.press("Enter");
    expect(await exitCode()).toBe("EXITED:0");
    expect(existsSync(path.join(fx.tmp.dir, "y.txt"))).toBe(false);
  });
});
