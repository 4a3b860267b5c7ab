import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, jest, test } from "@jest/globals";
import { baseEnv, runCli, type CliResult } from "./helpers/cli.js";
import { startOpenAIServer, type ChatRequest } from "./helpers/openai-server.js";
import {
  httpGet,
  killMarked,
  openSession as startSession,
  pidAlive,
  serverCommand,
  uniqueMarker,
  waitNoneLeft,
  waitRefused,
  type OpenSession,
} from "./helpers/tmux.js";
import { useSessionFixture } from "./helpers/session-fixture.js";
import { stateDirOf } from "./helpers/state-dir.js";

/**
 * The interactive session driven through stdin (not a terminal) with --each-line: one request
 * per line until /exit or end of input. The embedded offline model answers; no key, no network.
 */

jest.setTimeout(90_000);

const fx = useSessionFixture();

interface ThreadEntry {
  id: string;
  firstRequest: string;
  steps: number;
  runs: number;
}

function threads(): ThreadEntry[] {
  return JSON.parse(readFileSync(path.join(stateDirOf(fx.tmp.dir), "threads.json"), "utf8")) as ThreadEntry[];
}

/** The thread id the banner announced. */
function bannerThread(stdout: string): string {
  return /thread {4}(\S+)/.exec(stdout)![1]!;
}

function session(input: string, args: string[] = [], env = baseEnv()): Promise<CliResult> {
  return runCli(["--workspace", fx.tmp.dir, "--each-line", ...args], { input, env, timeoutMs: 60_000 });
}

/** A session whose stdin stays open, to look at the world between lines. */
function openSession(args: string[] = []): OpenSession {
  const s = startSession(["--workspace", fx.tmp.dir, "--each-line", ...args]);
  fx.track(s.child);
  return s;
}

describe("piped input", () => {
  test("two requests run two turns on one thread, then /exit leaves with 0", async () => {
    const r = await session("read hello.txt\nlist the files here\n/exit\n");
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const first = r.stdout.indexOf("❯ read hello.txt");
    const second = r.stdout.indexOf("❯ list the files here");
    expect(first).toBeGreaterThan(-1);
    expect(second).toBeGreaterThan(first);
    const turn1 = r.stdout.slice(first, second);
    const turn2 = r.stdout.slice(second);
    expect(turn1).toContain('→ read_file filePath="hello.txt"');
    expect(turn1).toContain("     1\thello from the workspace");
    expect(turn1).toMatch(/✔ Done: 2 steps, 1 tool call/);
    expect(turn2).toContain('→ list_directory directoryPath="."');
    expect(turn2).toMatch(/file {2}hello\.txt {2}25 B/);
    expect(turn2).toMatch(/✔ Done: 2 steps, 1 tool call/);

    expect(threads()).toEqual([
      expect.objectContaining({ id: bannerThread(r.stdout), firstRequest: "read hello.txt", runs: 2, steps: 4 }),
    ]);
  });

  test("the second model request carries the first exchange", async () => {
    fx.server = await startOpenAIServer([{ content: "Noted: your name is Ada." }, { content: "Your name is Ada." }]);
    const env = baseEnv({ OPENAI_BASE_URL: fx.server.url, OPENAI_API_KEY: "test-key" });
    const r = await session("my name is Ada\nwhat is my name?\n/exit\n", [], env);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Noted: your name is Ada.");
    expect(r.stdout).toContain("Your name is Ada.");
    expect(fx.server.requests).toHaveLength(2);
    const conversation = (req: ChatRequest) =>
      req.messages
        .filter((m) => m.role !== "system" && m.role !== "developer")
        .map((m) => ({ role: m.role, content: textOf(m.content) }));
    expect(conversation(fx.server.requests[0]!)).toEqual([{ role: "user", content: "my name is Ada" }]);
    expect(conversation(fx.server.requests[1]!)).toEqual([
      { role: "user", content: "my name is Ada" },
      { role: "assistant", content: "Noted: your name is Ada." },
      { role: "user", content: "what is my name?" },
    ]);
    expect(threads()).toEqual([expect.objectContaining({ id: bannerThread(r.stdout), runs: 2 })]);
  });

  test("end of input without /exit leaves with 0", async () => {
    const r = await session("read hello.txt\n");
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/✔ Done: 2 steps, 1 tool call/);
    expect(threads()).toHaveLength(1);
  });

  test("empty input: the banner, the hint, and 0", async () => {
    const r = await session("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Type a request, or /help for commands.");
    expect(existsSync(path.join(stateDirOf(fx.tmp.dir), "threads.json"))).toBe(false);
  });
});

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((p: { text?: string }) => p.text ?? "").join("");
  return JSON.stringify(content);
}

