import { existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import path from "node:path";
import { runCli } from "./helpers/cli.js";
import { makeTempDir } from "./helpers/tmp.js";
import { stateDirOf } from "./helpers/state-dir.js";

let tmp: ReturnType<typeof makeTempDir>;
beforeEach(() => {
  tmp = makeTempDir();
  writeFileSync(path.join(tmp.dir, "hello.txt"), "hello from the workspace\n");
});
afterEach(() => tmp.cleanup());

test("offline one-shot run lists the workspace and exits 0", async () => {
  const r = await runCli(["--workspace", tmp.dir, "list the files here"]);
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  expect(r.stdout).toContain(`workspace ${tmp.dir}`);
  expect(r.stdout).toContain("mini-cursor-offline (embedded, no API key or base URL set)");
  expect(r.stdout).toContain('→ list_directory directoryPath="."');
  expect(r.stdout).toMatch(/file {2}hello\.txt {2}25 B/);
  expect(r.stdout).toMatch(/✔ Done: 2 steps, 1 tool call/);
  // Its state is kept outside the workspace, in a folder that names the workspace.
  expect(existsSync(path.join(stateDirOf(tmp.dir), "state.sqlite"))).toBe(true);
  expect(readFileSync(path.join(stateDirOf(tmp.dir), "workspace"), "utf8")).toBe(`${realpathSync(tmp.dir)}\n`);
  expect(existsSync(path.join(tmp.dir, ".mini-cursor"))).toBe(false);
});

test("--json prints only JSON Lines events on stdout", async () => {
  const r = await runCli(["--workspace", tmp.dir, "--json", "read hello.txt"]);
  expect(r.code).toBe(0);
  const events = r.stdout
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as { type: string; [k: string]: unknown });
  expect(events.map((e) => e.type).filter((t) => t !== "usage" && t !== "token")).toEqual([
    "run_start",
    "step",
    "tool_call",
    "tool_result",
    "step",
    "final",
    "run_end",
  ]);
  expect(events[0]).toMatchObject({
    type: "run_start",
    engine: "graph",
    provider: "offline",
    workspace: tmp.dir,
    task: "read hello.txt",
  });
  expect(events.find((e) => e.type === "tool_call")).toMatchObject({
    name: "read_file",
    args: { filePath: "hello.txt" },
  });
  expect(String(events.find((e) => e.type === "final")!.text)).toContain("     1\thello from the workspace");
  expect(events.at(-1)).toMatchObject({ type: "run_end", reason: "done", steps: 2, toolCalls: 1 });
});

test("without a terminal a command that needs approval is not run, says why everywhere, and the run is not a success", async () => {
  const r = await runCli(["--workspace", tmp.dir, "--json", "run `touch made.txt`"]);
  expect(r.code).toBe(4);
  expect(existsSync(path.join(tmp.dir, "made.txt"))).toBe(false);
  const events = r.stdout
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { type: string; [k: string]: unknown });
  const approval = events.find((e) => e.type === "approval") as unknown as {
    request: { tool: string };
    response: { decision: string; unattended: boolean };
  };
  expect(approval.request.tool).toBe("execute_command");
  expect(approval.response).toEqual({ decision: "deny", unattended: true });
  const notRun =
    "This execute_command call was not run, because nobody could be asked to approve it (mini-cursor is not running on a terminal). " +
    "It needed approval because: runs a shell command (approval mode auto-edit). " +
    "Run mini-cursor with --approval full-auto to let commands run without asking (dangerous ones still need a person). Tell the user what was not done and why.";
  expect(events.find((e) => e.type === "tool_result")).toMatchObject({
    status: "error",
    notRun: true,
    content: notRun,
  });
  // The offline model tells the user, without the sentence meant for a model.
  expect(events.find((e) => e.type === "final")).toEqual({
    type: "final",
    text: `Did not run \`touch made.txt\`:\n\n${notRun.replace(" Tell the user what was not done and why.", "")}`,
  });
  expect(events.at(-1)).toMatchObject({ type: "run_end", reason: "not_run" });

  const pretty = await runCli(["--workspace", tmp.dir, "run `touch made.txt`"]);
  expect(pretty.code).toBe(4);
  expect(pretty.stdout).toContain(
    "  ? execute_command: not run, because nobody could be asked (not a terminal)\n  ✗ execute_command not run, ",
  );
  expect(pretty.stdout).not.toContain("Ran `touch made.txt`");
  expect(pretty.stdout).not.toContain("declined");
  expect(pretty.stdout).toMatch(/\n■ Not done: what it asked to do was not run: 2 steps, 1 tool call, /);
});

