import { ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { lastAIMessage } from "../contracts/conversation.js";
import { faultPoint } from "../memory/fault-point.js";
import type { JournalEntry, ToolJournal } from "../memory/tool-journal.js";
import { currentRequest } from "./snapshot-step.js";
import { messageText } from "./turn.js";

/**
 * Each call of a step is recorded in the write-ahead journal (memory/tool-journal.ts) as it
 * happens: started, before it runs (the journal guard, and a sub-agent's task call when its
 * sub-agent starts); ended, with its result, before the step is saved in the thread. The thread's
 * journal holds its latest turn: the calls of one turn are kept together in memory and written
 * whole, the writes of calls that start or end while one is in flight gathered into the next
 * (20 commands of a turn: a few fsyncs, not 40). Without a journal (tests) nothing is recorded.
 */

/** A call about to run, as the journal records it. */
export interface StartedCall {
  id: string;
  name: string;
  /** The snapshot taken before it (agent/snapshot-step.ts), when one was. */
  before?: string;
  /** The person's arguments, when they edited the call at the approval question. */
  editedArgs?: Record<string, unknown>;
  /** A `task` call whose sub-agent's tools change no file: nothing on disk to look for. */
  readOnly?: boolean;
  /** The call only looks (its tool's kind is read): its turn's writes need no flush while all do. */
  looksOnly?: boolean;
  /** A `task` call's LangGraph task (checkpoint namespace), by which a resume finds it (`running`). */
  ns?: string;
}

interface ThreadTurn {
  /** The model turn the entries belong to (its calls' ids). */
  turn: string;
  entries: JournalEntry[];
  /** Calls of the turn that may do more than look: while there are none, writes are not flushed. */
  acting: Set<string>;
}

/** Which model turn a call belongs to (its calls' ids), and the request it serves. */
export interface TurnOf {
  turn: string;
  request?: string;
}

/** The turn of a conversation that ends with a model turn. */
export function turnOf(messages: readonly BaseMessage[]): TurnOf {
  return {
    turn: (lastAIMessage(messages)?.tool_calls ?? []).map((c) => c.id ?? "").join(","),
    request: currentRequest(messages),
  };
}

export interface CallJournal {
  started(threadId: string, turn: TurnOf, call: StartedCall): Promise<void>;
  ended(threadId: string, results: readonly BaseMessage[]): Promise<void>;
  /**
   * The entry of LangGraph task `ns` when it started and has not ended: a `task` call run again from
   * its start (LangGraph resumes a node after a question inside it) that was already under way. The
   * task's namespace names that task alone: a later call that reuses the call id (`call_0` each
   * response) is another task. Crash recovery clears the journal before a run's request, too.
   */
  running(threadId: string, callId: string, ns: string): Promise<JournalEntry | undefined>;
}

const journals = new WeakMap<ToolJournal, CallJournal>();

/** The call journal over `journal`: one per journal, so every engine and sub-agent of a process writes through it. */
export function callJournal(journal: ToolJournal | undefined): CallJournal | undefined {
  if (!journal) return undefined;
  let known = journals.get(journal);
  if (known) return known;
  const turns = new Map<string, ThreadTurn>();
  /** The thread's entries are written whole: this write, or the one in flight when it was asked. */
  const writes = new Map<string, { next?: Promise<void>; last: Promise<void> }>();
  const write = (threadId: string): Promise<void> => {
    const queue = writes.get(threadId) ?? { last: Promise.resolve() };
    writes.set(threadId, queue);
    queue.next ??= queue.last.then(() => {
      queue.next = undefined;
      // A copy: the entries change as calls end, the write is of this moment.
      const current = turns.get(threadId);
      return journal.start(
        threadId,
        (current?.entries ?? []).map((e) => ({ ...e })),
        { durable: (current?.acting.size ?? 1) > 0 },
      );
    });
    queue.last = queue.next.catch(() => undefined);
    return queue.next;
  };
  known = {
    async started(threadId, { turn, request }, call) {
      if (!threadId) return;
      let current = turns.get(threadId);
      if (current?.turn !== turn) turns.set(threadId, (current = { turn, entries: [], acting: new Set() }));
      current.entries = current.entries.filter((e) => e.callId !== call.id);
      if (!call.looksOnly) current.acting.add(call.id);
      current.entries.push({
        callId: call.id,
        name: call.name,
        request,
        before: call.before,
        startedAt: new Date().toISOString(),
        ...(call.editedArgs ? { editedArgs: call.editedArgs } : {}),
        ...(call.readOnly ? { readOnly: true } : {}),
        ...(call.ns ? { ns: call.ns } : {}),
      });
      await write(threadId);
      faultPoint("tool-start");
    },
    async ended(threadId, results) {
      const current = turns.get(threadId);
      if (!threadId || !current) return;
      for (const m of results) {
        if (!ToolMessage.isInstance(m)) continue;
        const entry = current.entries.find((e) => e.callId === m.tool_call_id);
        if (entry) entry.result = { content: messageText(m), status: m.status === "error" ? "error" : "success" };
      }
      await write(threadId);
      faultPoint("tool-end");
    },
    async running(threadId, callId, ns) {
      if (!threadId || !ns) return undefined;
      // In memory while this process runs the turn; on disk for a resume after a restart (Studio).
      const entries = turns.get(threadId)?.entries ?? (await journal.read(threadId));
      return entries.find((e) => e.callId === callId && e.ns === ns && !e.result);
    },
  };
  journals.set(journal, known);
  return known;
}
