import type { BaseMessage } from "@langchain/core/messages";
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { recoverInterruptedCalls } from "../agent/crash-recovery.js";
import type { MemoryBackend } from "../memory/backend.js";
import { describeHolder } from "../memory/thread-lock.js";
import type { ToolJournal } from "../memory/tool-journal.js";

/**
 * What the CLI's session does around a thread, done by the Studio server around each run: the
 * run holds the thread's single-writer lock (memory/thread-lock.ts, the same lock file or
 * advisory lock as the CLI's) from its first node to its end, and first closes a step a killed
 * server left open, from the write-ahead tool journal (agent/crash-recovery.ts), so the model is
 * told "interrupted", never "not run". The dev server runs every run through the graph's
 * `_streamIterator` (its `stream` and `streamEvents` both do), so that is where the run is wrapped.
 */

/** Where a run keeps its lock and journal: the memory of its workspace, as the CLI would open it. */
export interface RunMemory {
  memory: MemoryBackend;
  workspace: string;
}

type StreamIterator = (input: unknown, options?: Partial<LangGraphRunnableConfig>) => AsyncGenerator<unknown>;

/** The parts of the compiled graph this needs (the dev server sets `checkpointer` before each run). */
export interface WrappableGraph {
  _streamIterator: StreamIterator;
  checkpointer?: unknown;
  getState(config: { configurable: { thread_id: string } }): Promise<{ values: unknown }>;
  updateState(config: { configurable: { thread_id: string } }, values: unknown, asNode?: string): Promise<unknown>;
}

/** A Studio run on a thread another process writes: said without the CLI's flags. */
export class StudioThreadBusyError extends Error {
  override name = "StudioThreadBusyError";
  constructor(threadId: string, holder: Parameters<typeof describeHolder>[0]) {
    super(
      `thread ${threadId} is being continued by ${describeHolder(holder)}. One process writes a thread at a time, so nothing was run. ` +
        "Wait until that run ends (or stop it), then run this again.",
    );
  }
}

/** Closes the step a killed server left open: results from the journal, as the tools node would have given them. */
async function closeInterruptedStep(
  graph: WrappableGraph,
  threadId: string,
  run: RunMemory,
  notice: (text: string) => void,
): Promise<void> {
  if (!graph.checkpointer) return;
  const config = { configurable: { thread_id: threadId } };
  const state = await graph.getState(config);
  const messages = ((state.values ?? {}) as { messages?: BaseMessage[] }).messages ?? [];
  const recovered = await recoverInterruptedCalls({
    journal: run.memory.journal,
    threadId,
    workspace: run.workspace,
    messages,
    timeTravelThread: threadId,
  });
  if (recovered.results.length === 0) return;
  await graph.updateState(config, { messages: recovered.results, snapshots: recovered.snapshots }, "tools");
  if (recovered.note) notice(`mini-cursor: thread ${threadId}: ${recovered.note}\n`);
}

/**
 * Wraps every run of `graph` (in place: the dev server keeps the object it loaded). A run without
 * a thread (a stateless run) is left as it is.
 */
export function holdThreadsDuringRuns(
  graph: WrappableGraph,
  memoryOf: (config: Partial<LangGraphRunnableConfig>) => Promise<RunMemory>,
  notice: (text: string) => void,
): void {
  const inner = graph._streamIterator.bind(graph) as StreamIterator;
  graph._streamIterator = async function* (input, options) {
    const threadId = options?.configurable?.thread_id;
    if (typeof threadId !== "string" || threadId === "" || !graph.checkpointer) {
      yield* inner(input, options);
      return;
    }
    const run = await memoryOf(options ?? {});
    const attempt = await run.memory.locker.tryLock(threadId);
    if ("busy" in attempt) throw new StudioThreadBusyError(threadId, attempt.busy);
    const { lock } = attempt;
    let failed = true;
    try {
      await closeInterruptedStep(graph, threadId, run, notice);
      yield* inner(input, options);
      failed = false;
    } finally {
      // As the CLI's session: after a run that ended, its steps are all in the thread.
      if (!failed) await run.memory.journal.clear(threadId).catch(() => undefined);
      await lock.release();
    }
  };
}

/** A journal whose memory opens later (PostgreSQL connects asynchronously; a runtime is built at once). */
export function deferredJournal(memory: () => Promise<MemoryBackend>): ToolJournal {
  return {
    start: async (threadId, entries) => (await memory()).journal.start(threadId, entries),
    end: async (threadId, results) => (await memory()).journal.end(threadId, results),
    read: async (threadId) => (await memory()).journal.read(threadId),
    clear: async (threadId) => (await memory()).journal.clear(threadId),
  };
}
