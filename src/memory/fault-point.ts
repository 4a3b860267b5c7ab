/**
 * Named points where the fault tests (__tests__/faults/) kill the process, through the test
 * hook MINI_CURSOR_FAULT_POINT (settings.ts): `<name>` or `<name>@<n>` (the n-th time the
 * point is reached), and the process sends itself SIGKILL there, as a crash or `kill -9`
 * would, with nothing flushed or closed. With `:stop` after it (`snapshot-import@2:stop`) the
 * process sends itself SIGSTOP instead: the test then kills what runs at that point (a git
 * child) and lets the process go on with SIGCONT.
 *
 *   tool-start   a step's calls are in the journal and about to run
 *   tool-end     the step's calls ended and their results are in the journal, not yet in the thread
 *   checkpoint   in the middle of writing a checkpoint (its messages stored, the checkpoint not)
 *   thread-save  the loop's thread file written to its temporary name, not yet renamed
 *   snapshot-store     a workspace's first snapshot store is made in a folder of its own, not yet
 *                      renamed into place
 *   snapshot     a whole workspace snapshot has staged what changed in its index, not yet committed
 *   snapshot-import    a snapshot of declared paths (snapshots/read.ts): git fast-import has its
 *                      stream but not its end, so it has moved no ref yet
 *   snapshot-imported  fast-import wrote the objects and moved the snapshot branch; the process
 *                      has not recorded the snapshot
 */
export type FaultPoint =
  | "tool-start"
  | "tool-end"
  | "checkpoint"
  | "thread-save"
  | "snapshot-store"
  | "snapshot"
  | "snapshot-import"
  | "snapshot-imported";

interface Armed {
  name: string;
  at: number;
  signal: "SIGKILL" | "SIGSTOP";
}

let armed: Armed | undefined;
const reached = new Map<string, number>();

function parse(value: string | undefined): Armed | undefined {
  if (!value) return undefined;
  const [point, mode] = value.split(":");
  const [name, at] = point!.split("@");
  return { name: name!, at: at ? Number(at) : 1, signal: mode === "stop" ? "SIGSTOP" : "SIGKILL" };
}

/** Arms the point MINI_CURSOR_FAULT_POINT names, handed over once at start (app/configure.ts); unset: none. */
export function armFaultPoint(setting: string | undefined): void {
  armed = parse(setting);
  reached.clear();
}

export function faultPoint(name: FaultPoint): void {
  if (armed?.name !== name) return;
  const count = (reached.get(name) ?? 0) + 1;
  reached.set(name, count);
  if (count === armed.at) process.kill(process.pid, armed.signal);
}
