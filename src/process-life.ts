import { readFileSync } from "node:fs";

/**
 * Whether a process still runs: the one liveness check of the code base. A process that has
 * exited but was not reaped yet (a zombie: its parent has not waited for it, or PID 1 does not
 * reap orphans, as in some containers) still answers `kill(pid, 0)`, and its /proc entry is still
 * there with its start time; but it holds nothing any more (no lock, no file, no connection) and
 * does nothing again, so it counts as gone. Linux says so in /proc/<pid>/stat; elsewhere only
 * `kill(pid, 0)` is asked.
 */

/** What /proc/<pid>/stat says of a process that matters here. */
export interface ProcStat {
  /** One letter: R running, S sleeping, D disk wait, T stopped, Z zombie, X dead, … */
  state: string;
  ppid: number;
  /** Its process group. */
  pgrp: number;
  /** Its start time in clock ticks since boot: with the pid, it names this process and no later one. */
  start: string;
}

/** States of a process that has exited (zombie, dead). */
const EXITED_STATES = new Set(["Z", "X", "x"]);

/** /proc/<pid>/stat, read after the parenthesised command name (which may hold spaces and parentheses). */
export function procStat(pid: number | string): ProcStat | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return { state: fields[0]!, ppid: Number(fields[1]), pgrp: Number(fields[2]), start: fields[19]! };
  } catch {
    return undefined;
  }
}

/** Whether a /proc/<pid>/stat state is that of a process that has exited. */
export const hasExited = (stat: ProcStat): boolean => EXITED_STATES.has(stat.state);

/**
 * Whether process `pid` runs (EPERM: it does, another user's). A zombie does not. Where /proc
 * hides other users' processes (hidepid), `kill(pid, 0)`'s answer stands.
 */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  if (process.platform !== "linux") return true;
  const stat = procStat(pid);
  return stat === undefined || !hasExited(stat);
}

/** Its start time while process `pid` runs (Linux); undefined once it is gone or has exited, and elsewhere. */
export function processStartTime(pid: number): string | undefined {
  const stat = process.platform === "linux" ? procStat(pid) : undefined;
  return stat && !hasExited(stat) ? stat.start : undefined;
}

/**
 * What tells process `pid` from a later one given the same pid: its start time on Linux,
 * "alive" elsewhere; undefined once it is gone or has exited (a zombie).
 */
export function processIdentity(pid: number): string | undefined {
  if (process.platform !== "linux") return processAlive(pid) ? "alive" : undefined;
  return processStartTime(pid);
}
