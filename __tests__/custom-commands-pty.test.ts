import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, beforeEach, expect, jest, test } from "@jest/globals";
import { baseEnv } from "./helpers/cli.js";
import { useWorkspaceAndHome } from "./helpers/server-home.js";
import { atPrompt, createTmux, paneExitCode, requireTmux, startCliInPane, type TmuxTerminal } from "./helpers/tmux.js";

/**
 * Custom slash commands at the interactive prompt on a real terminal (tmux), with the embedded
 * offline model (no key): /help lists them with their descriptions, `/name args` runs the
 * template with the arguments put in, and a project's command asks for trust at first use.
 */

jest.setTimeout(120_000);

let term: TmuxTerminal;

beforeAll(() => requireTmux());
const dirs = useWorkspaceAndHome(() => term.kill());
beforeEach(() => {
  writeFileSync(path.join(dirs.ws.dir, "notes.txt"), "first note\n");
  writeFileSync(path.join(dirs.ws.dir, "todo.txt"), "buy milk\n");
  const mine = path.join(dirs.home.dir, "mini-cursor", "commands");
  mkdirSync(mine, { recursive: true });
  writeFileSync(
    path.join(mine, "peek.md"),
    "---\ndescription: Show a file to the model\nargument-hint: <file>\n---\nread $1\n",
  );
  writeFileSync(path.join(mine, "exit.md"), "Never used: /exit is built in.\n");
  const theirs = path.join(dirs.ws.dir, ".mini-cursor", "commands");
  mkdirSync(theirs, { recursive: true });
  writeFileSync(path.join(theirs, "todo.md"), "---\ndescription: Show the to-do list\n---\nread todo.txt\n");
  term = createTmux(
    baseEnv({
      HOME: dirs.home.dir,
      XDG_CONFIG_HOME: dirs.home.dir,
      MINI_CURSOR_TRUST_FILE: path.join(dirs.home.dir, "trust.json"),
    }),
  );
});

async function enter(line: string): Promise<void> {
  await term.type(line);
  await term.press("Enter");
}

test("/help lists custom commands; /peek with a quoted argument reads that file; a project command asks for trust first", async () => {
  await startCliInPane(term, dirs.ws.dir, ["--sandbox", "off"]);
  await term.waitForScreen(atPrompt, "the prompt", 60_000);
  await enter("/help");
  const help = await term.waitForScreen((s) => s.includes("Custom command files not used, or not in full:"), "/help");
  expect(help).toContain(
    "Custom commands (your folders, then the project's .mini-cursor/commands/ and .claude/commands/ once trusted",
  );
  expect(help).toMatch(/\n {2}\/peek <file> +Show a file to the model\n/);
  expect(help).toMatch(/\n {2}\/todo +Show the to-do list \[project\]\n/);
  expect(help).toContain(
    `${path.join(dirs.home.dir, "mini-cursor", "commands", "exit.md")} is not used: /exit is a built-in command, which wins.`,
  );

  await enter(`/peek 'notes.txt'`);
  const peeked = await term.waitForScreen((s) => s.includes("first note") && atPrompt(s), "the file read by /peek");
  expect(peeked).toContain("/peek: the prompt of");
  expect(peeked).toContain('→ read_file filePath="notes.txt"');

  await enter("/todo");
  await term.waitForScreen((s) => s.includes("Trust this file's current content?"), "the trust question");
  const asked = await term.screen();
  expect(asked).toContain("/todo is a project command (.mini-cursor/commands/todo.md)");
  expect(asked).toContain("  │ read todo.txt");
  await enter("y");
  const done = await term.waitForScreen((s) => s.includes("buy milk") && atPrompt(s), "the to-do list");
  expect(done).toContain("Trusted .mini-cursor/commands/todo.md");
  expect(JSON.parse(readFileSync(path.join(dirs.home.dir, "trust.json"), "utf8")).trusted).toEqual({
    [path.join(dirs.ws.dir, ".mini-cursor", "commands", "todo.md")]: expect.any(String),
  });

  await enter("/exit");
  expect(await paneExitCode(dirs.ws.dir)).toBe("EXITED:0");
  expect(existsSync(path.join(dirs.ws.dir, "todo.txt"))).toBe(true);
});
