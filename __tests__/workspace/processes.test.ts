import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "@jest/globals";
import {
  createAnsiStripper,
  createTailRing,
  HEAD_CHARS,
  MAX_OUTPUT_CHARS,
  stripAnsi,
} from "../../src/workspace/output-store.js";
import {
  BACKGROUND_SETTLE_MS,
  createProcessRegistry,
  DEFAULT_TIMEOUT_MS,
  effectiveTimeout,
  groupAlive,
  KILL_GRACE_MS,
  MAX_TIMEOUT_MS,
  runCommand,
  type ProcessRegistry,
  type RunCommandOptions,
} from "../../src/workspace/processes.js";
import { makeTempDir, waitFor } from "../helpers/tmp.js";
import { isAlive, pidsFrom, killPids } from "../helpers/pids.js";
import { stateDirOf } from "../helpers/state-dir.js";

/** A dev server that listens on a free port and prints a coloured Vite-style "Local:" line. */
function writeFakeDevServer(dir: string): string {
  const file = path.join(dir, "server.cjs");
  writeFileSync(
    file,
    `const http = require("node:http");
const server = http.createServer((req, res) => {
  console.log("request " + req.url);
  res.end("hello from the fake server");
});
server.listen(0, "127.0.0.1", () => {
  console.log("  \\x1b[32m➜\\x1b[39m  \\x1b[1mLocal\\x1b[22m:   \\x1b[36mhttp://127.0.0.1:" + server.address().port + "/\\x1b[39m");
});
`,
  );
  return file;
}

let dir: string;
let cleanup: () => void;
let registry: ProcessRegistry;
const seenPids = new Set<number>();

function run(command: string, extra: Partial<RunCommandOptions> = {}) {
  return runCommand({ command, cwd: dir, workspaceRoot: dir, registry, ...extra });
}

beforeEach(() => {
  ({ dir, cleanup } = makeTempDir());
  registry = createProcessRegistry();
  seenPids.clear();
});

afterEach(async () => {
  await registry.stopAll();
  killPids(seenPids);
  cleanup();
});

