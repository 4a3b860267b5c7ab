import { ToolMessage } from "@langchain/core/messages";
import { journalEnded, journalStarted } from "../../src/agent/tool-journal-step.js";
import { fileToolJournal, type JournalResult, type ToolJournal } from "../../src/memory/tool-journal.js";
import { makeTempDir } from "../helpers/tmp.js";

/**
 * The ends of a step's calls (issue 30): calls that end while the journal is writing share its
 * next write, one fsync for all of them, and every call's result is on disk when its end resolves.
 */

const result = (id: string) => new ToolMessage({ tool_call_id: id, name: "execute_command", content: `out ${id}` });

/** A journal whose writes wait until the test lets them finish; it records what each write held. */
function heldJournal() {
  const writes: { threadId: string; ids: string[] }[] = [];
  const release: (() => void)[] = [];
  const journal: ToolJournal = {
    start: async () => undefined,
    end: (threadId, results: ReadonlyMap<string, JournalResult>) => {
      writes.push({ threadId, ids: [...results.keys()] });
      return new Promise<void>((resolve) => release.push(resolve));
    },
    read: async () => [],
    clear: async () => undefined,
  };
  return { journal, writes, release };
}

/** Lets every pending promise callback run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

test("calls that end while a write is in flight share the next write; each resolves once its own is on disk", async () => {
  const { journal, writes, release } = heldJournal();
  const resolved: string[] = [];
  const end = (id: string, thread = "t") => journalEnded(journal, thread, [result(id)]).then(() => resolved.push(id));
  const first = end("c1");
  await settle();
  expect(writes).toEqual([{ threadId: "t", ids: ["c1"] }]);
  const later = [end("c2"), end("c3"), end("c4")];
  const other = end("o1", "another thread");
  await settle();
  expect(writes).toHaveLength(1); // nothing written next to the write in flight
  release[0]!();
  await first;
  await settle();
  expect(resolved).toEqual(["c1"]);
  expect(writes[1]).toEqual({ threadId: "t", ids: ["c2", "c3", "c4"] });
  release[1]!();
  await Promise.all(later);
  await settle();
  expect(resolved).toEqual(["c1", "c2", "c3", "c4"]);
  expect(writes[2]).toEqual({ threadId: "another thread", ids: ["o1"] });
  release[2]!();
  await other;
  expect(writes).toHaveLength(3);
});

test("a failed write fails the calls it held, and the next ends are written", async () => {
  const { journal, writes, release } = heldJournal();
  let fail = true;
  const failing: ToolJournal = {
    ...journal,
    end: (threadId, results) => (fail ? Promise.reject(new Error("disk full")) : journal.end(threadId, results)),
  };
  await expect(journalEnded(failing, "t", [result("c1")])).rejects.toThrow("disk full");
  fail = false;
  const next = journalEnded(failing, "t", [result("c2")]);
  await settle();
  expect(writes).toEqual([{ threadId: "t", ids: ["c2"] }]);
  release[0]!();
  await next;
});

test("twenty calls ending at once: every result is in the file journal, in fewer writes than calls", async () => {
  const tmp = makeTempDir();
  try {
    const journal = fileToolJournal(tmp.dir);
    const ids = Array.from({ length: 20 }, (_, i) => `c${i}`);
    await journalStarted({
      journal,
      threadId: "t",
      messages: [],
      calls: ids.map((id) => ({ id, name: "execute_command" })),
    });
    let writes = 0;
    const counted: ToolJournal = { ...journal, end: (threadId, results) => (writes++, journal.end(threadId, results)) };
    await Promise.all(ids.map((id) => journalEnded(counted, "t", [result(id)])));
    expect((await journal.read("t")).map((e) => [e.callId, e.result])).toEqual(
      ids.map((id) => [id, { content: `out ${id}`, status: "success" }]),
    );
    expect(writes).toBe(1);
  } finally {
    tmp.cleanup();
  }
});

test("the file journal makes its changes in the order asked: a clear after an end leaves nothing", async () => {
  const tmp = makeTempDir();
  try {
    const journal = fileToolJournal(tmp.dir);
    await journal.start("t", [{ callId: "c1", name: "read_file", startedAt: "2026-01-01T00:00:00.000Z" }]);
    const ended = journal.end("t", new Map([["c1", { content: "x", status: "success" as const }]]));
    const cleared = journal.clear("t");
    await Promise.all([ended, cleared]);
    expect(await journal.read("t")).toEqual([]);
  } finally {
    tmp.cleanup();
  }
});
