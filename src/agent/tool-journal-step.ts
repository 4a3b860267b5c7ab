import { ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { faultPoint } from "../memory/fault-point.js";
import type { JournalResult, ToolJournal } from "../memory/tool-journal.js";
import { currentRequest } from "./snapshot-step.js";
import { messageText } from "./turn.js";

/**
 * Both engines record a step's tool calls in the write-ahead journal (memory/tool-journal.ts)
 * as they happen: started, before any of them runs; ended, with their results, before the step
 * is saved in the thread. A step's `task` calls are recorded with its other calls, and each ends
 * when its sub-agent does. Without a journal (tests) nothing is recorded.
 */

export interface JournalStepInput {
  journal?: ToolJournal;
  threadId: string;
  messages: readonly BaseMessage[];
  /** `readOnly`: a task call whose sub-agent has no tool that changes files (no snapshot is taken for it). */
  calls: ReadonlyArray<{ id?: string; name: string; readOnly?: boolean }>;
  /** The snapshot taken before the step's tools (snapshot-step.ts), when there is one. */
  before?: string;
  /** Calls the person edited at the approval question: the arguments they run with, by call id. */
  edits?: Readonly<Record<string, Record<string, unknown>>>;
}

export async function journalStarted(input: JournalStepInput): Promise<void> {
  if (!input.journal || !input.threadId || input.calls.length === 0) return;
  const startedAt = new Date().toISOString();
  const request = currentRequest(input.messages);
  await input.journal.start(
    input.threadId,
    input.calls.map((c) => {
      const editedArgs = input.edits?.[c.id ?? ""];
      return {
        callId: c.id ?? "",
        name: c.name,
        request,
        before: input.before,
        startedAt,
        ...(editedArgs ? { editedArgs } : {}),
        ...(c.readOnly ? { readOnly: true } : {}),
      };
    }),
  );
  faultPoint("tool-start");
}

/** The end records waiting for the write in flight: the next write takes them all, with one fsync. */
interface EndBatch {
  journal: ToolJournal;
  threadId: string;
  results: Map<string, JournalResult>;
  written: Promise<void>;
}

let ending: Promise<unknown> = Promise.resolve();
let gathering: EndBatch | undefined;

export async function journalEnded(
  journal: ToolJournal | undefined,
  threadId: string,
  results: readonly BaseMessage[],
): Promise<void> {
  if (!journal || !threadId) return;
  const byId = new Map<string, JournalResult>();
  for (const m of results) {
    if (!ToolMessage.isInstance(m)) continue;
    byId.set(m.tool_call_id, { content: messageText(m), status: m.status === "error" ? "error" : "success" });
  }
  if (byId.size > 0) {
    // Calls end concurrently: their records are written one after another, none lost, and those
    // that end while a write is in flight share the next one (20 commands of a turn: a few fsyncs, not 20).
    let batch = gathering?.journal === journal && gathering.threadId === threadId ? gathering : undefined;
    if (!batch) {
      const next: EndBatch = { journal, threadId, results: new Map(), written: Promise.resolve() };
      next.written = ending.then(() => {
        if (gathering === next) gathering = undefined;
        return journal.end(threadId, next.results);
      });
      ending = next.written.catch(() => undefined);
      gathering = batch = next;
    }
    for (const [id, result] of byId) batch.results.set(id, result);
    await batch.written;
  }
  faultPoint("tool-end");
}
