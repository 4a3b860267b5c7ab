import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, expect, jest, test } from "@jest/globals";
import { baseEnv } from "./helpers/cli.js";
import { startOpenAIServer, type OpenAIServer } from "./helpers/openai-server.js";
import { useWorkspaceAndHome } from "./helpers/server-home.js";
import {
  atPrompt,
  count,
  createTmux,
  paneExitCode,
  requireTmux,
  startCliInPane,
  type TmuxTerminal,
} from "./helpers/tmux.js";

/**
 * A Claude Code user's commands at the interactive prompt on a real terminal (tmux) with the
 * scripted server (issue 43 item 4): Tab completes slash commands and lists them with their
 * descriptions; a `.claude/commands` file asks for trust at first use; its `` !`cmd` `` asks as a
 * model's command does in suggest mode, and declined it runs nothing and sends nothing.
 */

jest.setTimeout(180_000);

let term: TmuxTerminal | undefined;
let server: OpenAIServer | undefined;
beforeAll(() => requireTmux());
const dirs = useWorkspaceAndHome(async () => {
  await term?.kill();
  await server?.close();
  term = server = undefined;
});

const QUESTION = "[y]es / [n]o / [e]dit";

async function open(args: string[]): Promise<TmuxTerminal> {
  server = await startOpenAIServer([{ content: "First answer." }, { content: "Second answer." }]);
  term = createTmux(
    baseEnv({
      HOME: dirs.home.dir,
      XDG_CONFIG_HOME: dirs.home.dir,
      CLAUDE_CONFIG_DIR: "",
      OPENAI_BASE_URL: server.url,
      OPENAI_API_KEY: "sk-test",
      MINI_CURSOR_TRUST_FILE: path.join(dirs.home.dir, "trust.json"),
    }),
  );
  await startCliInPane(term, dirs.ws.dir, ["--sandbox", "off", ...args]);
  await term.waitForScreen(atPrompt, "the prompt", 60_000);
  return term;
}

function command(relative: string, text: string): void {
  const file = path.join(dirs.ws.dir, ".claude", "commands", relative);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, text);
}

test("Tab completes a slash command, and lists the ones that match with their descriptions", async () => {
  command("frontend/component.md", "---\ndescription: Scaffold a UI component\n---\nMake $1.\n");
  command("frontend/page.md", "---\ndescription: Scaffold a page\n---\nMake a page.\n");
  mkdirSync(path.join(dirs.home.dir, ".claude", "commands"), { recursive: true });
  writeFileSync(
    path.join(dirs.home.dir, ".claude", "commands", "standup.md"),
    "---\ndescription: My standup\n---\nS\n",
  );
  const t = await open([]);
  await t.type("/st");
  await t.press("Tab");
  await t.waitForScreen(/› \/standup$/m, "/standup completed");
  await t.press("C-u");
  // Two match /fr: completed as far as they agree, then listed with their descriptions.
  await t.type("/fr");
  await t.press("Tab");
  await t.waitForScreen(/› \/frontend:$/m, "/frontend: completed");
  await t.press("Tab");
  const listed = await t.waitForScreen((s) => s.includes("Scaffold a page"), "the list");
  expect(listed).toMatch(
    /\n {2}\/frontend:component {2}Scaffold a UI component \[project\]\n {2}\/frontend:page {7}Scaffold a page \[project\]\n› \/frontend:$/,
  );
  await t.press("C-u");
  // Built-in ones too.
  await t.type("/he");
  await t.press("Tab");
  await t.waitForScreen(/› \/help$/m, "/help completed");
  await t.press("C-u");
  await t.type("/exit");
  await t.press("Enter");
  expect(await paneExitCode(dirs.ws.dir)).toBe("EXITED:0");
  expect(server!.requests).toHaveLength(0);
});

test("a .claude command asks for trust first; its !`cmd` asks in suggest mode: declined, nothing runs or is sent", async () => {
  command("mk.md", "---\ndescription: Make a file\n---\nMade: !`touch made.txt && echo made-it`\n");
  const t = await open(["--approval", "suggest"]);
  await t.type("/mk");
  await t.press("Enter");
  await t.waitForScreen((s) => s.includes("Trust this file's current content?"), "the trust question");
  expect(await t.screen()).toContain("/mk is a project command (.claude/commands/mk.md)");
  await t.type("y");
  await t.press("Enter");
  await t.waitForScreen((s) => count(s, QUESTION) === 1, "the command's approval question");
  expect(await t.screen()).toContain("touch made.txt && echo made-it");
  await t.type("n");
  await t.press("Enter");
  const declined = await t.waitForScreen(
    (s) => s.includes("/mk was not sent: its command `touch made.txt && echo made-it` did not run") && atPrompt(s),
    "the refusal",
  );
  expect(declined).not.toContain("First answer.");
  expect(existsSync(path.join(dirs.ws.dir, "made.txt"))).toBe(false);
  expect(server!.requests).toHaveLength(0);

  // Trusted now: asked about the command only; approved, it runs and its output is in the request.
  await t.type("/mk");
  await t.press("Enter");
  await t.waitForScreen((s) => count(s, QUESTION) === 2, "the second approval question");
  expect(count(await t.screen(), "Trust this file's current content?")).toBe(1);
  await t.type("y");
  await t.press("Enter");
  await t.waitForScreen((s) => s.includes("First answer.") && atPrompt(s), "the model's answer");
  expect(existsSync(path.join(dirs.ws.dir, "made.txt"))).toBe(true);
  const sent = server!.requests[0]!.messages.filter((m) => m.role === "user").map((m) => String(m.content));
  expect(sent).toHaveLength(1);
  expect(sent[0]).toMatch(/^Made: [\s\S]*made-it/);
  await t.type("/exit");
  await t.press("Enter");
  expect(await paneExitCode(dirs.ws.dir)).toBe("EXITED:0");
});
