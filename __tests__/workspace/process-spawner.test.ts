import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { SPAWN_HELPERS, spawnHelperPids, spawnHelperReady } from "../../src/workspace/process-spawner.js";
import { runCommand, type RunCommandOptions } from "../../src/workspace/processes.js";
import { makeTempDir, waitFor } from "../helpers/tmp.js";
import { isAlive, killPids } from "../helpers/pids.js";
import { formatCommandResult } from "../../src/tools/execute-command.js";

/**
 * Issue 30, goal 6: commands start through small helper processes (workspace/process-spawner.ts),
 * so a session's large heap is not forked once per command. What a command sees and gives back
 * is the same as with a direct child; a helper never outlives the session and never keeps it
 * alive; when one stops, commands start directly again.
 */

const ROOT = path.resolve(import.meta.dirname, "../..");
let tmp: ReturnType<typeof makeTempDir>;
beforeAll(() => {
  tmp = makeTempDir();
});
afterAll(() => tmp.cleanup());

const run = (command: string, extra: Partial<RunCommandOptions> = {}) =>
  runCommand({ command, cwd: tmp.dir, workspaceRoot: tmp.dir, timeoutMs: 60_000, ...extra });

/** Field 4 (ppid) and 5 (process group) of /proc/<pid>/stat, read by the command itself. */
const FAMILY = `read -r stat < /proc/$$/stat; set -- \${stat##*) }; echo "pid=$$ ppid=$2 pgrp=$3"`;

function family(text: string): { pid: number; ppid: number; pgrp: number } {
  const m = /pid=(\d+) ppid=(\d+) pgrp=(\d+)/.exec(text);
  if (!m) throw new Error(`no family line in ${JSON.stringify(text)}`);
  return { pid: Number(m[1]), ppid: Number(m[2]), pgrp: Number(m[3]) };
}

/** Runs a script of this repository with tsx in a child Node; its stdout lines as they come. */
function startScript(source: string) {
  const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", source], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr.on("data", (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { child, output: () => out, exited };
}

describe("commands started through the helper", () => {
  it("the helpers start and a command's parent is one of them, in a process group of its own", async () => {
    expect(await spawnHelperReady()).toBe(true);
    expect(spawnHelperPids()).toHaveLength(SPAWN_HELPERS);
    const result = await run(FAMILY);
    expect(result.status).toBe("exited");
    expect(result.exitCode).toBe(0);
    const f = family(result.output.text);
    expect(spawnHelperPids()).toContain(f.ppid);
    expect(f.pgrp).toBe(f.pid);
  });

  it("gives the exact output in order, the exit code, and a signal's status", async () => {
    const result = await run("echo out; echo err >&2; printf 'no newline'; exit 7");
    expect(result).toMatchObject({ status: "exited", exitCode: 7 });
    expect(result.output.text).toBe("out\nerr\nno newline");
    const killed = await run("kill -TERM $$");
    expect(killed).toMatchObject({ status: "exited", exitCode: 143, signal: "SIGTERM" });
  });

  it("passes every byte of a large output through the pipe it handed over", async () => {
    const result = await run("seq 1 300000");
    expect(result.output.totalLines).toBe(300_000);
    expect(result.output.totalChars).toBe(
      Array.from({ length: 300_000 }, (_, i) => String(i + 1).length + 1).reduce((a, b) => a + b, 0),
    );
  });

  it("reports a command that cannot start, with the reason", async () => {
    const missing = await run("echo hi", { cwd: path.join(tmp.dir, "no-such-dir") });
    expect(missing.status).toBe("failed_to_start");
    expect(missing.error?.message).toMatch(/ENOENT/);
    expect((missing.error as NodeJS.ErrnoException).code).toBe("ENOENT");
  });

  it("starts 20 commands at once, spread over the helpers: every one is running before any is let go", async () => {
    const marks = path.join(tmp.dir, "marks");
    mkdirSync(marks);
    const runs = Array.from({ length: 20 }, (_, i) =>
      run(`touch marks/start-${i}; until [ -e marks/go ]; do sleep 0.02; done; ${FAMILY}`),
    );
    try {
      await waitFor(() => readdirSync(marks).length === 20, 60_000);
    } finally {
      writeFileSync(path.join(marks, "go"), "");
    }
    const results = await Promise.all(runs);
    const parents = results.map((r) => family(r.output.text).ppid);
    expect(results.map((r) => r.exitCode)).toEqual(Array(20).fill(0));
    expect([...new Set(parents)].sort()).toEqual([...spawnHelperPids()].sort());
  });

  it("stops a command whose run is cancelled while the helper is starting it", async () => {
    const controller = new AbortController();
    const pending = run("echo pid=$$; exec sleep 60", { signal: controller.signal });
    controller.abort();
    const result = await pending;
    expect(result.status).toBe("cancelled");
    for (const pid of [...result.output.text.matchAll(/pid=(\d+)/g)].map((m) => Number(m[1])))
      expect(isAlive(pid)).toBe(false);
  });

  it("stops the group of a command on timeout, as with a direct child", async () => {
    const result = await run("trap '' TERM; sleep 30 & echo pid=$!; wait", { timeoutMs: 300 });
    expect(result.status).toBe("timed_out");
    expect(result.stoppedWith).toBe("SIGKILL");
    const pid = Number(/pid=(\d+)/.exec(result.output.text)![1]);
    expect(isAlive(pid)).toBe(false);
  });

  it("a stopped command whose end is never reported gets an unknown status, not a made-up exit code", async () => {
    // The helper that forked it is frozen: the group is stopped, but nobody reports the shell's end.
    const controller = new AbortController();
    let seen = "";
    const pending = run(`${FAMILY}; exec sleep 60`, { signal: controller.signal, onOutput: (c) => (seen += c.text) });
    await waitFor(() => /ppid=\d+/.test(seen) || undefined, 30_000);
    const { pid, ppid: helper } = family(seen);
    expect(spawnHelperPids()).toContain(helper);
    process.kill(helper, "SIGSTOP");
    try {
      controller.abort();
      const result = await pending;
      expect(isAlive(pid)).toBe(false);
      expect(result).toMatchObject({ status: "cancelled", exitCode: null, exitUnseen: true, stoppedWith: "SIGTERM" });
      expect(formatCommandResult(result).split("\n").slice(1)).toEqual([
        "Exit status unknown: its end was not seen within 2 s of stopping its process group (a process stuck in the kernel, e.g. on a hung disk or network mount); run it again if the result matters",
        `pid=${pid} ppid=${helper} pgrp=${pid}`,
      ]);
    } finally {
      process.kill(helper, "SIGCONT");
    }
  });
});

