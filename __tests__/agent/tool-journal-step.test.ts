import { ToolMessage } from "@langchain/core/messages";
import { callJournal } from "../../src/agent/tool-journal-step.js";
import { readdirSync, statSync } from "node:fs";
import path from "node:path";
import { stateDirFor } from "../../src/memory/state-dir.js";
import { fileToolJournal, JOURNAL_SUBDIR, type JournalEntry, type ToolJournal } from "../../src/memory/tool-journal.js";
import { makeTempDir } from "../helpers/tmp.js";

/**
 * The journal of a turn's calls (issue 30): calls that start or end while the journal is writing
 * share its next write, one fsync for all of them, and every call's record is on disk when its
 * start or end resolves.
 */

const result = (id: string) => new ToolMessage({ tool_call_id: id, name: "execute_command", content: `out ${id}` });
const turn = (ids: string[]) => ({ turn: ids.join(","), request: "r1" });

/** A journal whose writes wait until the test lets them finish; it records which calls had ended in each. */
function heldJournal() {
  const writes: { threadId: string; ended: string[] }[] = [];
  const release: (() => void)[] = [];
  const journal: ToolJournal = {
    start: (threadId, entries: JournalEntry[]) => {
      writes.push({ threadId, ended: entries.filter((e) => e.result).map((e) => e.callId) });
      return new Promise<void>((resolve) => release.push(resolve));
    },
    end: async () => undefined,
    read: async () => [],
    clear: async () => undefined,
  };
  return { journal, writes, release };
}

