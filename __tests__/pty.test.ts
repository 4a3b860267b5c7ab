import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, jest, test } from "@jest/globals";
import {
  atPrompt,
  count,
  createTmux,
  httpGet,
  killGroup,
  longCommand,
  paneExitCode,
  paneExitFile,
  serverCommand,
  startCliInPane,
  waitAllDead,
  waitForSleep,
  waitNoneLeft,
  waitRefused,
  type TmuxTerminal,
} from "./helpers/tmux.js";
import { usePaneFixture } from "./helpers/pane-fixture.js";
import { writeHello } from "./helpers/session-fixture.js";
import { stateDirOf } from "./helpers/state-dir.js";

/**
 * The CLI typed into by a person: a real pseudo-terminal (tmux), the offline model, no key.
 * The pane runs `tsx src/cli.ts ...; echo EXITED:$? > exit-code`, so the exit status is a file.
 */

jest.setTimeout(120_000);

const leftovers: number[] = [];
// Registered before the fixture, so the groups go before the workspace they may write in.
afterEach(() => {
  for (const pid of leftovers.splice(0)) killGroup(pid);
});

const fx = usePaneFixture(writeHello);
let term: TmuxTerminal;
beforeEach(() => {
  term = fx.term = createTmux();
});

const SANDBOXES: Array<[string, string[]]> = [
  ["default sandbox", []],
  ["--sandbox off", ["--sandbox", "off"]],
];

const exitFile = () => paneExitFile(fx.tmp.dir);
const startCli = (args: string[] = []) => startCliInPane(term, fx.tmp.dir, args);
const exitCode = (timeoutMs?: number) => paneExitCode(fx.tmp.dir, timeoutMs);

async function waitForPrompt(what: string, extra: (s: string) => boolean = () => true): Promise<string> {
  return term.waitForScreen((s) => atPrompt(s) && extra(s), what);
}

/** Types a line and presses Enter. */
async function enter(line: string): Promise<void> {
  await term.type(line);
  await term.press("Enter");
}

