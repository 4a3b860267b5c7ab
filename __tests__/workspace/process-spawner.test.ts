import { spawn } from "node:child_process";
import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { spawnHelperPid, spawnHelperReady } from "../../src/workspace/process-spawner.js";
import { runCommand, type RunCommandOptions } from "../../src/workspace/processes.js";
import { makeTempDir, waitFor } from "../helpers/tmp.js";
import { isAlive, killPids } from "../helpers/pids.js";

/**
 * Issue 30, goal 6: commands start through a small helper process (workspace/process-spawner.ts),
 * so a session's large heap is not forked once per command. What a command sees and gives back
 * is the same as with a direct child; the helper never outlives the session and never keeps it
 * alive; when it stops, commands start directly again.
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
  it("the helper starts and a command's parent is the helper, in a process group of its own", async () => {
    expect(await spawnHelperReady()).toBe(true);
    const helper = spawnHelperPid()!;
    expect(helper).toBeGreaterThan(0);
    const result = await run(FAMILY);
    expect(result.status).toBe("exited");
    expect(result.exitCode).toBe(0);
    const f = family(result.output.text);
    expect(f.ppid).toBe(helper);
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

  it("starts 20 commands at once: every one is running before any is let go", async () => {
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
    const helper = spawnHelperPid();
    for (const r of results) {
      expect(r.exitCode).toBe(0);
      expect(family(r.output.text).ppid).toBe(helper);
    }
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
});

describe("the helper and the session", () => {
  it("does not keep a session alive, and exits when the session is killed", async () => {
    const load = `
      const { spawnHelperReady, spawnHelperPid } = await import("./src/workspace/process-spawner.ts");
      const { runCommand } = await import("./src/workspace/processes.ts");
      await spawnHelperReady();
      console.log("helper=" + spawnHelperPid());
      const r = await runCommand({ command: "echo ran", cwd: ${JSON.stringify(tmp.dir)}, workspaceRoot: ${JSON.stringify(tmp.dir)} });
      console.log(r.output.text.trim());`;
    // Done with its work, the session exits on its own; its helper goes with it.
    const finished = startScript(load);
    expect(await finished.exited).toBe(0);
    expect(finished.output()).toMatch(/helper=\d+\nran\n$/);
    const first = Number(/helper=(\d+)/.exec(finished.output())![1]);
    await waitFor(() => !isAlive(first), 30_000);
    // Killed while it waits, the session leaves no helper behind.
    const killed = startScript(`${load}\nsetInterval(() => {}, 1000);`);
    const helperPid = Number((await waitFor(() => /helper=(\d+)/.exec(killed.output()), 60_000))![1]);
    await waitFor(() => killed.output().includes("ran"), 60_000);
    killed.child.kill("SIGKILL");
    await killed.exited;
    try {
      await waitFor(() => !isAlive(helperPid), 30_000);
    } finally {
      killPids([helperPid]);
    }
  }, 120_000);

  it("a command running when the helper dies still returns its output, and later commands start directly", async () => {
    const helper = spawnHelperPid()!;
    const marks = path.join(tmp.dir, "late");
    mkdirSync(marks);
    const running = run("touch late/started; until [ -e late/go ]; do sleep 0.02; done; echo finished");
    await waitFor(() => readdirSync(marks).includes("started"), 30_000);
    process.kill(helper, "SIGKILL");
    await waitFor(() => !isAlive(helper), 30_000);
    writeFileSync(path.join(marks, "go"), "");
    const result = await running;
    expect(result.output.text).toBe("finished\n");
    expect(result.status).toBe("exited");
    const later = await run(FAMILY);
    expect(family(later.output.text).ppid).toBe(process.pid);
    expect(spawnHelperPid()).toBeUndefined();
    expect(await spawnHelperReady()).toBe(false);
  });
});
