import path from "node:path";
import { getMaxListeners, setMaxListeners } from "node:events";
import { dispatchOf, type CallAccess, type Guard } from "./guard.js";

/**
 * Which calls of one model turn run one after another (issue 28): two calls that touch the same
 * path, one of them writing, run in the order the model gave, so a second edit_file sees the
 * first one's result; calls on different paths run at the same time. A call that may touch
 * anything (a command, a tool that declares no paths) waits for every call before it and every
 * call after it waits for it, except that the commands of one turn run together (issue 30: a
 * model that sends several commands at once sends independent ones, and the tool description
 * tells it to chain dependent ones with &&). At most MAX_CONCURRENT_CALLS run at a time.
 *
 * The calls of a turn start together (LangGraph runs the Sends of a superstep in parallel, the
 * loop starts them all at once); each waits here for the earlier ones it conflicts with. Which
 * calls run together, and what each touches, the engine says with the call (Dispatch.batch).
 */

/**
 * Abort listeners one call may add to the run's signal: its wait for earlier calls here, then its
 * tool's race, a command's process group, a hook.
 */
const ABORT_LISTENERS_PER_CALL = 5;
/** Node's own limit, kept for whatever else listens to the signal. */
const DEFAULT_MAX_LISTENERS = 10;

/**
 * Raises the listener limit of the signal a turn's calls share, so up to MAX_CONCURRENT_CALLS of
 * them listening at once are not reported as a leak (Node prints a MaxListenersExceededWarning
 * past 10, which 20 commands of one turn reached).
 */
function allowConcurrentListeners(signal: AbortSignal | undefined, calls: number): void {
  if (!signal) return;
  const needed = Math.min(calls, MAX_CONCURRENT_CALLS) * ABORT_LISTENERS_PER_CALL + DEFAULT_MAX_LISTENERS;
  if (getMaxListeners(signal) < needed) setMaxListeners(needed, signal);
}

/**
 * The most calls of one model turn that run at the same time; the others wait for a free place in
 * call order. Above the twenty independent commands a model commonly sends at once (issue 30),
 * below what a small machine's process table minds.
 */
export const MAX_CONCURRENT_CALLS = 24;

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

/** A promise settled from outside (a call's end, which later calls wait for). */
function deferred(): { promise: Promise<void>; settle: () => void } {
  let settle: () => void = () => undefined;
  const promise = new Promise<void>((resolve) => {
    settle = resolve;
  });
  return { promise, settle };
}

interface Turn {
  ends: Map<string, ReturnType<typeof deferred>>;
  left: number;
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

/** `wait`, or a throw when `signal` stops first. */
async function untilStopped(wait: Promise<unknown>, signal: AbortSignal | undefined): Promise<void> {
  if (!signal) {
    await wait;
    return;
  }
  signal.throwIfAborted();
  let onAbort: () => void = () => undefined;
  const stopped = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason ?? new Error("aborted"));
    signal.addEventListener("abort", onAbort, { once: true });
  });
  try {
    await Promise.race([wait, stopped]);
  } finally {
    signal.removeEventListener("abort", onAbort);
  }
}

/** The order guard of one toolset: the calls of a turn share its places and wait for each other here. */
export function orderGuard(limit = MAX_CONCURRENT_CALLS): Guard {
  const turns = new Map<string, Turn>();
  const places = placeLimiter(Math.max(1, limit));
  return async (context, next) => {
    const { batch } = dispatchOf(context);
    allowConcurrentListeners(context.config.signal, batch.length);
    // Call ids repeat across threads and across a thread's sub-agents (servers that number a
    // response's calls give each `call_0`): a turn is known by its conversation and its calls.
    const { thread_id: thread, conversation } = context.config.configurable ?? {};
    const key = [String(thread ?? ""), String(conversation ?? ""), ...batch.map((c) => c.id)].join("\0");
    let turn = turns.get(key);
    if (!turn) turns.set(key, (turn = { ends: new Map(batch.map((c) => [c.id, deferred()])), left: batch.length }));
    const index = batch.findIndex((c) => c.id === context.call.id);
    const mine = batch[index]?.access ?? { writes: true, paths: undefined };
    const before = batch.slice(0, Math.max(0, index)).filter((c) => conflicts(mine, c.access));
    try {
      // A stop ends the wait too (a resumed step may hold only some of its turn's calls).
      await untilStopped(Promise.all(before.map((c) => turn.ends.get(c.id)!.promise)), context.config.signal);
      await places.take();
      try {
        return await next();
      } finally {
        places.give();
      }
    } finally {
      turn.ends.get(context.call.id)?.settle();
      if (--turn.left <= 0) turns.delete(key);
    }
  };
}