describe("an interactive session on a terminal", () => {
  test("Ctrl-C cancels a running command and the prompt returns; the session goes on; Ctrl-C twice at the prompt exits 0", async () => {
    await startCli();
    await waitForPrompt("the first prompt");

    await enter("read hello.txt");
    await waitForPrompt("the first turn's end", (s) => count(s, "✔ Done:") === 1);
    expect(await term.screen()).toContain("hello from the workspace");

    await enter("/approval full-auto");
    await term.waitForScreen(/Approval mode: full-auto\./, "the approval switch");

    await enter(`run \`${longCommand(fx.marker)}\``);
    await waitForSleep(fx.marker);

    await term.press("C-c");
    const screen = await waitForPrompt("the prompt after Ctrl-C", (s) =>
      s.includes("Turn cancelled; the conversation so far is kept."),
    );
    expect(screen).toContain("■ Interrupted: 1 step, 1 tool call");
    await waitNoneLeft(fx.marker);
    expect(screen).not.toMatch(/│ never/);
    expect(existsSync(exitFile())).toBe(false);

    // Still alive and answering: another turn on the same thread, and a slash command.
    await enter("read hello.txt");
    await waitForPrompt("the turn after the cancel", (s) => count(s, "✔ Done:") === 2);
    await enter("/ps");
    await waitForPrompt("/ps", (s) => s.includes("No background processes."));
    expect(existsSync(exitFile())).toBe(false);
    const threads = JSON.parse(readFileSync(path.join(stateDirOf(fx.tmp.dir), "threads.json"), "utf8")) as Array<{
      runs: number;
    }>;
    expect(threads).toHaveLength(1);
    expect(threads[0]!.runs).toBe(3);

    // At once, as a fast typist would: the Ctrl-C that cancelled the turn may be under a second ago.
    await term.press("C-c");
    await term.waitForScreen((s) => s.includes("(press Ctrl-C again to exit, or type /exit)"), "the exit hint");
    await term.press("C-c");
    expect(await exitCode()).toBe("EXITED:0");
  });

  test("issue 14: Ctrl-C clears a typed line; on an empty line it asks for a second press; the request shows once", async () => {
    await startCli();
    await waitForPrompt("the first prompt");
    await term.type("read nothing-yet.txt");
    await term.waitForScreen((s) => s.includes("› read nothing-yet.txt"), "the typed line");
    await term.press("C-c");
    // The dropped line stays visible, marked ^C; a fresh empty prompt follows; nothing ran.
    const cleared = await waitForPrompt("a fresh prompt after Ctrl-C", (s) => s.includes("› read nothing-yet.txt^C"));
    expect(cleared).not.toContain("(press Ctrl-C again to exit");
    expect(cleared).not.toContain("step 1");

    await term.press("C-c");
    await term.waitForScreen((s) => s.includes("(press Ctrl-C again to exit, or type /exit)"), "the exit hint");
    expect(existsSync(exitFile())).toBe(false);

    // The session is still there: a request, echoed once (the prompt line), not twice.
    await enter("read hello.txt");
    const done = await waitForPrompt("the turn's end", (s) => count(s, "✔ Done:") === 1);
    expect(count(done, "read hello.txt")).toBe(1);
    expect(done).not.toContain("❯ read hello.txt");

    await term.press("C-c");
    await term.waitForScreen(
      (s) => count(s, "(press Ctrl-C again to exit, or type /exit)") === 2,
      "the exit hint again",
    );
    await term.press("C-c");
    expect(await exitCode()).toBe("EXITED:0");
  });

  test("issue 14: after an approval the spinner and elapsed time show while the command runs", async () => {
    await startCli();
    await waitForPrompt("the first prompt");
    await enter(`run \`${longCommand(fx.marker)}\``);
    await term.waitForScreen(/\[y\]es \/ \[n\]o \/ \[e\]dit \/ \[a\]lways/, "the approval question");
    await enter("y");
    await waitForSleep(fx.marker);
    await term.waitForScreen(/running execute_command \d+\.\ds/, "the spinner after the answer");
    await term.press("C-c");
    await waitForPrompt("the prompt after Ctrl-C", (s) =>
      s.includes("Turn cancelled; the conversation so far is kept."),
    );
    await waitNoneLeft(fx.marker);
    await enter("/exit");
    expect(await exitCode()).toBe("EXITED:0");
  });

  test("an approval question appears inline: y runs the command, n declines it, Ctrl-C cancels the turn", async () => {
    await startCli();
    await waitForPrompt("the first prompt");

    await enter("run `echo hi > y.txt`");
    await term.waitForScreen(/\[y\]es \/ \[n\]o \/ \[e\]dit \/ \[a\]lways/, "the approval question");
    expect(await term.screen()).toMatch(/\? Allow execute_command:\s*\n  │ echo hi > y\.txt/);
    await enter("y");
    await waitForPrompt("the approved turn's end", (s) => count(s, "✔ Done:") === 1);
    expect(readFileSync(path.join(fx.tmp.dir, "y.txt"), "utf8")).toBe("hi\n");

    await enter("run `echo no > n.txt`");
    await term.waitForScreen((s) => count(s, "[y]es / [n]o / [e]dit / [a]lways") === 2, "the second question");
    await enter("n");
    const declined = await waitForPrompt("the declined turn's end", (s) => count(s, "■ Not done:") === 1);
    expect(declined).toContain("execute_command: declined, not run");
    expect(existsSync(path.join(fx.tmp.dir, "n.txt"))).toBe(false);

    await enter("run `echo c > c.txt`");
    await term.waitForScreen((s) => count(s, "[y]es / [n]o / [e]dit / [a]lways") === 3, "the third question");
    await term.press("C-c");
    const afterQuestion = await waitForPrompt("the prompt after Ctrl-C at the question", (s) =>
      s.includes("Turn cancelled; the conversation so far is kept."),
    );
    // What follows the question starts on a line of its own.
    const question = "or type feedback:";
    expect(
      afterQuestion
        .slice(afterQuestion.lastIndexOf(question) + question.length)
        .split("\n")[0]!
        .trim(),
    ).toBe("");
    expect(existsSync(path.join(fx.tmp.dir, "c.txt"))).toBe(false);
    expect(existsSync(exitFile())).toBe(false);

    await enter("/exit");
    expect(await exitCode()).toBe("EXITED:0");
  });

  test("the prompt keeps a history (Up recalls the last request), and Ctrl-D leaves with 0", async () => {
    await startCli();
    await waitForPrompt("the first prompt");
    await enter("read hello.txt");
    await waitForPrompt("the first turn's end", (s) => count(s, "✔ Done:") === 1);
    await term.press("Up");
    await term.waitForScreen((s) => s.split("\n").at(-1) === "› read hello.txt", "the recalled request");
    await term.press("Enter");
    await waitForPrompt(
      "the recalled turn's end",
      (s) => count(s, "✔ Done:") === 2 && count(s, "› read hello.txt") === 2,
    );
    await term.press("C-d");
    expect(await exitCode()).toBe("EXITED:0");
  });

  test("Ctrl-C twice within a second during a turn leaves with 130 and stops the command", async () => {
    await startCli(["--approval", "full-auto"]);
    await waitForPrompt("the first prompt");
    await enter(`run \`${longCommand(fx.marker)}\``);
    await waitForSleep(fx.marker);
    await term.press("C-c", "C-c");
    expect(await exitCode()).toBe("EXITED:130");
    await waitNoneLeft(fx.marker);
    const screen = await term.screen();
    expect(screen).toContain("Cancelling this turn…");
    // It left without showing the prompt again.
    const after = screen.slice(screen.indexOf("Cancelling this turn…"));
    expect(after.split("\n").filter((l) => l.trim() === "›")).toEqual([]);
  });

  // Bubblewrap (the default sandbox when it works) kills its commands when the CLI dies, which
  // would hide a CLI that leaves them behind; so without the sandbox too.
  test.each(SANDBOXES)(
    "a dev server stays up while the session is open and is stopped when the terminal closes (%s)",
    async (_name, sandboxArgs) => {
      await startCli(["--approval", "full-auto", ...sandboxArgs]);
      await waitForPrompt("the first prompt");
      await enter(`run \`${serverCommand(fx.marker)}\``);
      const screen = await waitForPrompt("the server turn's end", (s) =>
        /Running in the background: bg-1 http:\/\/127\.0\.0\.1:\d+\//.test(s),
      );
      const url = /Running in the background: bg-1 (http:\/\/127\.0\.0\.1:\d+\/)/.exec(screen)![1]!;
      const pid = Number(/as bg-1 \(pid (\d+)\)/.exec(screen)![1]);
      leftovers.push(pid);
      expect(await httpGet(url)).toEqual({ status: 200, body: "ok" });

      // Closing the terminal hangs up the session; the server must not outlive it.
      await term.kill();
      await waitAllDead([pid]);
      await waitNoneLeft(fx.marker);
      await waitRefused(url);
    },
  );
});

