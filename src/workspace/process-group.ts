import { readdirSync } from "node:fs";
import { hasExited, procStat } from "../process-life.js";
import { killSessionProcessesSync, reapDeadSessions, signal } from "./session-processes.js";

/**
 * Process groups: every command runs in its own group, so stopping it stops what it started.
 * Groups still alive when Node exits are killed by an exit hook.
 */
/** Time between SIGTERM and SIGKILL when stopping a process group. */
export const KILL_GRACE_MS = 2_000;
/** How often we look whether a signalled group is gone. */
const GROUP_POLL_MS = 25;
/** How long we wait for the kernel to reap a group after SIGKILL before giving up on it. */
export const KILL_CONFIRM_MS = 2_000;

/** Every group we started and have not seen die, so they can be killed if Node exits first. */
const liveGroups = new Set<number>();
let exitHookInstalled = false;

export function rememberGroup(pgid: number): void {
  liveGroups.add(pgid);
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // Orphans of a mini-cursor that was SIGKILLed (and so could not clean up) go first.
  reapDeadSessions();
  // Detached groups survive their parent; an exiting Node can still kill them synchronously.
  // Processes that left their group (setsid) are found by the session variable they carry.
  process.once("exit", () => {
    signal(
      [...liveGroups].map((group) => -group),
      "SIGKILL",
    );
    killSessionProcessesSync();
  });
}

/**
 * Whether any live process is left in the group. On Linux zombies are ignored: where PID 1
 * does not reap orphans (some containers), kill(-pgid, 0) would report a dead group alive.
 */
export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
  if (process.platform !== "linux") return true;
  return readdirSync("/proc").some((entry) => {
    const stat = /^\d+$/.test(entry) ? procStat(entry) : undefined;
    return stat !== undefined && !hasExited(stat) && stat.pgrp === pgid; // zombies hold no resources
  });
}

export async function waitUntil(check: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() >= deadline) return false;
    await new Promise((r) => setTimeout(r, GROUP_POLL_MS));
  }
  return true;
}

/** What it took to stop a group. */
export type StopOutcome = "none" | "SIGTERM" | "SIGKILL";

/** SIGTERM to the whole group, SIGKILL to whatever is left after `graceMs`. */
export async function stopGroup(pgid: number, graceMs = KILL_GRACE_MS): Promise<StopOutcome> {
  if (!groupAlive(pgid)) {
    liveGroups.delete(pgid);
    return "none";
  }
  signal([-pgid], "SIGTERM");
  let outcome: StopOutcome = "SIGTERM";
  if (!(await waitUntil(() => !groupAlive(pgid), graceMs))) {
    signal([-pgid], "SIGKILL");
    outcome = "SIGKILL";
    await waitUntil(() => !groupAlive(pgid), KILL_CONFIRM_MS);
  }
  liveGroups.delete(pgid);
  return outcome;
}
