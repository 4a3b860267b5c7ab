import { execFile } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { expect, jest, test } from "@jest/globals";
import { baseEnv } from "./helpers/cli.js";
import { startOpenAIServer, type ScriptStep } from "./helpers/openai-server.js";
import { count, createTmux, paneExitCode, startCliInPane, TMUX } from "./helpers/tmux.js";
import { usePaneFixture } from "./helpers/pane-fixture.js";
import { refusedEditNote } from "../src/policy/edit-call.js";
import { editNote } from "../src/guard/results.js";

/**
 * Issue 32 item 4 on a real terminal (tmux) against the scripted provider: [e]dit at the
 * approval question, on the prompt line and in $EDITOR; the edited call is judged again; the
 * model's next request says what ran.
 */

jest.setTimeout(180_000);

const fx = usePaneFixture((dir) => mkdirSync(path.join(dir, "ws")));

const ws = () => path.join(fx.tmp.dir, "ws");
const QUESTION = "[y]es / [n]o / [e]dit";

/** A one-shot run in suggest mode on a terminal; `editor` is $EDITOR (none: edited on the prompt line). */
async function start(script: ScriptStep[], editor = "", extra: string[] = []): Promise<void> {
  fx.server = await startOpenAIServer(script);
  fx.term = createTmux(
    baseEnv({
      OPENAI_BASE_URL: fx.server.url,
      OPENAI_API_KEY: "test",
      MINI_CURSOR_MAX_RETRIES: "0",
      EDITOR: editor,
      VISUAL: "",
    }),
  );
  await startCliInPane(fx.term, ws(), ["--approval", "suggest", ...extra, "do it"], { oneProcess: true });
  await fx.term.waitForScreen((s) => count(s, QUESTION) === 1, "the approval question");
}

async function answer(text: string): Promise<void> {
  await fx.term!.type(text);
  await fx.term!.press("Enter");
}

/** The tool message the model got in its second request. */
function secondToolMessage(): string {
  const tool = fx.server!.requests[1]!.messages.find((m) => m.role === "tool");
  return String(tool?.content);
}

const commandCall = (command: string): ScriptStep => ({ toolCalls: [{ name: "execute_command", args: { command } }] });

test("a command edited on the prompt line runs as edited, and the model is told what ran", async () => {
  await start([commandCall("echo model > out.txt && cat out.txt"), { content: "Done." }]);
  await answer("e");
  await fx.term!.waitForScreen(/edit command› echo model > out\.txt && cat out\.txt$/m, "the command, prefilled");
  await fx.term!.press("C-u");
  await answer("echo person > out.txt && cat out.txt");
  expect(await paneExitCode(ws())).toBe("EXITED:0");
  expect(readFileSync(path.join(ws(), "out.txt"), "utf8")).toBe("person\n");
  expect(secondToolMessage()).toBe(
    `${editNote("execute_command", { command: "echo person > out.txt && cat out.txt" })}\nExit code: 0\nperson`,
  );
  // The model's own call is what the conversation keeps.
  const ai = fx.server!.requests[1]!.messages.find((m) => m.role === "assistant") as {
    tool_calls?: Array<{ function: { arguments: string } }>;
  };
  expect(JSON.parse(ai.tool_calls![0]!.function.arguments)).toEqual({ command: "echo model > out.txt && cat out.txt" });
  const screen = await fx.term!.screen();
  expect(screen).toContain("? execute_command: edited: echo person > out.txt && cat out.txt");
  expect(screen).toContain("✓ execute_command edited by you,");
});

test("$EDITOR: a script that rewrites the file edits the command (loop engine)", async () => {
  const editor = path.join(fx.tmp.dir, "fake-editor.sh");
  writeFileSync(editor, `#!/bin/sh\nsed -i 's/model/from-editor/' "$1"\n`);
  chmodSync(editor, 0o755);
  await start([commandCall("echo model > out.txt && cat out.txt"), { content: "Done." }], editor, ["--engine", "loop"]);
  await answer("e");
  expect(await paneExitCode(ws())).toBe("EXITED:0");
  expect(readFileSync(path.join(ws(), "out.txt"), "utf8")).toBe("from-editor\n");
  expect(secondToolMessage()).toBe(
    `${editNote("execute_command", { command: "echo from-editor > out.txt && cat out.txt" })}\nExit code: 0\nfrom-editor`,
  );
});