/** Lets every pending promise callback run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

test("calls that end while a write is in flight share the next write; each resolves once its own is on disk", async () => {
  const { journal, writes, release } = heldJournal();
  const calls = callJournal(journal)!;
  const ids = ["c1", "c2", "c3", "c4"];
  // Every call started at once (as a superstep's Sends start): one write holds them all.
  const starts = ids.map((id) => calls.started("t", turn(ids), { id, name: "execute_command" }));
  await settle();
  release[0]!();
  await Promise.all(starts);
  expect(writes).toEqual([{ threadId: "t", ended: [] }]);
  const resolved: string[] = [];
  const end = (id: string) => calls.ended("t", [result(id)]).then(() => resolved.push(id));
  const first = end("c1");
  await settle();
  expect(writes[1]).toEqual({ threadId: "t", ended: ["c1"] });
  const later = [end("c2"), end("c3"), end("c4")];
  await settle();
  expect(writes).toHaveLength(2); // nothing written next to the write in flight
  release[1]!();
  await first;
  await settle();
  expect(resolved).toEqual(["c1"]);
  expect(writes[2]).toEqual({ threadId: "t", ended: ["c1", "c2", "c3", "c4"] });
  release[2]!();
  await Promise.all(later);
  expect(resolved).toEqual(["c1", "c2", "c3", "c4"]);
  expect(writes).toHaveLength(3);
});

test("a failed write fails the calls it held, and the next ones are written", async () => {
  let fail = true;
  const entries: JournalEntry[][] = [];
  const journal: ToolJournal = {
    start: async (_threadId, written) => {
      if (fail) throw new Error("disk full");
      entries.push(written);
    },
    end: async () => undefined,
    read: async () => [],
    clear: async () => undefined,
  };
  const calls = callJournal(journal)!;
  await expect(calls.started("t", turn(["c1", "c2"]), { id: "c1", name: "read_file" })).rejects.toThrow("disk full");
  fail = false;
  await calls.started("t", turn(["c1", "c2"]), { id: "c2", name: "read_file" });
  expect(entries.map((e) => e.map((x) => x.callId))).toEqual([["c1", "c2"]]);
});

test("a new turn's calls replace the last turn's in the journal", async () => {
  const tmp = makeTempDir();
  try {
    const journal = fileToolJournal(tmp.dir);
    const calls = callJournal(journal)!;
    await calls.started("t", turn(["a"]), { id: "a", name: "read_file" });
    await calls.ended("t", [result("a")]);
    await calls.started("t", turn(["b", "c"]), { id: "b", name: "write_file", before: "snap", editedArgs: { x: 1 } });
    expect(await journal.read("t")).toEqual([
      {
        callId: "b",
        name: "write_file",
        request: "r1",
        before: "snap",
        editedArgs: { x: 1 },
        startedAt: expect.any(String),
      },
    ]);
  } finally {
    tmp.cleanup();
  }
});

test("twenty calls started and ending at once: every result is in the file journal, in fewer writes than calls", async () => {
  const tmp = makeTempDir();
  try {
    const file = fileToolJournal(tmp.dir);
    let writes = 0;
    const journal: ToolJournal = { ...file, start: (threadId, entries) => (writes++, file.start(threadId, entries)) };
    const calls = callJournal(journal)!;
    const ids = Array.from({ length: 20 }, (_, i) => `c${i}`);
    await Promise.all(ids.map((id) => calls.started("t", turn(ids), { id, name: "execute_command" })));
    await Promise.all(ids.map((id) => calls.ended("t", [result(id)])));
    expect((await file.read("t")).map((e) => [e.callId, e.result])).toEqual(
      ids.map((id) => [id, { content: `out ${id}`, status: "success" }]),
    );
    expect(writes).toBeLessThanOrEqual(4);
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

test("a turn whose calls only look is written without flushing; once one of its calls acts, every write is flushed", async () => {
  const durable: (boolean | undefined)[] = [];
  const journal: ToolJournal = {
    start: async (_threadId, _entries, options) => void durable.push(options?.durable),
    end: async () => undefined,
    read: async () => [],
    clear: async () => undefined,
  };
  const calls = callJournal(journal)!;
  await calls.started("t", turn(["r1", "r2"]), { id: "r1", name: "read_file", looksOnly: true });
  await calls.ended("t", [result("r1")]);
  expect(durable).toEqual([false, false]);
  await calls.started("t", turn(["r1", "r2"]), { id: "r2", name: "write_file" });
  await calls.ended("t", [result("r2")]);
  expect(durable).toEqual([false, false, true, true]);
  // The next turn starts over: reads alone again need no flush.
  await calls.started("t", turn(["r3"]), { id: "r3", name: "read_file", looksOnly: true });
  expect(durable).toEqual([false, false, true, true, false]);
});

test("the file journal's write that is not flushed is still in place for the next reader", async () => {
  const tmp = makeTempDir();
  try {
    const journal = fileToolJournal(tmp.dir);
    const entry = { callId: "c1", name: "read_file", startedAt: "2026-01-01T00:00:00.000Z" };
    await journal.start("t", [entry], { durable: false });
    expect(await fileToolJournal(tmp.dir).read("t")).toEqual([entry]);
    const folder = path.join(stateDirFor(tmp.dir), JOURNAL_SUBDIR);
    expect(readdirSync(folder).filter((n) => n.endsWith(".tmp"))).toEqual([]);
    // Written again (the old file removed, the new one renamed in), then flushed, then not: each
    // write replaces the last, the folder holds the one file, readable by its owner only.
    const ended = { ...entry, result: { content: "1\ta", status: "success" as const } };
    await journal.start("t", [ended], { durable: false });
    expect(await fileToolJournal(tmp.dir).read("t")).toEqual([ended]);
    const second = { callId: "c2", name: "write_file", startedAt: "2026-01-01T00:00:01.000Z" };
    await journal.start("t", [ended, second], { durable: true });
    await journal.start("t", [second], { durable: false });
    expect(await fileToolJournal(tmp.dir).read("t")).toEqual([second]);
    expect(readdirSync(folder)).toEqual(["t.json"]);
    expect(statSync(path.join(folder, "t.json")).mode & 0o777).toBe(0o600);
  } finally {
    tmp.cleanup();
  }
});