describe("runCommand", () => {
  it("returns the exit code and the exact output", async () => {
    const ok = await run("echo hello");
    expect(ok).toMatchObject({ status: "exited", exitCode: 0, signal: null });
    expect(ok.output).toEqual({ text: "hello\n", totalChars: 6, totalLines: 1, truncated: false });

    const failed = await run("printf 'no newline'; exit 3");
    expect(failed.status).toBe("exited");
    expect(failed.exitCode).toBe(3);
    expect(failed.output.text).toBe("no newline");
    expect(failed.output.totalLines).toBe(1);
  });

  it("reports an unknown command as exit code 127 with bash's message", async () => {
    const result = await run("definitely-not-a-command-xyz --flag");
    expect(result.exitCode).toBe(127);
    expect(result.output.text).toBe("bash: line 1: definitely-not-a-command-xyz: command not found\n");
  });

  it("interleaves stdout and stderr in the order they were written", async () => {
    const result = await run("echo out1; echo err1 >&2; echo out2; echo err2 1>&2; printf 'out3\\n'");
    expect(result.output.text).toBe("out1\nerr1\nout2\nerr2\nout3\n");
  });

  it("still reports a syntax error on the first line", async () => {
    const result = await run("echo (");
    expect(result.exitCode).toBe(2);
    expect(result.output.text).toMatch(/syntax error near unexpected token/);
  });

  it("reports a process killed by a signal as 128 + the signal number", async () => {
    const result = await run("kill -USR1 $$");
    expect(result).toMatchObject({ status: "exited", exitCode: 138, signal: "SIGUSR1" });
  });

  it("runs in the given directory with stdin closed", async () => {
    mkdirSync(path.join(dir, "sub"));
    expect((await run("pwd", { cwd: path.join(dir, "sub") })).output.text).toBe(`${dir}/sub\n`);
    const started = Date.now();
    const cat = await run("cat; echo after-cat");
    expect(cat).toMatchObject({ status: "exited", exitCode: 0 });
    expect(cat.output.text).toBe("after-cat\n");
    expect(Date.now() - started).toBeLessThan(5_000);
    expect((await run('read -r line; echo "read status $?"')).output.text).toBe("read status 1\n");
  });

  it("sets a non-interactive environment on top of the given base", async () => {
    const result = await run(
      'echo "$PAGER|$GIT_PAGER|$GIT_TERMINAL_PROMPT|$npm_config_yes|$MINI_CURSOR|$FROM_BASE|${HOME_FROM_PARENT:-unset}"',
      { env: { PATH: process.env.PATH, FROM_BASE: "base-value" } },
    );
    expect(result.output.text).toBe("cat|cat|0|true|1|base-value|unset\n");
  });

  it("returns when the shell exits even if a background child holds the pipes, and stops that child", async () => {
    const started = Date.now();
    const result = await run("sleep 100 & echo pid=$!");
    expect(result).toMatchObject({ status: "exited", exitCode: 0 });
    expect(Date.now() - started).toBeLessThan(KILL_GRACE_MS + 3_000);
    const [child] = pidsFrom(result.output.text);
    seenPids.add(child!);
    await waitFor(() => !isAlive(child!), 5_000);
  });

  it("times out, stops a group that ignores SIGTERM with SIGKILL, and keeps the output", async () => {
    const started = Date.now();
    const result = await run("trap '' TERM; echo before; sleep 60 & echo pid=$!; wait", { timeoutMs: 500 });
    const elapsed = Date.now() - started;
    expect(result).toMatchObject({ status: "timed_out", stoppedWith: "SIGKILL", timeoutMs: 500, signal: "SIGKILL" });
    expect(result.exitCode).toBe(137);
    expect(result.output.text).toMatch(/^before\npid=\d+\n$/);
    expect(elapsed).toBeGreaterThanOrEqual(500 + KILL_GRACE_MS - 50);
    expect(elapsed).toBeLessThan(500 + KILL_GRACE_MS + 3_000);
    const [grandchild] = pidsFrom(result.output.text);
    seenPids.add(grandchild!);
    expect(isAlive(grandchild!)).toBe(false);
  });

  it("kills grandchildren on timeout", async () => {
    // bash -> bash -> sleep: the inner sleep is a grandchild of the shell we started.
    const result = await run("bash -c 'sleep 60 & echo pid=$!; wait'; echo never", { timeoutMs: 700 });
    expect(result).toMatchObject({ status: "timed_out", stoppedWith: "SIGTERM" });
    const [grandchild] = pidsFrom(result.output.text);
    expect(grandchild).toBeGreaterThan(0);
    seenPids.add(grandchild!);
    expect(isAlive(grandchild!)).toBe(false);
    expect(result.output.text).not.toContain("never");
  });

  it("clamps the timeout and defaults it", () => {
    expect(effectiveTimeout(undefined)).toEqual({ timeoutMs: DEFAULT_TIMEOUT_MS, clamped: false });
    expect(effectiveTimeout(0)).toEqual({ timeoutMs: DEFAULT_TIMEOUT_MS, clamped: false });
    expect(effectiveTimeout(1500)).toEqual({ timeoutMs: 1500, clamped: false });
    expect(effectiveTimeout(MAX_TIMEOUT_MS + 1)).toEqual({ timeoutMs: MAX_TIMEOUT_MS, clamped: true });
  });

  it("stops the whole group when the signal aborts", async () => {
    const controller = new AbortController();
    let seen = "";
    const pending = run("echo pid=$$; sleep 60 & echo pid=$!; wait", {
      signal: controller.signal,
      onOutput: ({ text }) => {
        seen += text;
      },
    });
    await waitFor(() => pidsFrom(seen).length === 2);
    controller.abort();
    const result = await pending;
    expect(result).toMatchObject({ status: "cancelled", stoppedWith: "SIGTERM" });
    for (const pid of pidsFrom(seen)) {
      seenPids.add(pid);
      expect(isAlive(pid)).toBe(false);
    }
  });

  it("does not start a command whose signal is already aborted", async () => {
    const controller = new AbortController();
    controller.abort();
    const marker = path.join(dir, "ran");
    const result = await run(`touch ${marker}`, { signal: controller.signal });
    expect(result).toMatchObject({ status: "cancelled", exitCode: null });
    expect(existsSync(marker)).toBe(false);
  });

  it("reports a command that cannot start", async () => {
    const result = await run("echo hi", { spawnSpec: () => ({ file: path.join(dir, "no-such-shell"), args: [] }) });
    expect(result.status).toBe("failed_to_start");
    expect(result.error?.message).toMatch(/ENOENT/);
  });

  it("streams live output chunks that add up to the output", async () => {
    const chunks: string[] = [];
    const result = await run("for i in 1 2 3; do echo line $i; done; echo oops >&2", {
      onOutput: ({ text }) => chunks.push(text),
    });
    expect(chunks.join("")).toBe("line 1\nline 2\nline 3\noops\n");
    expect(result.output.text).toBe(chunks.join(""));
  });

  it("strips ANSI escape codes", async () => {
    const result = await run("printf '\\033[1;32mgreen\\033[0m \\033]0;title\\007plain\\n'");
    expect(result.output.text).toBe("green plain\n");
  });
});