describe("the helper and the session", () => {
  it("does not keep a session alive, and exits when the session is killed", async () => {
    const load = `
      const { spawnHelperReady, spawnHelperPids } = await import("./src/workspace/process-spawner.ts");
      const { runCommand } = await import("./src/workspace/processes.ts");
      (await import("./src/app/configure.ts")).configureParts();
      await spawnHelperReady();
      console.log("helpers=" + spawnHelperPids().join(","));
      const r = await runCommand({ command: "echo ran", cwd: ${JSON.stringify(tmp.dir)}, workspaceRoot: ${JSON.stringify(tmp.dir)} });
      console.log(r.output.text.trim());`;
    // Done with its work, the session exits on its own; its helper goes with it.
    const finished = startScript(load);
    const code = await finished.exited;
    expect({ code, output: finished.output() }).toEqual({
      code: 0,
      output: expect.stringMatching(/helpers=\d+,\d+\nran\n$/),
    });
    const first = /helpers=([\d,]+)/.exec(finished.output())![1]!.split(",").map(Number);
    await waitFor(() => first.every((pid) => !isAlive(pid)), 30_000);
    // Killed while it waits, the session leaves no helper behind.
    const killed = startScript(`${load}\nsetInterval(() => {}, 1000);`);
    const line = await waitFor(() => /helpers=([\d,]+)/.exec(killed.output()), 60_000);
    const helperPids = line![1]!.split(",").map(Number);
    await waitFor(() => killed.output().includes("ran"), 60_000);
    killed.child.kill("SIGKILL");
    await killed.exited;
    try {
      await waitFor(() => helperPids.every((pid) => !isAlive(pid)), 30_000);
    } finally {
      killPids(helperPids);
    }
  }, 120_000);

  it("a command running when its helper dies still returns its output, and later commands start directly", async () => {
    const marks = path.join(tmp.dir, "late");
    mkdirSync(marks);
    // Run on its own (-t), no earlier test has started the helpers.
    expect(await spawnHelperReady()).toBe(true);
    // The session has the command's pipes once its first line arrives: the helper is killed only then.
    let seen = "";
    const running = run(
      `${FAMILY} > late/family; echo started; until [ -e late/go ]; do sleep 0.02; done; echo finished`,
      { onOutput: (chunk) => (seen += chunk.text) },
    );
    await waitFor(() => seen.includes("started\n") || undefined, 30_000);
    const familyFile = path.join(marks, "family");
    const match = await waitFor(
      () =>
        (existsSync(familyFile) ? /ppid=(\d+) pgrp=\d+\n/.exec(readFileSync(familyFile, "utf8")) : null) ?? undefined,
      30_000,
    );
    const parent = Number(match![1]);
    expect(spawnHelperPids()).toContain(parent);
    process.kill(parent, "SIGKILL");
    await waitFor(() => !isAlive(parent), 30_000);
    writeFileSync(path.join(marks, "go"), "");
    const result = await running;
    expect(result.output.text).toBe("started\nfinished\n");
    expect(result.status).toBe("exited");
    // Its status went with the helper: the model is told so, not a made-up exit code.
    expect(result.helperLost).toEqual({ helperPid: parent, how: "killed by SIGKILL" });
    expect(result.exitCode).toBeNull();
    expect(formatCommandResult(result)).toBe(
      `Exit status unknown (its spawn helper ${parent} died: killed by SIGKILL); run it again if the result matters\nstarted\nfinished`,
    );
    const later = await run(FAMILY);
    expect(family(later.output.text).ppid).toBe(process.pid);
    expect(spawnHelperPids()).not.toContain(parent);
    expect(await spawnHelperReady()).toBe(false);
  });
});