test("off a terminal in suggest mode, a file change is told that --approval auto-edit is enough", async () => {
  const r = await runCli([
    "--workspace",
    tmp.dir,
    "--approval",
    "suggest",
    "--json",
    "create a file a.txt with content A",
  ]);
  expect(r.code).toBe(4);
  const result = r.stdout
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { type: string; content?: string })
    .find((e) => e.type === "tool_result");
  expect(result?.content).toContain(
    "Run mini-cursor with --approval auto-edit to let file changes run without asking.",
  );
  expect(result?.content).not.toContain("full-auto");
});

test("a failing command and a directory read are failures: ✗ with the exit code, status error in --json", async () => {
  mkdirSync(path.join(tmp.dir, "adir"));
  const pretty = await runCli(["--workspace", tmp.dir, "--approval", "full-auto", "run `exit 3`"]);
  expect(pretty.code).toBe(0);
  expect(pretty.stdout).toMatch(/\n {2}✗ execute_command exit 3, 2 lines, /);
  expect(pretty.stdout).toContain("Ran `exit 3`, and it failed:");
  const json = await runCli(["--workspace", tmp.dir, "--json", "read adir/"]);
  const result = json.stdout
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { type: string })
    .find((e) => e.type === "tool_result");
  expect(result).toMatchObject({
    name: "read_file",
    status: "error",
    content: '"adir" is a directory, use list_directory to see what it contains.',
  });
  const text = await runCli(["--workspace", tmp.dir, "read adir/"]);
  expect(text.stdout).toMatch(/\n {2}✗ read_file 1 lines, /);
});

test("full-auto runs the command", async () => {
  const r = await runCli(["--workspace", tmp.dir, "--approval", "full-auto", "run `echo made > made.txt`"]);
  expect(r.code).toBe(0);
  expect(readFileSync(path.join(tmp.dir, "made.txt"), "utf8")).toBe("made\n");
});

test("a thread is saved and resumed by id and by --continue", async () => {
  const first = await runCli(["--workspace", tmp.dir, "--thread", "t-one", "read hello.txt"]);
  expect(first.code).toBe(0);
  expect(first.stdout).toContain("thread    t-one  next time: --thread t-one");
  const second = await runCli(["--workspace", tmp.dir, "--continue", "list the files here"]);
  expect(second.code).toBe(0);
  expect(second.stdout).toContain("t-one (resumed)");
  const threads = JSON.parse(readFileSync(path.join(stateDirOf(tmp.dir), "threads.json"), "utf8")) as Array<{
    id: string;
    runs: number;
    firstRequest: string;
  }>;
  expect(threads).toHaveLength(1);
  expect(threads[0]).toMatchObject({ id: "t-one", runs: 2, firstRequest: "read hello.txt" });
});

describe("usage", () => {
  test("--help tells the options and exit codes", async () => {
    const r = await runCli(["--help"]);
    expect(r.code).toBe(0);
    for (const flag of [
      "--workspace",
      "--model",
      "--thread",
      "--continue",
      "--engine",
      "--max-steps",
      "--approval",
      "--json",
      "--no-color",
      "--version",
    ]) {
      expect(r.stdout).toContain(flag);
    }
    expect(r.stdout).toContain("130 interrupted");
    expect(r.stdout).toContain(
      "4 nothing done (every action it asked for was declined or\nneeded an approval nobody could give)",
    );
  });

  test("--version prints the version", async () => {
    const r = await runCli(["--version"]);
    expect(r.code).toBe(0);
    const pkg = JSON.parse(readFileSync(path.join(__dirname_of(), "package.json"), "utf8")) as { version: string };
    expect(r.stdout.trim()).toBe(pkg.version);
  });

  test.each([
    [["--bogus", "x"], /unknown option '--bogus'/],
    [["--max-steps", "ten", "x"], /--max-steps must be a whole number/],
    [["--approval", "yolo", "x"], /Allowed choices are suggest, auto-edit, full-auto/],
    [["--workspace", "/definitely/not/here", "x"], /does not exist/],
  ])("%j exits 2", async (args, message) => {
    const r = await runCli(args as string[], { cwd: undefined });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stdout).toBe("");
  });
});

function __dirname_of(): string {
  return path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");
}
