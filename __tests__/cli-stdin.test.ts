import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { jest } from "@jest/globals";
import { baseEnv, collect, PROJECT_ROOT, runCli, startCli, TSX_LOADER } from "./helpers/cli.js";
import { type ChatRequest, startOpenAIServer, type OpenAIServer } from "./helpers/openai-server.js";
import { makeTempDir, waitFor } from "./helpers/tmp.js";
import { shellQuote } from "./helpers/tmux.js";
import { MAX_PIPED_BYTES } from "../src/ui/piped-input.js";

/**
 * Issue 44 item 2 through the real CLI: text piped in is never dropped. With a task it is added
 * to the task; without one (or with `-`) all of it is one request, not one per line; too much of
 * it, or an endless stream, is refused with the limit named; `--each-line` keeps the scripted
 * session.
 */

jest.setTimeout(120_000);

let tmp: ReturnType<typeof makeTempDir>;
let server: OpenAIServer | undefined;
beforeEach(() => {
  tmp = makeTempDir();
  writeFileSync(path.join(tmp.dir, "hello.txt"), "hello\n");
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  tmp.cleanup();
});

const CLI = [process.execPath, "--import", TSX_LOADER, path.join(PROJECT_ROOT, "src", "cli.ts")];

/** The user messages of a request, as text. */
function userMessages(request: ChatRequest): string[] {
  return request.messages
    .filter((m) => m.role === "user")
    .map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content)));
}

async function scripted(...answers: string[]): Promise<NodeJS.ProcessEnv> {
  server = await startOpenAIServer(answers.map((content) => ({ content })));
  return baseEnv({ OPENAI_BASE_URL: server.url, OPENAI_API_KEY: "test-key" });
}

