import { writeFileSync } from "node:fs";
import path from "node:path";
import type { ToolJournal } from "../../src/memory/tool-journal.js";
import { engineHarness, type EngineKind } from "../helpers/engine-harness.js";
import { makeTempDir } from "../helpers/tmp.js";

/**
 * The journal port of the guard (agent/guards.ts): a turn whose calls only look (kind read) has
 * its journal writes made without flushing them to disk, a turn with a call that acts has every
 * write flushed. Both engines, through their real guarded tools.
 */

let tmp: ReturnType<typeof makeTempDir>;
beforeEach(() => (tmp = makeTempDir()));
afterEach(() => tmp.cleanup());

/** A journal that records, per write, the calls written and whether it was to be flushed. */
function flushLog(): ToolJournal & { writes: { calls: string[]; durable: boolean | undefined }[] } {
  const writes: { calls: string[]; durable: boolean | undefined }[] = [];
  return {
    writes,
    start: async (_threadId, entries, options) =>
      void writes.push({ calls: entries.map((e) => e.name), durable: options?.durable }),
    end: async () => undefined,
    read: async () => [],
    clear: async () => undefined,
  };
}

describe.each(["graph", "loop"] as const)("%s engine", (kind: EngineKind) => {
  test("reads are journalled unflushed; a turn that writes is flushed", async () => {
    writeFileSync(path.join(tmp.dir, "notes.txt"), "hi\n");
    const journal = flushLog();
    const h = engineHarness(
      kind,
      tmp.dir,
      [
        {
          toolCalls: [
            { name: "read_file", args: { filePath: "notes.txt" } },
            { name: "list_directory", args: { dirPath: "." } },
          ],
        },
        { toolCalls: [{ name: "write_file", args: { filePath: "a.txt", content: "a\n" } }] },
        "done",
      ],
      { approval: "full-auto" },
      { journal },
    );
    expect((await h.run("go")).reason).toBe("done");
    const reads = journal.writes.filter((w) => !w.calls.includes("write_file"));
    const write = journal.writes.filter((w) => w.calls.includes("write_file"));
    expect(reads.length).toBeGreaterThan(0);
    expect(reads.every((w) => w.durable === false)).toBe(true);
    expect(write.length).toBeGreaterThan(0);
    expect(write.map((w) => [w.calls, w.durable])).toEqual(write.map(() => [["write_file"], true]));
  });
});
