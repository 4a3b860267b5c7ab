/**
 * The arithmetic of the end-to-end benchmark, kept pure so it is tested without timing anything:
 * the client's share of a run from the server's request log, medians, and goals as ratio + met.
 */

/** One model request as the bench server saw it (performance.now() milliseconds). */
export interface RequestSpan {
  arrivedAt: number;
  finishedAt: number;
}

export function median(values: number[]): number {
  if (values.length === 0) throw new Error("median of nothing");
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * Client milliseconds per step: from the first request's arrival to the last one's, minus the
 * time the server spent answering each request before it, over the steps in between. What is
 * left is everything the CLI does between two model requests: reading the stream, running the
 * tool, checkpointing, rendering and building the next request.
 */
export function clientMsPerStep(requests: readonly RequestSpan[]): number {
  if (requests.length < 2) throw new Error("client time per step needs at least two requests");
  const sorted = [...requests].sort((a, b) => a.arrivedAt - b.arrivedAt);
  let serverMs = 0;
  for (let i = 0; i < sorted.length - 1; i++) serverMs += sorted[i]!.finishedAt - sorted[i]!.arrivedAt;
  const wallMs = sorted.at(-1)!.arrivedAt - sorted[0]!.arrivedAt;
  return (wallMs - serverMs) / (sorted.length - 1);
}

export interface Goal {
  name: string;
  /** The measured figure, as printed. */
  measured: string;
  /** measured / target: at most 1 when met. */
  ratio: number;
  met: boolean;
}

/** A goal "measured ≤ target" (lower is better). */
export function atMost(name: string, measured: number, target: number, unit: string, digits = 1): Goal {
  const ratio = measured / target;
  return { name, measured: `${measured.toFixed(digits)}${unit}`, ratio, met: measured <= target };
}

/** One line per goal: its figure, its ratio to the target and whether it is met. */
export function formatGoals(goals: readonly Goal[]): string[] {
  return [
    "| goal | measured | × target | met |",
    "|---|---:|---:|:---:|",
    ...goals.map((g) => `| ${g.name} | ${g.measured} | ${g.ratio.toFixed(2)} | ${g.met ? "yes" : "no"} |`),
  ];
}

/**
 * Interleaves runs of several commands (a, b, c, a, b, c, …) so slow drift on a shared machine
 * falls on all of them alike; returns each command's measurements in run order.
 */
export async function interleave<K extends string>(
  rounds: number,
  runs: Record<K, () => Promise<number>>,
): Promise<Record<K, number[]>> {
  const out = Object.fromEntries(Object.keys(runs).map((k) => [k, [] as number[]])) as Record<K, number[]>;
  for (let i = 0; i < rounds; i++) for (const key of Object.keys(runs) as K[]) out[key].push(await runs[key]());
  return out;
}