describe("output capture", () => {
  it("keeps short output in memory and writes no file", async () => {
    const result = await run(`head -c ${MAX_OUTPUT_CHARS} /dev/zero | tr '\\0' x`);
    expect(result.output.truncated).toBe(false);
    expect(result.output.text).toBe("x".repeat(MAX_OUTPUT_CHARS));
    expect(existsSync(path.join(dir, ".mini-cursor"))).toBe(false);
  });

  it("cuts a flood to head + tail and saves the full output to a file", async () => {
    const result = await run("seq 1 2000000");
    const { output } = result;
    expect(result.exitCode).toBe(0);
    expect(output.truncated).toBe(true);
    expect(output.totalLines).toBe(2_000_000);
    expect(output.text.length).toBeLessThanOrEqual(MAX_OUTPUT_CHARS + 300);
    expect(output.text.startsWith("1\n2\n3\n")).toBe(true);
    expect(output.text.endsWith("1999999\n2000000\n")).toBe(true);
    expect(path.dirname(output.savedTo!)).toBe(path.join(stateDirOf(dir), "output"));
    expect(path.basename(output.savedTo!)).toMatch(/^command-.*\.log$/);

    const lines = output.text.split("\n");
    const notice = lines.find((l) => l.startsWith("[..."))!;
    expect(notice).toContain(`Full output (2,000,000 lines) saved to ${output.savedTo}`);
    // Lines shown before and after the notice are whole and consecutive.
    const noticeAt = lines.indexOf(notice);
    const lastHead = Number(lines[noticeAt - 1]);
    const firstTail = Number(lines[noticeAt + 1]);
    expect(lines.slice(0, noticeAt).map(Number)).toEqual(Array.from({ length: lastHead }, (_, i) => i + 1));
    const omitted = firstTail - lastHead - 1;
    expect(notice.startsWith(`[... ${omitted.toLocaleString("en-US")} lines`)).toBe(true);
    expect(lastHead).toBeGreaterThan(HEAD_CHARS / 10);

    const saved = readFileSync(output.savedTo!, "utf8");
    expect(saved.split("\n").length - 1).toBe(2_000_000);
    expect(saved.startsWith("1\n2\n")).toBe(true);
    expect(saved.endsWith("\n1999999\n2000000\n")).toBe(true);
    expect(output.totalChars).toBe(saved.length);
    expect(existsSync(path.join(dir, ".mini-cursor"))).toBe(false);
  });

  it("saves the full output through the output gate: shaped secrets masked, control characters made visible", async () => {
    // Split across the pipe's chunks as it comes: long filler lines, then the dangerous line.
    const token = `ghp_${"A1b2C3d4".repeat(5)}`;
    const script = [
      `for (let i = 0; i < 800; i++) process.stdout.write("filler line " + i + " " + "x".repeat(60) + "\\n");`,
      `process.stdout.write("token ${token} bell \\x07 back \\x08 esc \\x1b(0 cr \\r end\\r\\n");`,
      `process.stdout.write("\\x1b]0;retitled\\x07\\x1b[2Jlast line\\n");`,
    ].join("\n");
    writeFileSync(path.join(dir, "noisy.cjs"), script);
    const result = await run("node noisy.cjs");
    expect(result.output.truncated).toBe(true);
    const saved = readFileSync(result.output.savedTo!, "utf8");
    expect(saved).not.toContain(token);
    expect(saved).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f]/);
    const lines = saved.split("\n");
    expect(lines).toHaveLength(803);
    expect(lines[0]).toBe(`filler line 0 ${"x".repeat(60)}`);
    expect(lines[800]).toBe("token [redacted] bell ^G back ^H esc ^[(0 cr ^M end");
    // Well-formed escape sequences were stripped before; only the text stays.
    expect(lines[801]).toBe("last line");
    expect(lines[802]).toBe("");
  });

  it("refuses to save through a symlinked output folder in the state folder", async () => {
    const outside = makeTempDir();
    try {
      mkdirSync(stateDirOf(dir), { recursive: true });
      symlinkSync(outside.dir, path.join(stateDirOf(dir), "output"));
      const result = await run("seq 1 100000");
      expect(result.output.truncated).toBe(true);
      expect(result.output.savedTo).toBeUndefined();
      expect(result.output.text).toContain("The full output could not be saved");
      expect(readdirSync(outside.dir)).toEqual([]);
    } finally {
      outside.cleanup();
    }
  });

  it("tail ring keeps exactly the last characters", () => {
    const ring = createTailRing(5);
    ring.push("ab");
    ring.push("cd");
    expect(ring.text()).toBe("abcd");
    ring.push("efg");
    expect(ring.text()).toBe("cdefg");
    ring.push("0123456789");
    expect(ring.text()).toBe("56789");
    expect(ring.text(2)).toBe("89");
  });

  it("strips escape codes split across chunks", () => {
    const strip = createAnsiStripper();
    expect(strip("a\x1b[3")).toBe("a");
    expect(strip("2mb\x1b")).toBe("b");
    expect(strip("[0mc")).toBe("c");
    expect(strip("d\x1b[", true)).toBe("d\x1b[");
    expect(stripAnsi("\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\")).toBe("link");
  });
});

