import { afterEach, describe, expect, test } from "@jest/globals";
import { spawn, type ChildProcess } from "node:child_process";
import { hasExited, processAlive, processIdentity, processStartTime, procStat } from "../src/process-life.js";
import { waitFor } from "./helpers/tmp.js";

/**
 * The one liveness check: a process that has exited but was not reaped (a zombie) is gone. A
 * zombie is made as a process manager without a wait makes one: `sleep` (which never waits)
 * replaces the shell that started the child, and the child is then killed.
 */

const linux = process.platform === "linux";

/** A child of a parent that never reaps it, and that parent; the child's pid is printed first. */
async function zombieParent(): Promise<{ parent: ChildProcess; child: number }> {
  const parent = spawn("sh", ["-c", "sleep 600 & echo $!; exec sleep 600"], { stdio: ["ignore", "pipe", "ignore"] });
  let out = "";
  parent.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  const child = Number(await waitFor(() => /^(\d+)\n/.exec(out)?.[1], 10_000));
  return { parent, child };
}

describe("process-life", () => {
  let parent: ChildProcess | undefined;
  let child: number | undefined;
  afterEach(() => {
    try {
      if (child) process.kill(child, "SIGKILL");
    } catch {
      // already gone
    }
    parent?.kill("SIGKILL");
    parent?.stdout?.destroy();
    parent = undefined;
    child = undefined;
  });

  test("a running process is alive and has an identity; this one too", async () => {
    const made = await zombieParent();
    ({ parent, child } = made);
    expect(processAlive(made.child)).toBe(true);
    expect(processAlive(process.pid)).toBe(true);
    if (linux) {
      expect(processIdentity(made.child)).toBe(procStat(made.child)!.start);
      expect(processStartTime(made.child)).toBe(procStat(made.child)!.start);
      expect(procStat(made.child)!.ppid).toBe(made.parent.pid);
    }
  });

  (linux ? test : test.skip)(
    "a zombie (exited, not reaped) is gone: not alive, no identity, no start time",
    async () => {
      const made = await zombieParent();
      ({ parent, child } = made);
      const start = processStartTime(made.child);
      expect(start).toBeDefined();
      process.kill(made.child, "SIGKILL");
      await waitFor(() => procStat(made.child)?.state === "Z", 10_000);
      // Still answers kill(pid, 0), and /proc still shows its start time: the old checks said "alive".
      expect(() => process.kill(made.child, 0)).not.toThrow();
      expect(procStat(made.child)!.start).toBe(start);
      expect(hasExited(procStat(made.child)!)).toBe(true);
      expect(processAlive(made.child)).toBe(false);
      expect(processIdentity(made.child)).toBeUndefined();
      expect(processStartTime(made.child)).toBeUndefined();
    },
  );

  test("a pid that names no process is gone", () => {
    // Above the kernel's largest pid (4194304): never a process.
    expect(processAlive(2 ** 22 + 1)).toBe(false);
    expect(processIdentity(2 ** 22 + 1)).toBeUndefined();
  });
});
