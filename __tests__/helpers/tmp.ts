import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";

/** A fresh real temp directory (symlinks resolved); remove it with `cleanup`. */
export function makeTempDir(prefix = "mini-cursor-test-"): { dir: string; cleanup: () => void } {
  const dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), prefix)));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Polls `check` until it returns a truthy value or the deadline passes (no fixed sleeps). */
export async function waitFor<T>(check: () => T | Promise<T>, timeoutMs = 10_000, intervalMs = 25): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`waitFor: condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