/** `sh -c '<producer> | mini-cursor <args>'`: a real pipe, as a shell makes it. */
function throughShell(producer: string, args: string[], env: NodeJS.ProcessEnv) {
  const line = `${producer} | ${[...CLI, "--workspace", tmp.dir, ...args].map(shellQuote).join(" ")}`;
  const child = spawn("sh", ["-c", line], { cwd: tmp.dir, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
  return collect(child, 90_000);
}

test("a shell pipe and a task: the piped text is added to the task, marked as stdin", async () => {
  const env = await scripted("It is a TypeError: x is undefined at line 3.");
  const r = await throughShell(
    "printf 'TypeError: x is undefined\\n    at main (app.js:3)\\n'",
    ["explain this error"],
    env,
  );
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  expect(server!.requests).toHaveLength(1);
  expect(userMessages(server!.requests[0]!)).toEqual([
    "explain this error\n\n<stdin>\nTypeError: x is undefined\n    at main (app.js:3)\n</stdin>",
  ]);
  expect(r.stdout).toContain("It is a TypeError: x is undefined at line 3.");
});

test("no task: several lines piped in are one request, and the run is one-shot", async () => {
  const env = await scripted("Both parts noted.");
  const r = await runCli(["--workspace", tmp.dir, "--json"], {
    env,
    input: "Refactor the parser.\nKeep the public API.\n\nThen run the tests.\n",
  });
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  expect(server!.requests).toHaveLength(1);
  expect(userMessages(server!.requests[0]!)).toEqual([
    "Refactor the parser.\nKeep the public API.\n\nThen run the tests.",
  ]);
  const starts = r.stdout.split("\n").filter((l) => l.includes('"type":"run_start"'));
  expect(starts).toHaveLength(1);
});

test("`-` as the task reads it from stdin", async () => {
  const env = await scripted("Done.");
  const r = await runCli(["--workspace", tmp.dir, "-"], { env, input: "say done\n" });
  expect(r.code).toBe(0);
  expect(userMessages(server!.requests[0]!)).toEqual(["say done"]);
});

test("more than the limit is refused with the limit named, and nothing is sent", async () => {
  const env = await scripted("never");
  const r = await runCli(["--workspace", tmp.dir, "explain"], { env, input: "x".repeat(MAX_PIPED_BYTES + 1) });
  expect(r.code).toBe(2);
  expect(r.stderr).toBe(
    "mini-cursor: the input piped in is larger than 1 MiB (1,048,576 bytes), the most mini-cursor reads from stdin. Save it to a file in the workspace and name that file in the task instead (the agent reads and searches big files a part at a time).\n",
  );
  expect(server!.requests).toHaveLength(0);
});

test("exactly the limit is read whole", async () => {
  const env = await scripted("ok");
  const r = await runCli(["--workspace", tmp.dir, "--json", "count"], { env, input: "y".repeat(MAX_PIPED_BYTES) });
  expect(r.code).toBe(0);
  const start = JSON.parse(r.stdout.split("\n")[0]!) as { task: string };
  expect(start.task).toBe(`count\n\n<stdin>\n${"y".repeat(MAX_PIPED_BYTES)}\n</stdin>`);
});

test("an endless stream does not keep it: `yes | mini-cursor …` ends with the refusal", async () => {
  const env = await scripted("never");
  const r = await throughShell("yes", ["explain"], env);
  expect(r.code).toBe(2);
  expect(r.stderr).toContain("the input piped in is larger than 1 MiB");
  expect(server!.requests).toHaveLength(0);
});

test("binary input is refused", async () => {
  const r = await runCli(["--workspace", tmp.dir, "explain"], { input: "PNG\u0000\u0001" });
  expect(r.code).toBe(2);
  expect(r.stderr).toBe(
    "mini-cursor: the input piped in is not text (it holds NUL bytes). Pipe text in, or save the file in the workspace and name it in the task.\n",
  );
});

test("no task and nothing piped in: a usage error that says what to do", async () => {
  const r = await runCli(["--workspace", tmp.dir], { input: "  \n" });
  expect(r.code).toBe(2);
  expect(r.stderr).toBe(
    'mini-cursor: no task: none was given and stdin gave no text. Give it as an argument (mini-cursor "list the files here"), pipe it in, or run mini-cursor on a terminal for a session.\n',
  );
});

test("a pipe left open is said after the wait notice, and the run goes on once it ends", async () => {
  const env = await scripted("Read it.");
  const child = spawn(CLI[0]!, [...CLI.slice(1), "--workspace", tmp.dir, "look at this"], {
    cwd: tmp.dir,
    env: { ...env, MINI_CURSOR_WAIT_NOTICE_MS: "200" },
    stdio: ["pipe", "pipe", "pipe"],
    detached: true,
  });
  let stderr = "";
  child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
  child.stdin!.write("first part\n");
  await waitFor(() => stderr.includes("reading the input piped in"), 60_000);
  expect(stderr).toBe(
    "mini-cursor: reading the input piped in (stdin), to add it to the task; it has not ended yet. If nothing is meant to be piped in, run with < /dev/null.\n",
  );
  child.stdin!.end("second part\n");
  const r = await collect(child, 90_000);
  expect(r.code).toBe(0);
  expect(userMessages(server!.requests[0]!)).toEqual(["look at this\n\n<stdin>\nfirst part\nsecond part\n</stdin>"]);
});

test("--each-line: a scripted session, one request per line; with a task it is a usage error", async () => {
  const r = await runCli(["--workspace", tmp.dir, "--each-line"], {
    input: "read hello.txt\nlist the files here\n/exit\n",
  });
  expect(r.code).toBe(0);
  expect(r.stdout).toContain("❯ read hello.txt\n");
  expect(r.stdout).toContain("❯ list the files here\n");
  const both = await runCli(["--workspace", tmp.dir, "--each-line", "read hello.txt"]);
  expect(both.code).toBe(2);
  expect(both.stderr).toBe(
    "mini-cursor: --each-line reads the requests from stdin, one per line: give no task (put it on the first line of the input).\n",
  );
});

test("with stdin closed at once (no pipe content) a task runs as given", async () => {
  const r = await collect(startCli(["--workspace", tmp.dir, "--json", "read hello.txt"], { cwd: tmp.dir }));
  expect(r.code).toBe(0);
  const start = JSON.parse(r.stdout.split("\n")[0]!) as { task: string };
  expect(start.task).toBe("read hello.txt");
});

test("a socket on stdin that a program left open and silent does not hold a task; a shell pipe is waited for", async () => {
  const env = await scripted("Listed.", "Read.");
  // Node's spawn gives the child a socket as stdin; this test never writes to it nor closes it.
  const child = spawn(CLI[0]!, [...CLI.slice(1), "--workspace", tmp.dir, "--json", "list the files here"], {
    cwd: tmp.dir,
    env: { ...env, MINI_CURSOR_WAIT_NOTICE_MS: "200" },
    stdio: ["pipe", "pipe", "pipe"],
    detached: true,
  });
  const r = await collect(child, 90_000);
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  expect(userMessages(server!.requests[0]!)).toEqual(["list the files here"]);
  // A shell pipe whose writer is slow to start is read to its end.
  const slow = await throughShell("{ sleep 3; echo late line; }", ["read this"], env);
  expect(slow.code).toBe(0);
  expect(userMessages(server!.requests[1]!)).toEqual(["read this\n\n<stdin>\nlate line\n</stdin>"]);
});
