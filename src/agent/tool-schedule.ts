import path from "node:path";
import { callEffects, type ToolLike } from "../policy/effects.js";

/**
 * Which calls of one model turn run one after another (issue 28): two calls that touch the same
 * path, one of them writing, run in the order the model gave, so a second edit_file sees the
 * first one's result; calls on different paths still run at the same time. A call that may
 * touch anything (a command, a tool that declares no paths, an MCP tool) waits for every call
 * before it and every call after it waits for it. Both engines run their calls through here.
 */

/** What one call touches: the absolute paths (undefined: anything), and whether it may write. */
export interface CallAccess {
  writes: boolean;
  paths: string[] | undefined;
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
    paths: effects.paths?.map((p) => path.resolve(workspace, p)),
  };
}

/** One path is the other or holds it (a listing of `src` and an edit of `src/a.ts` overlap). */
function overlap(a: string, b: string): boolean {
  return a === b || b.startsWith(`${a}${path.sep}`) || a.startsWith(`${b}${path.sep}`);
}

/** Whether two calls must not run at the same time: one writes and they may touch a common path. */
export function conflicts(a: CallAccess, b: CallAccess): boolean {
  if (!a.writes && !b.writes) return false;
  if (a.paths === undefined || b.paths === undefined) return true;
  return a.paths.some((p) => b.paths!.some((q) => overlap(p, q)));
}

/**
 * Runs every call, each as soon as the earlier calls it conflicts with have finished (failed
 * or not); results in call order. A rejection (a cancelled run) rejects the whole, as
 * Promise.all does.
 */
export function runScheduled<C, T>(
  calls: readonly C[],
  access: (call: C) => CallAccess,
  run: (call: C) => Promise<T>,
): Promise<T[]> {
  const accesses = calls.map(access);
  const settled: Promise<unknown>[] = [];
  const results = calls.map((call, i) => {
    const before = settled.filter((_, j) => conflicts(accesses[i]!, accesses[j]!));
    const result = Promise.all(before).then(() => run(call));
    settled.push(result.catch(() => undefined));
    return result;
  });
  return Promise.all(results);
}
