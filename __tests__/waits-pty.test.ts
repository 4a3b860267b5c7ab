import { existsSync } from "node:fs";
import path from "node:path";
import { describe, expect, jest, test } from "@jest/globals";
import { baseEnv } from "./helpers/cli.js";
import { startOpenAIServer } from "./helpers/openai-server.js";
import {
  atPrompt,
  count,
  createTmux,
  longCommand,
  paneExitCode,
  processesWith,
  startCliInPane,
  waitAllDead,
  waitForSleep,
  waitForValue,
  waitNoneLeft,
  type TmuxTerminal,
} from "./helpers/tmux.js";
import { usePaneFixture } from "./helpers/pane-fixture.js";
import { writeHello } from "./helpers/session-fixture.js";

/**
 * Issue 31 item 1 and issue 26 item 6 on a real pseudo-terminal (tmux): a pasted block reaches
 * the model whole, Ctrl-C twice during a turn leaves, and SIGTERM or SIGHUP end the run while
 * the approval question waits for a key. The CLI runs as one Node process (tsx as a loader), so
 * a signal goes to the process that shows the question.
 */

jest.setTimeout(120_000);

const fx = usePaneFixture(writeHello);
let term: TmuxTerminal;

/** Starts the CLI in a pane, as one Node process; `env` adds to the test's clean environment. */
async function startCli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<void> {
  term = fx.term = createTmux(baseEnv(env));
  await startCliInPane(term, fx.tmp.dir, args, { oneProcess: true });
}

const exitCode = (timeoutMs?: number) => paneExitCode(fx.tmp.dir, timeoutMs);

/** The CLI's own process (its command line names the workspace). */
async function cliPid(): Promise<number> {
  return (
    await waitForValue(() =>
      processesWith(fx.tmp.dir).find((p) => p.argv.some((a) => a.endsWith("src/cli.ts")) && !p.argv.includes("-c")),
    )
  ).pid;
}

describe("issue 31: a session on a terminal", () => {
  test("a pasted block of several lines reaches the model whole, as one request", async () => {
    fx.server = await startOpenAIServer([{ content: "Read all three." }]);
    await startCli([], { OPENAI_BASE_URL: fx.server.url, OPENAI_API_KEY: "test", MINI_CURSOR_MAX_RETRIES: "0" });
    await term.waitForScreen(atPrompt, "the first prompt");
    await term.type("summarise: ");
    await term.paste("line one\nline two\nline three\n");
    await term.waitForScreen(/› summarise: \[pasted text #1: 3 lines\]/, "the paste's placeholder");
    await term.press("Enter");
    await term.waitForScreen((s) => atPrompt(s) && s.includes("✔ Done:"), "the turn's end");
    const users = fx.server.requests[0]!.messages.filter((m) => m.role === "user").map((m) => m.content);
    expect(users).toEqual(["summarise: line one\nline two\nline three"]);
    expect(fx.server.requests).toHaveLength(1);
    await term.press("C-d");
    expect(await exitCode()).toBe("EXITED:0");
  });

  test("Ctrl-C pressed twice (two separate presses) during a turn leaves with 130", async () => {
    await startCli(["--approval", "full-auto"]);
    await term.waitForScreen(atPrompt, "the first prompt");
    await term.type(`run \`${longCommand(fx.marker)}\``);
    await term.press("Enter");
    await waitForSleep(fx.marker);
    await term.press("C-c");
    await term.press("C-c");
    expect(await exitCode()).toBe("EXITED:130");
    await waitNoneLeft(fx.marker);
    expect(await term.screen()).not.toContain("press Ctrl-C again");
  });
});

describe("issue 26: SIGTERM and SIGHUP while the approval question waits for a key", () => {
  test("SIGTERM in a one-shot run: the run ends with 130 and the command is not run", async () => {
    await startCli(["run `echo hi > y.txt`"]);
    await term.waitForScreen(/\[y\]es \/ \[n\]o/, "the approval question");
    process.kill(await cliPid(), "SIGTERM");
    expect(await exitCode()).toBe("EXITED:130");
    expect(existsSync(path.join(fx.tmp.dir, "y.txt"))).toBe(false);
  });

  test("SIGHUP in an interactive session: the session ends and the command is not run", async () => {
    await startCli([]);
    await term.waitForScreen(atPrompt, "the first prompt");
    await term.type("run `echo hi > y.txt`");
    await term.press("Enter");
    await term.waitForScreen((s) => count(s, "[y]es / [n]o") === 1, "the approval question");
    const pid = await cliPid();
    process.kill(pid, "SIGHUP");
    await waitAllDead([pid], 30_000);
    expect(await exitCode()).toBe("EXITED:130");
    expect(existsSync(path.join(fx.tmp.dir, "y.txt"))).toBe(false);
  });
});