describe("slash commands", () => {
  test("/help, /threads, /new, /resume, /ps, /kill, unknown commands", async () => {
    const r = await session(
      [
        "/help",
        "/threads",
        "read hello.txt",
        "/threads",
        "/new",
        "list the files here",
        "/threads",
        "/resume",
        "/resume no-such-thread",
        "read hello.txt",
        "/ps",
        "/kill",
        "/kill bg-9",
        "/foo bar",
        "/exit",
        "read hello.txt",
      ].join("\n"),
    );
    expect(r.code).toBe(0);
    const first = bannerThread(r.stdout);
    expect(r.stdout).toContain("/help                this list");
    expect(r.stdout).toContain("/resume <id>         continue a saved thread");
    expect(r.stdout).toContain("/kill <id>           stop a background process");
    expect(r.stdout).toContain("No saved threads in this workspace yet.");
    expect(r.stdout).toMatch(
      new RegExp(`\\* ${first} +\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d  graph +2  read hello\\.txt`),
    );
    const second = /New thread (\S+)\./.exec(r.stdout)![1]!;
    expect(second).not.toBe(first);
    // After /new, the table marks the new thread and still lists the first one.
    const table = r.stdout.slice(r.stdout.lastIndexOf("  id "));
    expect(table).toMatch(new RegExp(`\\* ${second} .* 2  list the files here`));
    expect(table).toMatch(new RegExp(`  ${first} .* 2  read hello\\.txt`));
    expect(r.stdout).toContain("Usage: /resume <id> (see /threads for ids).");
    expect(r.stdout).toContain('No saved thread "no-such-thread" in this workspace; /threads lists them.');
    expect(r.stdout).toContain("No background processes.");
    expect(r.stdout).toContain("Usage: /kill <id> (see /ps for ids).");
    expect(r.stdout).toContain('No running background process "bg-9"; /ps lists them.');
    expect(r.stdout).toContain("Unknown command /foo. /help lists the commands.");
    // Nothing after /exit runs: three turns, not four.
    expect(r.stdout.match(/✔ Done:/g)).toHaveLength(3);

    // The third turn ran on the second thread (no resume happened).
    const saved = threads();
    expect(saved.find((t) => t.id === first)).toMatchObject({ runs: 1, firstRequest: "read hello.txt" });
    expect(saved.find((t) => t.id === second)).toMatchObject({ runs: 2, firstRequest: "list the files here" });

    // /resume <id> switches a session to a saved thread (the id is known only now, so in a
    // second session): its next turn lands there.
    const again = await session(`/resume ${first}\nlist the files here\n/threads\n/exit\n`);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(`Resumed thread ${first}: read hello.txt`);
    expect(again.stdout).toMatch(new RegExp(`\\* ${first} .* 4  read hello\\.txt`));
    expect(threads().find((t) => t.id === first)).toMatchObject({ runs: 2, steps: 4 });
    // The banner's fresh thread was never used, so it was never saved.
    expect(
      threads()
        .map((t) => t.id)
        .sort(),
    ).toEqual([first, second].sort());
  });

  test("/approval switches the mode for the next turns; a bogus mode changes nothing", async () => {
    const r = await session(
      [
        "run `echo no > n.txt`",
        "/approval bogus",
        "/approval full-auto",
        "run `echo hi > x.txt`",
        "/approval",
        "/exit",
      ].join("\n"),
    );
    expect(r.code).toBe(0);
    // Before the switch, a command needs approval, and without a terminal it is declined.
    expect(r.stdout).toContain("execute_command: not run, because nobody could be asked");
    expect(existsSync(path.join(fx.tmp.dir, "n.txt"))).toBe(false);
    expect(r.stdout).toContain("Approval mode is auto-edit. Usage: /approval suggest | auto-edit | full-auto | plan");
    expect(r.stdout).toContain("Approval mode: full-auto.");
    expect(readFileSync(path.join(fx.tmp.dir, "x.txt"), "utf8")).toBe("hi\n");
    expect(r.stdout).toContain("Approval mode is full-auto. Usage: /approval suggest | auto-edit | full-auto | plan");
  });

  test("--threads prints the saved threads like /threads", async () => {
    const empty = await runCli(["--workspace", fx.tmp.dir, "--threads"]);
    expect(empty.code).toBe(0);
    expect(empty.stdout).toBe("No saved threads in this workspace yet.\n");

    expect((await runCli(["--workspace", fx.tmp.dir, "--thread", "t-one", "read hello.txt"])).code).toBe(0);
    expect((await runCli(["--workspace", fx.tmp.dir, "--thread", "t-two", "list the files here"])).code).toBe(0);
    const r = await runCli(["--workspace", fx.tmp.dir, "--threads"]);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe("");
    const lines = r.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^ {2}id +last update +engine {2}steps {2}first request$/);
    // Newest first.
    expect(lines[1]).toMatch(/^ {2}t-two +\d{4}-\d\d-\d\d \d\d:\d\d {2}graph +2 {2}list the files here$/);
    expect(lines[2]).toMatch(/^ {2}t-one +\d{4}-\d\d-\d\d \d\d:\d\d {2}graph +2 {2}read hello\.txt$/);
    expect(lines).toHaveLength(3);
  });
});

