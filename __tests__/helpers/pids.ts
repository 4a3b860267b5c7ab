import { readFileSync } from "node:fs";

/** A live process; zombies count as dead (PID 1 in some containers never reaps orphans). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return process.platform !== "linux";
  }
}

/** The pids a test command printed as `pid=<n>`. */
export const pidsFrom = (text: string): number[] => [...text.matchAll(/pid=(\d+)/g)].map((m) => Number(m[1]));

/** SIGKILLs every pid still there (cleanup after a test). */
export function killPids(pids: Iterable<number>): void {
  for (const pid of pids) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
}