describe("a one-shot run on a terminal", () => {
  test("issue 14: a damaged state.sqlite is offered to be moved aside, and the run goes on", async () => {
    const state = stateDirOf(fx.tmp.dir);
    mkdirSync(state, { recursive: true });
    const db = path.join(state, "state.sqlite");
    writeFileSync(db, "not a database\n".repeat(100));
    await startCli(["list the files here"]);
    await term.waitForScreen(/go on with an empty one\? \[y\/N\]/, "the offer");
    expect(await term.screen()).toContain(`is not a readable SQLite database (file is not a database)`);
    await enter("y");
    expect(await exitCode()).toBe("EXITED:0");
    const screen = await term.screen();
    expect(screen).toContain(`Moved it to ${db}.damaged.`);
    expect(screen).toMatch(/✔ Done: 2 steps, 1 tool call/);
    expect(readFileSync(`${db}.damaged`, "utf8")).toBe("not a database\n".repeat(100));
  });

  test("keeps a dev server up until Ctrl-C, then stops it and exits 0", async () => {
    await startCli(["--approval", "full-auto", `run \`${serverCommand(fx.marker)}\``]);
    const screen = await term.waitForScreen(/Press Ctrl-C to stop them and exit\./, "the kept-up servers");
    const [, url] = /bg-1 {2}(http:\/\/127\.0\.0\.1:\d+\/)/.exec(screen)!;
    const pid = Number(/as bg-1 \(pid (\d+)\)/.exec(screen)![1]);
    leftovers.push(pid);
    expect(await httpGet(url!)).toEqual({ status: 200, body: "ok" });
    expect(existsSync(exitFile())).toBe(false);

    await term.press("C-c");
    expect(await exitCode()).toBe("EXITED:0");
    await waitAllDead([pid]);
    await waitNoneLeft(fx.marker);
    expect(await term.screen()).toMatch(/Stopped background process bg-1 \(.*\) at http:\/\/127\.0\.0\.1:\d+\/\./);
  });

  test.each(SANDBOXES)("Ctrl-C in the middle of a command exits 130 and stops it (%s)", async (_name, sandboxArgs) => {
    await startCli(["--approval", "full-auto", ...sandboxArgs, `run \`${longCommand(fx.marker)}\``]);
    await waitForSleep(fx.marker);
    await term.press("C-c");
    expect(await exitCode()).toBe("EXITED:130");
    await waitNoneLeft(fx.marker);
    const screen = await term.screen();
    expect(screen).toContain("Ctrl-C: stopping the run…");
    expect(screen).toContain("■ Interrupted: 1 step, 1 tool call");
    expect(screen).not.toMatch(/│ never/);
  });
});