test("an edit that makes the command dangerous asks again, showing the edited command", async () => {
  const victim = path.join(fx.tmp.dir, "victim");
  mkdirSync(victim);
  writeFileSync(path.join(victim, "keep.txt"), "keep\n");
  await start([commandCall("echo safe > safe.txt"), { content: "Done." }]);
  await answer("e");
  await fx.term!.waitForScreen(/edit command› echo safe > safe\.txt$/m, "the command, prefilled");
  await fx.term!.press("C-u");
  await answer(`rm -rf ${victim}`);
  const screen = await fx.term!.waitForScreen((s) => count(s, QUESTION) === 2, "the question about the edited call");
  expect(screen).toContain(`? Allow execute_command, as you edited it:\n  │ rm -rf ${victim}`);
  expect(screen).toContain("This call asks every time; it cannot be allowed for later.");
  await answer("n");
  // Nothing the run asked for ran: "not done" (exit code 4).
  expect(await paneExitCode(ws())).toBe("EXITED:4");
  expect(readFileSync(path.join(victim, "keep.txt"), "utf8")).toBe("keep\n");
  expect(existsSync(path.join(ws(), "safe.txt"))).toBe(false);
  expect(secondToolMessage()).toBe(
    "This execute_command call was not run, because the user declined it. " +
      `It needed approval because: dangerous command: rm deletes ${victim} (outside the workspace). ` +
      "Do something else or ask the user.",
  );
});

test("write_file: an edit that is not JSON is reported and the question asked again; yes then runs the model's call", async () => {
  await start([
    { toolCalls: [{ name: "write_file", args: { filePath: "w.txt", content: "model\n" } }] },
    { content: "Done." },
  ]);
  await answer("e");
  await fx.term!.waitForScreen(
    /edit arguments \(JSON\)› \{"filePath":"w\.txt","content":"model\\n"\}$/m,
    "the JSON, prefilled",
  );
  await fx.term!.press("C-u");
  await answer('{"filePath": "w.txt",');
  const screen = await fx.term!.waitForScreen((s) => count(s, QUESTION) === 2, "the question again");
  let parseError = "";
  try {
    JSON.parse('{"filePath": "w.txt",');
  } catch (err) {
    parseError = (err as Error).message;
  }
  expect(screen).toContain(`  The edit is not valid JSON (${parseError}); nothing ran.`);
  expect(existsSync(path.join(ws(), "w.txt"))).toBe(false);
  await answer("y");
  expect(await paneExitCode(ws())).toBe("EXITED:0");
  expect(readFileSync(path.join(ws(), "w.txt"), "utf8")).toBe("model\n");
});

test("an inline edit that a project deny rule covers is refused with the rule's words; nothing runs", async () => {
  writeFileSync(
    path.join(ws(), "mini-cursor.config.json"),
    JSON.stringify({ commands: { deny: [{ command: "curl", reason: "no network from this project" }] } }),
  );
  await start([commandCall("echo model > out.txt"), { content: "Done." }]);
  await answer("e");
  await fx.term!.waitForScreen(/edit command› echo model > out\.txt$/m, "the command, prefilled");
  await fx.term!.press("C-u");
  const edited = "curl -o got.txt http://127.0.0.1:9/x; echo ran > ran.txt";
  await answer(edited);
  // Refused unasked: no second question, "not done" (exit code 4).
  expect(await paneExitCode(ws())).toBe("EXITED:4");
  const refusal =
    "Refused: this execute_command call was not run, because the project rules (mini-cursor.config.json) deny `curl`: " +
    "no network from this project (it matches `curl -o got.txt http://127.0.0.1:9/x`). " +
    "Do not try to get around the rule; do something else or ask the user.";
  expect(secondToolMessage()).toBe(`${refusedEditNote("execute_command", { command: edited })}\n${refusal}`);
  for (const file of ["out.txt", "got.txt", "ran.txt"]) expect(existsSync(path.join(ws(), file))).toBe(false);
  const screen = await fx.term!.screen();
  expect(count(screen, QUESTION)).toBe(1);
  expect(screen).toContain(`? execute_command: edited: ${edited}`);
  // The trace shows the result's first lines, cut at the terminal's width.
  expect(screen).toContain(`\n  ✗ execute_command not run, 2 lines,`);
  expect(screen).toContain(`\n    ${refusal.slice(0, 120)}`);
});

