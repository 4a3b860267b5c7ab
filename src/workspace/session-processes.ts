import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { hasExited, processAlive, procStat } from "../process-life.js";

/**
 * Processes a session left behind. Every command gets MINI_CURSOR_SESSION=<pid>-<random> in
 * its environment, and its children inherit it — also those that leave the process group
 * with `setsid`, which a kill of the group misses. Without a sandbox (whose PID namespace
 * dies with mini-cursor), /proc tells which processes carry our session, and their
 * descendants are found through their parents.
 *
 * Not covered: a program started with a wiped environment (`env -i`) whose parent exits
 * before we look (it is reparented away from the tree we can see). A Linux child subreaper
 * (PR_SET_CHILD_SUBREAPER) would keep such orphans under us, but Node cannot call prctl and
 * a native addon is not worth it here. When mini-cursor itself is SIGKILLed nothing runs at
 * exit: the next mini-cursor to start a command stops what sessions whose process is gone
 * left behind.
 */

export const SESSION_VARIABLE = "MINI_CURSOR_SESSION";
/** This process's session: its pid first, so a later run can tell the owner is gone. */
export const SESSION_ID = `${process.pid}-${randomBytes(4).toString("hex")}`;

interface ProcessInfo {
  pid: number;
  ppid: number;
  session?: string;
}

function readInfo(pid: number): ProcessInfo | undefined {
  const stat = procStat(pid);
  if (!stat || hasExited(stat)) return undefined; // zombies hold nothing and cannot be killed
  let session: string | undefined;
  try {
    const env = readFileSync(`/proc/${pid}/environ`, "latin1");
    const entry = env.split("\0").find((e) => e.startsWith(`${SESSION_VARIABLE}=`));
    session = entry?.slice(SESSION_VARIABLE.length + 1);
  } catch {
    // another user's process: not ours to stop
  }
  return { pid, ppid: stat.ppid, session };
}

function scan(): ProcessInfo[] {
  let names: string[];
  try {
    names = readdirSync("/proc");
  } catch {
    return [];
  }
  return names.flatMap((name) => (/^\d+$/.test(name) ? (readInfo(Number(name)) ?? []) : []));
}

/** This process and its ancestors: never stopped, whatever their environment says. */
function ancestry(all: Map<number, ProcessInfo>): Set<number> {
  const out = new Set<number>();
  for (let pid: number | undefined = process.pid; pid && !out.has(pid); pid = all.get(pid)?.ppid) out.add(pid);
  return out;
}

/** Processes carrying a session accepted by `match`, and all their descendants. */
function processesOf(match: (session: string) => boolean): number[] {
  const list = scan();
  const all = new Map(list.map((p) => [p.pid, p]));
  const spared = ancestry(all);
  const children = new Map<number, number[]>();
  for (const p of list) children.set(p.ppid, [...(children.get(p.ppid) ?? []), p.pid]);
  const found = new Set<number>();
  const visit = (pid: number) => {
    if (found.has(pid) || spared.has(pid)) return;
    found.add(pid);
    for (const child of children.get(pid) ?? []) visit(child);
  };
  for (const p of list) if (p.session !== undefined && match(p.session)) visit(p.pid);
  return [...found];
}

/** Signals each pid (a negative one: its process group), skipping those already gone. */
export function signal(pids: number[], sig: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, sig);
    } catch {
      // already gone
    }
  }
}

/** Pids left by this session (Linux; empty elsewhere). */
export function sessionProcesses(session = SESSION_ID): number[] {
  if (process.platform !== "linux") return [];
  return processesOf((s) => s === session);
}

/** For an exiting process: SIGKILL everything this session left (synchronous). */
export function killSessionProcessesSync(): void {
  signal(sessionProcesses(), "SIGKILL");
}

/** SIGTERM to what this session left, SIGKILL to what is still there after `graceMs`. */
export async function stopSessionProcesses(graceMs: number, pollMs = 25): Promise<number> {
  const first = sessionProcesses();
  if (first.length === 0) return 0;
  signal(first, "SIGTERM");
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline && sessionProcesses().length > 0) await new Promise((r) => setTimeout(r, pollMs));
  signal(sessionProcesses(), "SIGKILL");
  return first.length;
}

/** SIGKILLs what sessions whose mini-cursor is gone (e.g. SIGKILLed) left; returns their pids. */
export function reapDeadSessions(): number[] {
  if (process.platform !== "linux") return [];
  const owners = new Map<string, boolean>();
  const dead = (session: string) => {
    if (!owners.has(session)) {
      const owner = Number(/^(\d+)-[0-9a-f]+$/.exec(session)?.[1]);
      owners.set(session, Boolean(owner) && owner !== process.pid && !processAlive(owner));
    }
    return owners.get(session)!;
  };
  const pids = processesOf(dead);
  signal(pids, "SIGKILL");
  return pids;
}
