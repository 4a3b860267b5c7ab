import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { jest } from "@jest/globals";
import { baseEnv, runCli } from "./helpers/cli.js";
import { type ChatRequest, startOpenAIServer, type OpenAIServer } from "./helpers/openai-server.js";
import { makeTempDir } from "./helpers/tmp.js";

/**
 * Issue 44 item 6 through the real CLI: habits from Claude Code, Codex and Gemini CLI either work
 * or are answered with mini-cursor's equivalent. Flags (-p, --resume, --output-format json …),
 * session commands (/clear, /model, /compact in both engines, written to the thread, and the
 * others' names), `@file` mentions and `!command`.
 */

jest.setTimeout(180_000);

let tmp: ReturnType<typeof makeTempDir>;
let server: OpenAIServer | undefined;
beforeEach(() => {
  tmp = makeTempDir();
  writeFileSync(path.join(tmp.dir, "hello.txt"), "hello from the workspace\n");
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  tmp.cleanup();
});

const cli = (args: string[], options: { input?: string; env?: NodeJS.ProcessEnv } = {}) =>
  runCli(["--workspace", tmp.dir, ...args], { timeoutMs: 120_000, ...options });

const userTexts = (request: ChatRequest) =>
  request.messages
    .filter((m) => m.role === "user")
    .map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content)));

describe("flags from other agents name ours", () => {
  test.each([
    [
      ["-p", "explain"],
      '-p is from Claude Code, Gemini CLI and Codex (their one-shot modes). In mini-cursor: a task given as an argument already runs once, prints the trace and the answer, and exits: mini-cursor "<task>" (--json for JSON Lines events; text piped in is added to the task).',
    ],
    [
      ["--prompt=explain"],
      '--prompt is from Claude Code, Gemini CLI and Codex (their one-shot modes). In mini-cursor: a task given as an argument already runs once, prints the trace and the answer, and exits: mini-cursor "<task>" (--json for JSON Lines events; text piped in is added to the task).',
    ],
    [
      ["-o", "json", "hi"],
      "-o is from Claude Code and Gemini CLI. In mini-cursor: --json prints one JSON object per event (JSON Lines) on stdout; the last one, run_end, has the outcome and the usage.",
    ],
    [
      ["-y", "hi"],
      "-y is from Claude Code, Codex and Gemini CLI. In mini-cursor: --approval full-auto runs every command without asking, except dangerous ones; --sandbox off runs them outside bubblewrap.",
    ],
    [
      ["--include-directories", "../lib", "hi"],
      "--include-directories is from Claude Code and Gemini CLI. In mini-cursor: a run works in one folder, its workspace: pass --workspace <dir> with a folder that holds all you need.",
    ],
    [
      ["--session-id", "abc", "hi"],
      '--session-id is from Claude Code. In mini-cursor: --thread abc "<task>" runs on the thread of that id (a new one if there is none).',
    ],
    [
      ["--resume", "20261129-a1b2c3"],
      '--resume is from Claude Code and Codex. In mini-cursor: --thread 20261129-a1b2c3 "<task>" goes on with that thread (--threads lists them).',
    ],
    [
      ["--output-format", "json", "hi"],
      "--output-format is from Claude Code and Gemini CLI. In mini-cursor: --json prints one JSON object per event (JSON Lines) on stdout; the last one, run_end, has the outcome and the usage.",
    ],
    [
      ["--dangerously-skip-permissions", "hi"],
      "--dangerously-skip-permissions is from Claude Code, Codex and Gemini CLI. In mini-cursor: --approval full-auto runs every command without asking, except dangerous ones; --sandbox off runs them outside bubblewrap.",
    ],
    [
      ["--max-turns=5", "hi"],
      "--max-turns is from Claude Code. In mini-cursor: --max-steps 5, the model turns per task.",
    ],
  ])("%j", async (args, hint) => {
    const r = await cli(args);
    expect(r.code).toBe(2);
    const lines = r.stderr.trim().split("\n");
    expect(lines[0]).toMatch(/^error: unknown option '/);
    expect(lines.slice(1)).toEqual([hint, "Run with --help to see the options."]);
  });

  test("Codex's exec subcommand names the one-shot run instead of sending `exec …` as the task", async () => {
    const r = await cli(["exec", "list the files here"]);
    expect([r.code, r.stdout, r.stderr]).toEqual([
      2,
      "",
      `exec is Codex's subcommand (codex exec "<task>"). In mini-cursor a task given as an argument already runs once and exits: mini-cursor 'list the files here'\n`,
    ]);
  });

  test.each([
    ["/Undo", "/Undo is a command of the interactive session, not a task"],
    ["/init", "/init is another agent's session command, not a task"],
    ["/cost", "/cost is another agent's session command, not a task"],
  ])("a one-shot %s is not sent to the model", async (task, head) => {
    const r = await cli([task]);
    expect(r.code).toBe(2);
    expect(r.stderr.startsWith(`mini-cursor: ${head}: sent as a task, the model would read it as a request`)).toBe(
      true,
    );
  });

  test("a flag nobody has stays a bare unknown option", async () => {
    const r = await cli(["--frobnicate", "hi"]);
    expect([r.code, r.stderr]).toEqual([
      2,
      "error: unknown option '--frobnicate'\nRun with --help to see the options.\n",
    ]);
  });
});

describe("session commands", () => {
  test("/clear starts a new thread as /new does; /model says which model runs and how to choose another", async () => {
    const r = await cli(["--each-line"], { input: "read hello.txt\n/clear\n/model\n/status\n/exit\n" });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/New thread \d{8}-[0-9a-f]{6}\./);
    expect(r.stdout).toContain(
      "This session uses mini-cursor-offline (embedded, no API key or base URL set). The model is chosen when mini-cursor starts: --model <name> (or MINI_CURSOR_MODEL in the environment or .env).",
    );
    expect(r.stdout).toContain(
      "Unknown command /status: mini-cursor has no /status (other agents do). Here, the banner at the session's start shows the workspace, model, thread, approval mode, engine and sandbox;",
    );
  });

  test.each(["graph", "loop"])(
    "/compact (%s): the conversation becomes one summary, saved to the thread, and the next request goes on from it",
    async (engine) => {
      const session = await cli(["--engine", engine, "--thread", "long", "--each-line"], {
        input: "read hello.txt\nlist the files here\n/compact the file names\n/exit\n",
      });
      expect(session.code).toBe(0);
      expect(session.stdout).toMatch(
        /Compacted: 8 messages \(about \d+ tokens\) are one summary now \(about \d+ tokens\), saved to thread long;/,
      );
      const summary = [
        "The conversation so far (listed by the offline model, which cannot summarise):",
        "- USER: read hello.txt",
        '- [called read_file {"filePath":"hello.txt"}]',
        "- USER: list the files here",
        '- [called list_directory {"directoryPath":"."}]',
      ].join("\n");
      expect(session.stdout).toContain(`Summary:\n${summary}\n`);

      server = await startOpenAIServer([{ content: "Going on." }]);
      const next = await cli(["--engine", engine, "--thread", "long", "what now?"], {
        env: baseEnv({ OPENAI_BASE_URL: server.url, OPENAI_API_KEY: "test-key" }),
      });
      expect(next.code).toBe(0);
      expect(userTexts(server.requests[0]!)).toEqual([
        `[Summary of the earlier conversation, compacted on the user's request (/compact)]\n${summary}`,
        "what now?",
      ]);
    },
  );

  test("/compact with nothing to compact says so and changes nothing", async () => {
    const r = await cli(["--each-line"], { input: "/compact\n/exit\n" });
    expect(r.stdout).toContain("Nothing to compact: this thread has no conversation yet, or is one summary already.");
  });
});

