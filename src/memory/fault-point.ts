import { faultPointSetting } from "../settings.js";

/**
 * Named points where the fault tests (__tests__/faults/) kill the process, through the test
 * hook MINI_CURSOR_FAULT_POINT (settings.ts): `<name>` or `<name>@<n>` (the n-th time the
 * point is reached), and the process sends itself SIGKILL there, as a crash or `kill -9`
 * would, with nothing flushed or closed.
 *
 *   tool-start   a step's calls are in the journal and about to run
 *   tool-end     the step's calls ended and their results are in the journal, not yet in the thread
 *   checkpoint   in the middle of writing a checkpoint (its messages stored, the checkpoint not)
 *   thread-save  the loop's thread file written to its temporary name, not yet renamed
 *   snapshot     a whole workspace snapshot has staged what changed in its index, not yet committed
 */
export type FaultPoint = "tool-start" | "tool-end" | "checkpoint" | "thread-save" | "snapshot";

let armed: { name: string; at: number } | undefined | null = null;
const reached = new Map<string, number>();

function parse(value: string | undefined): { name: string; at: number } | undefined {
  if (!value) return undefined;
  const [name, at] = value.split("@");
  return { name: name!, at: at ? Number(at) : 1 };
}

export function faultPoint(name: FaultPoint): void {
  if (armed === null) armed = parse(faultPointSetting());
  if (armed?.name !== name) return;
  const count = (reached.get(name) ?? 0) + 1;
  reached.set(name, count);
  if (count === armed.at) process.kill(process.pid, "SIGKILL");
}