describe("background processes", () => {
  test("a dev server stays up while the session is open, shows in /ps with its URL, and is stopped on /exit", async () => {
    const s = openSession(["--approval", "full-auto"]);
    s.send(`run \`${serverCommand(fx.marker)}\``);
    const [, url] = await s.waitFor(
      /Running in the background: bg-1 (http:\/\/127\.0\.0\.1:\d+\/) \(\/ps, \/kill <id>\)/,
    );
    expect(await httpGet(url!)).toEqual({ status: 200, body: "ok" });

    s.send("/ps");
    const ps = await s.waitFor(/^bg-1 {2}pid (\d+) {2}running {2}(\S+) {2}(.*)$/m);
    const pid = Number(ps[1]);
    expect(ps[2]).toBe(url);
    expect(ps[3]).toBe(serverCommand(fx.marker));
    expect(pidAlive(pid)).toBe(true);

    s.send("/exit");
    const r = await s.result;
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`Stopped background process bg-1 (${serverCommand(fx.marker)}) at ${url}.`);
    expect(pidAlive(pid)).toBe(false);
    await waitNoneLeft(fx.marker, 1_000);
    await waitRefused(url!);
  });

  test("/kill stops one server and /ps shows it ended; end of input stops the rest", async () => {
    const other = uniqueMarker();
    try {
      const r = await session(
        [
          "/approval full-auto",
          `run \`${serverCommand(fx.marker)}\``,
          `run \`${serverCommand(other)}\``,
          "/ps",
          "/kill bg-1",
          "/ps",
        ].join("\n"),
      );
      expect(r.code).toBe(0);
      expect(r.stdout).toContain("Running in the background: bg-1 http://127.0.0.1:");
      expect(r.stdout).toMatch(
        /Running in the background: bg-1 http:\/\/127\.0\.0\.1:\d+\/, bg-2 http:\/\/127\.0\.0\.1:\d+\//,
      );
      expect(r.stdout).toContain("Stopped bg-1.");
      const ps = r.stdout.slice(r.stdout.indexOf("Stopped bg-1."));
      expect(ps).toMatch(/^bg-1 {2}pid \d+ {2}exited with code \d+ {2}http:\/\/127\.0\.0\.1:\d+\/ {2}node -e/m);
      expect(ps).toMatch(/^bg-2 {2}pid \d+ {2}running {2}http:\/\/127\.0\.0\.1:\d+\/ {2}node -e/m);
      // Only bg-2 was still running when the input ended.
      expect(r.stdout).toMatch(/Stopped background process bg-2 \(.*\) at http:\/\/127\.0\.0\.1:\d+\/\./);
      expect(r.stdout).not.toContain("Stopped background process bg-1");
      await waitNoneLeft(fx.marker, 1_000);
      await waitNoneLeft(other, 1_000);
    } finally {
      killMarked(other);
    }
  });

  test("a one-shot run without a terminal stops its dev server before exiting", async () => {
    const r = await runCli([
      "--workspace",
      fx.tmp.dir,
      "--approval",
      "full-auto",
      `run \`${serverCommand(fx.marker)}\``,
    ]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/Running in the background as bg-1 \(pid \d+\) at http:\/\/127\.0\.0\.1:\d+\//);
    expect(r.stdout).toMatch(/Stopped background process bg-1 \(.*\) at http:\/\/127\.0\.0\.1:\d+\/\./);
    await waitNoneLeft(fx.marker, 1_000);
  });
});
