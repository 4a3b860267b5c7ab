import { getMaxListeners, setMaxListeners } from "node:events";
import path from "node:path";
import { callEffects, type ToolLike } from "../policy/effects.js";
import { MAX_CONCURRENT_CALLS } from "../tools/concurrency.js";
import { mcpCallPaths } from "../mcp/paths.js";

/**
 * Which calls of one model turn run one after another (issue 28): two calls that touch the same
 * path, one of them writing, run in the order the model gave, so a second edit_file sees the
 * first one's result; calls on different paths still run at the same time. A call that may
 * touch anything (a command, a tool that declares no paths, an MCP tool without path
 * arguments: mcp/paths.ts) waits for every call before it and every call after it waits for
 * it, except that the commands of one turn run together (issue 30: a model that sends several commands at once sends independent ones, and
 * the tool description tells it to chain dependent ones with &&). At most MAX_CONCURRENT_CALLS
 * run at a time. Both engines run their calls through here.
 */

export { MAX_CONCURRENT_CALLS };

/** Abort listeners one running call may add to the run's signal: its tool's race, a command's process group, a hook. */
const ABORT_LISTENERS_PER_CALL = 4;
/** Node's own limit, kept for whatever else listens to the signal. */
const DEFAULT_MAX_LISTENERS = 10;

/**
 * Raises the listener limit of the signal a turn's calls share, so up to MAX_CONCURRENT_CALLS of
 * them listening at once are not reported as a leak (Node prints a MaxListenersExceededWarning
 * past 10, which 20 commands of one turn reached).
 */
export function allowConcurrentListeners(signal: AbortSignal | undefined, calls: number): void {
  if (!signal) return;
  const needed = Math.min(calls, MAX_CONCURRENT_CALLS) * ABORT_LISTENERS_PER_CALL + DEFAULT_MAX_LISTENERS;
  if (getMaxListeners(signal) < needed) setMaxListeners(needed, signal);
}

/** What one call touches: the absolute paths (undefined: anything), and whether it may write. */
export interface CallAccess {
  writes: boolean;
  paths: string[] | undefined;
  /** A shell command (execute kind): commands of one turn do not wait for each other. */
  command?: boolean;
}

/** A call's access from what its tool declares; paths are resolved against the workspace. */
export function accessOf(
  call: { name: string; args: Record<string, unknown> },
  tools: readonly ToolLike[] | undefined,
  workspace: string,
): CallAccess {
  const effects = callEffects(call, tools);
  return {
    writes: effects.kind !== "read",
    paths: (effects.paths ?? mcpCallPaths(call, tools))?.map((p) => path.resolve(workspace, p)),
    ...(effects.kind === "execute" ? { command: true } : {}),
  };
}

/** One path is the other or holds it (a listing of `src` and an edit of `src/a.ts` overlap). */
function overlap(a: string, b: string): boolean {
  return a === b || b.startsWith(`${a}${path.sep}`) || a.startsWith(`${b}${path.sep}`);
}

/** Whether two calls must not run at the same time: one writes and they may touch a common path. */
export function conflicts(a: CallAccess, b: CallAccess): boolean {
  if (!a.writes && !b.writes) return false;
  if (a.command && b.command) return false;
  if (a.paths === undefined || b.paths === undefined) return true;
  return a.paths.some((p) => b.paths!.some((q) => overlap(p, q)));
}

/** Places for at most `limit` holders; waiters get theirs in the order they asked. */
function placeLimiter(limit: number) {
  let free = limit;
  const waiting: (() => void)[] = [];
  return {
    async take(): Promise<void> {
      if (free > 0) {
        free--;
        return;
      }
      await new Promise<void>((resolve) => waiting.push(resolve));
    },
    give(): void {
      const next = waiting.shift();
      if (next) next();
      else free++;
    },
  };
}

/**
 * Runs every call, each as soon as the earlier calls it conflicts with have finished (failed
 * or not) and one of `limit` places is free; results in call order. A rejection (a cancelled
 * run) rejects the whole, as Promise.all does.
 */
export function runScheduled<C, T>(
  calls: readonly C[],
  access: (call: C) => CallAccess,
  run: (call: C) => Promise<T>,
  limit = MAX_CONCURRENT_CALLS,
): Promise<T[]> {
  const accesses = calls.map(access);
  const places = placeLimiter(Math.max(1, limit));
  const settled: Promise<unknown>[] = [];
  const results = calls.map((call, i) => {
    const before = settled.filter((_, j) => conflicts(accesses[i]!, accesses[j]!));
    const result = Promise.all(before).then(async () => {
      await places.take();
      try {
        return await run(call);
      } finally {
        places.give();
      }
    });
    settled.push(result.catch(() => undefined));
    return result;
  });
  return Promise.all(results);
}
