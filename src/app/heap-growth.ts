import { setFlagsFromString } from "node:v8";

/**
 * How far V8 lets the old generation grow past what survived the last full collection before it
 * collects again: 50%, where V8 would otherwise pick up to 300% (a factor of 4) by how fast it
 * collects against how fast the program allocates.
 *
 * Why (issue 30, goal 5): a session's live memory stays flat when the context is bounded (about
 * 25 MB of JavaScript heap after a full collection, at step 200 as at step 2000), but every step
 * promotes about half a megabyte of short-lived objects to the old generation (LangChain's
 * per-run configs and run trees, streamed message chunks, undici's copy of each request body,
 * which lives until a full collection). With the factor of 4 the old generation filled with that
 * garbage up to about 130 MB before each full collection, and the pages stayed mapped: peak RSS
 * rose from about 185 MB at 200 steps to 260 MB at 2000, in a long run with no pause long enough
 * for V8's memory reducer. At 50% the peak stays near 160 MB at any length, for a few more full
 * collections of that small live set (tens of milliseconds each, every few dozen steps, where a
 * step waits seconds for the model).
 */
export const HEAP_GROWTH_PERCENT = 50;

const FLAG = "--heap-growing-percent";

/** The V8 flag to set, or undefined when the person started Node with their own growth. */
export function heapGrowthFlag(execArgv: readonly string[]): string | undefined {
  // V8 spells its flags with dashes or underscores alike.
  const own = execArgv.some((arg) => arg.replace(/_/g, "-").split("=")[0] === FLAG);
  return own ? undefined : `${FLAG}=${HEAP_GROWTH_PERCENT}`;
}

/**
 * Bounds the heap's growth for the rest of the process. V8 reads this flag each time it sets the
 * next collection's limit, so setting it after start takes effect from the next full collection.
 */
export function limitHeapGrowth(execArgv: readonly string[] = process.execArgv): void {
  const flag = heapGrowthFlag(execArgv);
  if (flag) setFlagsFromString(flag);
}
