import { readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, jest, test } from "@jest/globals";
import { baseEnv } from "./helpers/cli.js";
import { atPrompt, count, createTmux, paneExitCode, startCliInPane, type TmuxTerminal } from "./helpers/tmux.js";
import { usePaneFixture } from "./helpers/pane-fixture.js";
import { writeHello } from "./helpers/session-fixture.js";
import { promptHistoryFile } from "../src/app/prompt-history.js";

/**
 * Issue 44 item 6 on a real pseudo-terminal (tmux): Up at a new session's prompt brings back what
 * was typed in an earlier one, as in Claude Code, Codex and Gemini CLI. The history is a file of
 * mode 600 in the person's state folder, with known secrets masked.
 */

jest.setTimeout(120_000);

const fx = usePaneFixture(writeHello);
let term: TmuxTerminal;

async function startSession(env: NodeJS.ProcessEnv = {}): Promise<void> {
  await fx.term?.kill();
  term = fx.term = createTmux(baseEnv(env));
  rmSync(paneExitCodeFile(), { force: true });
  await startCliInPane(term, fx.tmp.dir, [], { oneProcess: true });
  await term.waitForScreen(atPrompt, "the first prompt");
}
const paneExitCodeFile = () => `${fx.tmp.dir}/exit-code`;

async function enter(line: string): Promise<void> {
  await term.type(line);
  await term.press("Enter");
}

describe("the prompt's history survives the session", () => {
  test("Up in the next session brings back the earlier lines, newest first; the file is private and masks secrets", async () => {
    rmSync(promptHistoryFile(), { force: true });
    // A secret of the workspace's .env, typed at the prompt, is masked in the file.
    writeFileSync(path.join(fx.tmp.dir, ".env"), "MY_TOKEN=tok-5up3r53cr3t-value\n");
    await startSession();
    await enter("/model tok-5up3r53cr3t-value");
    await term.waitForScreen(/This session uses/, "the model note");
    await enter("read hello.txt");
    await term.waitForScreen((s) => atPrompt(s) && s.includes("✔ Done:"), "the first turn's end");
    await enter("/exit");
    expect(await paneExitCode(fx.tmp.dir)).toBe("EXITED:0");
    expect(readFileSync(promptHistoryFile(), "utf8")).toBe('"/model [redacted]"\n"read hello.txt"\n"/exit"\n');
    expect(statSync(promptHistoryFile()).mode & 0o777).toBe(0o600);

    await startSession();
    await term.press("Up");
    await term.waitForScreen((s) => s.trimEnd().endsWith("› /exit"), "the last line back");
    await term.press("Up");
    await term.waitForScreen((s) => s.trimEnd().endsWith("› read hello.txt"), "the line before it");
    await term.press("Enter");
    await term.waitForScreen((s) => atPrompt(s) && count(s, "✔ Done:") === 1, "the recalled request's turn");
    expect(await term.screen()).toContain("hello from the workspace");
    await term.press("C-d");
    expect(await paneExitCode(fx.tmp.dir)).toBe("EXITED:0");
  });
});
