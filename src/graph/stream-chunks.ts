import { Runnable, type RunnableConfig } from "@langchain/core/runnables";
import type { AgentGraph } from "./graph.js";

/**
 * A run's stream of `[mode, chunk]` pairs, pulled chunk by chunk as `Runnable.stream` makes it.
 * `graph.stream()` (Pregel) wraps that stream in an IterableReadableStreamWithAbortSignal whose
 * pump answers each read with a promise that waits for the next read's, so a run kept one link
 * of that chain per chunk in memory until it ended: about 36 a step, a long session's memory
 * growing with every step although its context was bounded (issue 30). The wrapper's only
 * addition is a cancel signal of its own; the engine cancels through the run's signal.
 */
export async function streamChunks(
  graph: AgentGraph,
  input: unknown,
  config: RunnableConfig & { streamMode: readonly string[]; durability?: string; subgraphs?: boolean },
): Promise<AsyncIterable<[string, unknown]>> {
  const stream = Runnable.prototype.stream as (
    this: AgentGraph,
    input: unknown,
    options: unknown,
  ) => Promise<AsyncIterable<[string, unknown]>>;
  return stream.call(graph, input, { recursionLimit: graph.config?.recursionLimit, ...config });
}