describe("@file and !command", () => {
  test("@path attaches a workspace file to the request; a path outside or missing is said and sent as typed", async () => {
    server = await startOpenAIServer([{ content: "It greets." }]);
    const r = await cli(["what does @hello.txt say? also @missing.txt and @../../etc/passwd"], {
      env: baseEnv({ OPENAI_BASE_URL: server.url, OPENAI_API_KEY: "test-key" }),
    });
    expect(r.code).toBe(0);
    expect(userTexts(server.requests[0]!)).toEqual([
      'what does @hello.txt say? also @missing.txt and @../../etc/passwd\n\n<file path="hello.txt">\nhello from the workspace\n</file>',
    ]);
    expect(r.stdout).toContain("@hello.txt: attached (25 B).");
    expect(r.stdout).toContain("@missing.txt: no such file in the workspace; sent as typed, not attached.");
    expect(r.stdout).toContain("@../../etc/passwd: not a path inside the workspace; sent as typed, not attached.");
  });

  test("the offline model reads an @mentioned file", async () => {
    const r = await cli(["--json", "read @hello.txt"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('"name":"read_file","args":{"filePath":"hello.txt"}');
  });

  test("!command asks the agent to run that command, in a session and as a task", async () => {
    const r = await cli(["--approval", "full-auto", "--each-line"], { input: "!echo bang > bang.txt\n/exit\n" });
    expect(r.code).toBe(0);
    expect(readFileSync(path.join(tmp.dir, "bang.txt"), "utf8")).toBe("bang\n");
    const once = await cli(["--approval", "full-auto", "--json", "!echo once > once.txt"]);
    expect(once.code).toBe(0);
    expect(JSON.parse(once.stdout.split("\n")[0]!)).toMatchObject({ task: "Run `echo once > once.txt`." });
    expect(readFileSync(path.join(tmp.dir, "once.txt"), "utf8")).toBe("once\n");
  });
});
