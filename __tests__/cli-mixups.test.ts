import { createHash } from "node:crypto";
import { copyFileSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { jest } from "@jest/globals";
import { baseEnv, PROJECT_ROOT, runCli } from "./helpers/cli.js";
import { startOpenAIServer, type OpenAIServer } from "./helpers/openai-server.js";
import { makeTempDir } from "./helpers/tmp.js";

/**
 * Issue 44 item 4 through the real CLI: what overwrites or misleads. --record never overwrites a
 * file (the shipped demo, typed for --replay, included); a one-shot "/undo" is not sent to the
 * model but names --undo; the offline model reads a file write_file refused to replace, then
 * writes it, as a real model would.
 */

jest.setTimeout(120_000);

let tmp: ReturnType<typeof makeTempDir>;
let server: OpenAIServer | undefined;
beforeEach(() => {
  tmp = makeTempDir();
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  tmp.cleanup();
});

const DEMO = path.join(PROJECT_ROOT, "demos", "todo-app.jsonl");
const sha = (file: string) => createHash("sha256").update(readFileSync(file)).digest("hex");

describe("--record never overwrites a file", () => {
  test("a file that is not a recording is refused, with exit 2, and left as it was", async () => {
    const notes = path.join(tmp.dir, "notes.md");
    writeFileSync(notes, "# my notes\n");
    const r = await runCli(["--workspace", tmp.dir, "--record", "notes.md", "hi"], { cwd: tmp.dir });
    expect([r.code, r.stdout, r.stderr]).toEqual([
      2,
      "",
      `mini-cursor: --record ${notes}: that is a file that is not a recording, and --record never overwrites. Give a new file name (run.jsonl, say).\n`,
    ]);
    expect(readFileSync(notes, "utf8")).toBe("# my notes\n");
  });

  test("--record where --replay was meant: the shipped demo is refused and named for --replay", async () => {
    const before = sha(DEMO);
    const r = await runCli(
      [
        "--workspace",
        tmp.dir,
        "--approval",
        "full-auto",
        "--record",
        "demos/todo-app.jsonl",
        "create a React todo app",
      ],
      { cwd: PROJECT_ROOT },
    );
    expect([r.code, r.stdout, r.stderr]).toEqual([
      2,
      "",
      `mini-cursor: --record ${DEMO}: that is a recording, and --record never overwrites. To answer from it, use --replay ${DEMO}; to record again, give a new file name or remove this one first.\n`,
    ]);
    expect(sha(DEMO)).toBe(before);
  });

  test("a recording of one's own, a link and a folder are refused too; a new name records", async () => {
    const mine = path.join(tmp.dir, "run.jsonl");
    copyFileSync(DEMO, mine);
    const again = await runCli(["--workspace", tmp.dir, "--record", mine, "hi"]);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain("that is a recording, and --record never overwrites.");
    expect(sha(mine)).toBe(sha(DEMO));

    const target = path.join(tmp.dir, "target.txt");
    writeFileSync(target, "keep\n");
    symlinkSync(target, path.join(tmp.dir, "link.jsonl"));
    const link = await runCli(["--workspace", tmp.dir, "--record", path.join(tmp.dir, "link.jsonl"), "hi"]);
    expect(link.code).toBe(2);
    expect(link.stderr).toContain("that is a symbolic link, and --record never overwrites.");
    expect(readFileSync(target, "utf8")).toBe("keep\n");
    const folder = await runCli(["--workspace", tmp.dir, "--record", tmp.dir, "hi"]);
    expect(folder.stderr).toContain("that is a folder, and --record never overwrites.");

    const fresh = path.join(tmp.dir, "fresh.jsonl");
    const made = await runCli(["--workspace", tmp.dir, "--record", fresh, "list the files here"]);
    expect(made.code).toBe(0);
    expect(JSON.parse(readFileSync(fresh, "utf8").split("\n")[0]!)).toMatchObject({
      type: "header",
      format: "mini-cursor-recording",
    });
  });
});

describe("a session command given as a one-shot task is not sent to the model", () => {
  test('"/undo" names --undo, exit 2, and the model gets nothing; piped in, the same', async () => {
    server = await startOpenAIServer([{ content: "never" }]);
    const env = baseEnv({ OPENAI_BASE_URL: server.url, OPENAI_API_KEY: "test-key" });
    const expected =
      `mini-cursor: /undo is a command of the interactive session, not a task: sent as a task, the model would read it as a request and might act on it its own way, so it was not sent. ` +
      `To undo the latest thread's last turn: mini-cursor --workspace ${tmp.dir} --continue --undo (another thread's: --thread <id> instead of --continue; mini-cursor --workspace ${tmp.dir} --threads lists them).\n`;
    const r = await runCli(["--workspace", tmp.dir, "/undo"], { env });
    expect([r.code, r.stdout, r.stderr]).toEqual([2, "", expected]);
    const piped = await runCli(["--workspace", tmp.dir], { env, input: "/undo\n" });
    expect([piped.code, piped.stderr]).toEqual([2, expected]);
    expect(server.requests).toHaveLength(0);
  });

  test.each([
    ["/threads", "To list them: mini-cursor --workspace WS --threads."],
    ["/mcp", "To see the MCP servers: mini-cursor --workspace WS --mcp-list."],
    ["/plan add a test", "To plan: mini-cursor --workspace WS --approval plan 'add a test'; the run ends"],
    ["/resume 20261129-a1b2c3", "To go on with a thread: mini-cursor --workspace WS --thread 20261129-a1b2c3 <task>"],
    ["/exit", "A task given as an argument runs once and exits: there is no session to leave."],
  ])("%s names what to run instead", async (task, hint) => {
    const r = await runCli(["--workspace", tmp.dir, task]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(hint.replace(/WS/g, tmp.dir));
  });

  test("a path is still a request: /usr/bin/env is sent as typed", async () => {
    const r = await runCli(["--workspace", tmp.dir, "--json", "/usr/bin/env is missing"]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout.split("\n")[0]!)).toMatchObject({ task: "/usr/bin/env is missing" });
  });
});

describe.each(["graph", "loop"])("the offline model, asked to create a file that exists (%s)", (engine) => {
  test("reads it after write_file's refusal, then writes it, and says so", async () => {
    writeFileSync(path.join(tmp.dir, "a.txt"), "old\n");
    const r = await runCli([
      "--workspace",
      tmp.dir,
      "--engine",
      engine,
      "--json",
      "create a file a.txt with content Hello",
    ]);
    expect(r.code).toBe(0);
    expect(readFileSync(path.join(tmp.dir, "a.txt"), "utf8")).toBe("Hello");
    const events = r.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { type: string; name?: string; status?: string; text?: string });
    expect(events.filter((e) => e.type === "tool_result").map((e) => `${e.name} ${e.status}`)).toEqual([
      "write_file error",
      "read_file success",
      "write_file success",
    ]);
    expect(events.find((e) => e.type === "final")?.text).toBe(
      "a.txt already existed, so I read it first and then replaced it:\n\nReplaced a.txt (1 line, 5 bytes).",
    );
  });
});
