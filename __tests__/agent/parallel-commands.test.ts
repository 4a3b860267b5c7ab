import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { MAX_CONCURRENT_CALLS } from "../../src/guard/order.js";
import { engineHarness, eventsOf } from "../helpers/engine-harness.js";
import { makeTempDir, waitFor } from "../helpers/tmp.js";

/**
 * Issue 30, item 6: the commands of one turn run at the same time, at most MAX_CONCURRENT_CALLS
 * of them; a call that names a path still waits for the commands before it. Each command marks
 * its start, waits for the test's go file, and marks its end.
 */

let tmp: ReturnType<typeof makeTempDir>;
beforeEach(() => (tmp = makeTempDir()));
afterEach(() => tmp.cleanup());

describe.each(["graph", "loop"] as const)("the %s engine", (kind) => {
  test("runs a turn's commands concurrently up to the limit, and an edit after them waits for them", async () => {
    const marks = path.join(tmp.dir, "marks");
    mkdirSync(marks);
    writeFileSync(path.join(tmp.dir, "after.txt"), "old\n");
    const n = MAX_CONCURRENT_CALLS + 2;
    const command = (i: number) =>
      `touch marks/start-${i}; until [ -e marks/go ]; do sleep 0.02; done; touch marks/end-${i}`;
    const h = engineHarness(
      kind,
      tmp.dir,
      [
        { toolCalls: [{ name: "read_file", args: { filePath: "after.txt" } }] },
        {
          toolCalls: [
            ...Array.from({ length: n }, (_, i) => ({
              name: "execute_command",
              args: { command: command(i), timeoutMs: 120_000 },
            })),
            // Names a path, so it waits for every command before it.
            { name: "write_file", args: { filePath: "after.txt", content: "written after the commands\n" } },
          ],
        },
        "All done.",
      ],
      { maxSteps: 5 },
    );
    const run = h.run("run them all");
    const started = () => readdirSync(marks).filter((f) => f.startsWith("start-"));
    try {
      await waitFor(() => started().length >= MAX_CONCURRENT_CALLS, 60_000);
      // Every place is taken by a command waiting for go: the rest cannot have started, nothing ended.
      expect(started()).toHaveLength(MAX_CONCURRENT_CALLS);
      expect(readdirSync(marks).filter((f) => f.startsWith("end-"))).toEqual([]);
      expect(readFileSync(path.join(tmp.dir, "after.txt"), "utf8")).toBe("old\n");
      expect(started().sort()).toEqual(Array.from({ length: MAX_CONCURRENT_CALLS }, (_, i) => `start-${i}`).sort());
    } finally {
      writeFileSync(path.join(marks, "go"), "");
    }
    const summary = await run;
    expect(summary.reason).toBe("done");
    for (let i = 0; i < n; i++) expect(existsSync(path.join(marks, `end-${i}`))).toBe(true);
    expect(readFileSync(path.join(tmp.dir, "after.txt"), "utf8")).toBe("written after the commands\n");
    const results = eventsOf(h.events, "tool_result").filter((e) => e.step === 2);
    expect(results.map((e) => e.status)).toEqual(Array.from({ length: n + 1 }, () => "success"));
  }, 180_000);
});