/** Runs a tmux command on the test's terminal server. */
async function tmuxCommand(...args: string[]): Promise<string> {
  return (await promisify(execFile)(TMUX, ["-L", fx.term!.socket, ...args])).stdout;
}

test("issue 42.4: [e]dit of a command with a carriage return, a clipboard write and a clear screen runs nothing and types nothing", async () => {
  const command = "touch before-cr\rtouch after-cr \x1b]52;c;cHduZWQ=\x07\x1b[2J\x1b[3J\u200b";
  fx.server = await startOpenAIServer([commandCall(command), { content: "Done." }]);
  fx.term = createTmux(baseEnv({ OPENAI_BASE_URL: fx.server.url, OPENAI_API_KEY: "test", EDITOR: "", VISUAL: "" }));
  await startCliInPane(fx.term, ws(), ["--approval", "suggest", "do it"], { oneProcess: true });
  // tmux keeps what an OSC 52 sets as a paste buffer only with set-clipboard on.
  await tmuxCommand("set-option", "-s", "set-clipboard", "on");
  const shown = "  │ touch before-cr^Mtouch after-cr ^[]52;c;cHduZWQ=^G^[[2J^[[3J<U+200B>";
  await fx.term.waitForScreen((s) => count(s, QUESTION) === 1 && s.includes(shown), "the question, neutralised");
  await answer("e");
  const screen = await fx.term.waitForScreen((s) => count(s, QUESTION) === 2, "the question again");
  expect(screen).toContain(
    "  This call has characters the terminal would act on, or a secret, that are shown masked above: set $VISUAL or $EDITOR to edit it in your editor.",
  );
  expect(screen).not.toContain("edit command›");
  // The question is still on the screen above the prompt asked again: nothing cleared it.
  expect(screen).toContain(`? Allow execute_command:\n${shown}\n`);
  await answer("n");
  expect(await paneExitCode(ws())).toBe("EXITED:4");
  for (const file of ["before-cr", "after-cr"]) expect(existsSync(path.join(ws(), file))).toBe(false);
  expect(secondToolMessage()).toMatch(/^This execute_command call was not run, because the user declined it\./);
  expect(await tmuxCommand("list-buffers")).toBe("");
});

test("issue 42.4: [e]dit of a call whose JSON has C1 and format characters puts them on the prompt line escaped", async () => {
  await start([
    { toolCalls: [{ name: "write_file", args: { filePath: "w.txt", content: "a\u009b2J\u202eb\u2028c" } }] },
    { content: "Done." },
  ]);
  await answer("e");
  await fx.term!.waitForScreen(
    /edit arguments \(JSON\)› \{"filePath":"w\.txt","content":"a\\u009b2J\\u202eb\\u2028c"\}$/m,
    "the JSON, prefilled with the characters escaped",
  );
  // Enter on it unchanged: no change, the question again; yes then writes the model's bytes.
  await fx.term!.press("Enter");
  await fx.term!.waitForScreen((s) => count(s, QUESTION) === 2, "the question again");
  expect(await fx.term!.screen()).toContain("  No change made.");
  await answer("y");
  expect(await paneExitCode(ws())).toBe("EXITED:0");
  expect(readFileSync(path.join(ws(), "w.txt"), "utf8")).toBe("a\u009b2J\u202eb\u2028c");
});