describe("background processes", () => {
  it("sees a server's announcement even when its line ends like the start of a secret (held back from redaction)", async () => {
    // The secret's hex form starts "74": the line's end ("7" and its newline; line breaks may fall
    // inside an encoded secret) is held back until the redactor can tell, and a server then prints
    // nothing more. The announcement must not wait for that.
    const secret = `token-${"k".repeat(30)}`;
    const result = await run(`echo "listening on http://127.0.0.1:4567"; exec sleep 60`, { redact: [secret] });
    expect(result.status).toBe("background");
    const bg = result.background!;
    seenPids.add(bg.pid);
    expect(bg.url).toBe("http://127.0.0.1:4567");
  });

  it("redacts a secret inside an announced URL", async () => {
    const result = await run(`echo "ready at http://127.0.0.1:4568/?token=s3cr3t-token-value"; exec sleep 60`, {
      redact: ["s3cr3t-token-value"],
    });
    expect(result.status).toBe("background");
    seenPids.add(result.background!.pid);
    expect(result.background!.url).toBe("http://127.0.0.1:4568/?token=[redacted]");
  });

  it("leaves an announced dev server running, registers it, and stops it", async () => {
    const server = writeFakeDevServer(dir);
    const started = Date.now();
    const result = await run(`node ${server}`);
    expect(result.status).toBe("background");
    expect(Date.now() - started).toBeLessThan(10_000);
    const bg = result.background!;
    seenPids.add(bg.pid);
    expect(bg).toMatchObject({ id: "bg-1", command: `node ${server}`, cwd: dir, running: true, exitCode: null });
    expect(bg.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    expect(result.output.text).toBe(`  ➜  Local:   ${bg.url}\n`);
    expect(registry.list()).toEqual([bg]);
    expect(registry.get("bg-1")).toBe(bg);

    // It keeps serving, and the registry keeps collecting its output.
    const response = await fetch(`${bg.url}hello`);
    expect(await response.text()).toBe("hello from the fake server");
    await waitFor(() => bg.output().includes("request /hello\n"));
    expect(bg.output()).toBe(`  ➜  Local:   ${bg.url}\nrequest /hello\n`);
    expect(bg.output(15)).toBe("request /hello\n");

    expect(await registry.stop("bg-1")).toBe(true);
    expect(bg.running).toBe(false);
    expect(bg.exitCode).toBe(143);
    expect(isAlive(bg.pid)).toBe(false);
    await expect(fetch(bg.url!)).rejects.toThrow();
    expect(await registry.stop("bg-1")).toBe(false);
    expect(await registry.stop("bg-9")).toBe(false);
  });

  it("treats a ready line without a URL as an announcement", async () => {
    const result = await run("echo 'Server listening on port 4000'; echo pid=$$; sleep 60");
    expect(result.status).toBe("background");
    expect(result.background!.url).toBeUndefined();
    expect(result.output.text).toMatch(/^Server listening on port 4000\npid=\d+\n$/);
    seenPids.add(result.background!.pid);
  });

  it("does not background a command that prints a URL and exits within the settle time", async () => {
    const result = await run("echo 'see http://localhost:3000/docs'");
    expect(result).toMatchObject({ status: "exited", exitCode: 0 });
    expect(registry.list()).toEqual([]);
  });

  it("does not background without a registry", async () => {
    const result = await runCommand({
      command: "echo 'listening on http://127.0.0.1:9/'; exit 4",
      cwd: dir,
      workspaceRoot: dir,
    });
    expect(result).toMatchObject({ status: "exited", exitCode: 4 });
  });

  it("marks a background process as ended when it exits on its own", async () => {
    const marker = path.join(dir, "go");
    const result = await run(`echo ready; while [ ! -e ${marker} ]; do sleep 0.05; done; exit 5`);
    expect(result.status).toBe("background");
    const bg = result.background!;
    writeFileSync(marker, "");
    await waitFor(() => !bg.running);
    expect(bg.exitCode).toBe(5);
    expect(await registry.stopAll()).toEqual([]);
  });

  it("stopAll stops every background group and a running foreground command", async () => {
    const first = await run("echo pid=$$; echo ready; sleep 60");
    const second = await run("echo 'Local: http://localhost:5173/'; sleep 60 & echo pid=$!; wait");
    expect([first.status, second.status]).toEqual(["background", "background"]);
    expect(second.background!.url).toBe("http://localhost:5173/");
    let seen = "";
    const foreground = run("echo pid=$$; sleep 60", { onOutput: ({ text }) => void (seen += text) });
    await waitFor(() => pidsFrom(seen).length === 1);

    const pids = [...pidsFrom(first.output.text), ...pidsFrom(second.output.text), ...pidsFrom(seen)];
    pids.forEach((p) => seenPids.add(p));
    expect(pids).toHaveLength(3);
    const stopped = await registry.stopAll();
    expect(stopped.map((p) => p.id)).toEqual(["bg-1", "bg-2"]);
    expect((await foreground).status).toBe("cancelled");
    for (const pid of [...pids, first.background!.pid, second.background!.pid]) expect(isAlive(pid)).toBe(false);
    expect(registry.list().map((p) => p.running)).toEqual([false, false]);
  });

  it("waits the settle time after the announcement before returning", async () => {
    const started = Date.now();
    const result = await run("echo ready; sleep 0.1; echo more; sleep 60");
    expect(result.status).toBe("background");
    expect(Date.now() - started).toBeGreaterThanOrEqual(BACKGROUND_SETTLE_MS - 50);
    expect(result.output.text).toBe("ready\nmore\n");
    seenPids.add(result.background!.pid);
  });
});

describe("groupAlive", () => {
  it("sees a group until it is gone", async () => {
    const result = await run("echo pid=$$; echo ready; sleep 60");
    const pid = result.background!.pid;
    expect(groupAlive(pid)).toBe(true);
    await registry.stopAll();
    expect(groupAlive(pid)).toBe(false);
  });
});
