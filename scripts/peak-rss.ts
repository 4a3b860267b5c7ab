import { readFileSync } from "node:fs";

/**
 * This process's peak resident memory, in bytes: VmHWM, the high-water mark of its own address
 * space. Not `process.resourceUsage().maxRSS`: Linux carries that across exec from the forked
 * copy of the parent, so a probe started by a benchmark that holds 500 MB reported 500 MB.
 */
export function peakRssBytes(): number {
  try {
    const kb = /VmHWM:\s+(\d+) kB/.exec(readFileSync("/proc/self/status", "utf8"))?.[1];
    if (kb) return Number(kb) * 1024;
  } catch {
    // Not Linux: the rusage figure, as good as it gets there.
  }
  return process.resourceUsage().maxRSS * 1024;
}
