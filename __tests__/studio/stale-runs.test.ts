import { afterEach, expect, test } from "@jest/globals";
import { mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
// @ts-expect-error: a plain script of the project, without types
import { failStaleRuns, OPS_FILE, staleRunLines } from "../../scripts/studio-stale-runs.mjs";
import { makeTempDir } from "../helpers/tmp.js";

/**
 * `npm run studio` before the dev server starts: runs a killed server left "running" are marked
 * failed in the server's own state file (superjson: values under `json`, types under `meta`,
 * which stay as they were), with their busy threads; every other run and field is kept.
 */

let project: ReturnType<typeof makeTempDir> | undefined;
afterEach(() => project?.cleanup());

const run = (id: string, thread: string, status: string) => ({
  run_id: id,
  thread_id: thread,
  status,
  created_at: "2026-12-01T10:00:00.000Z",
  updated_at: "2026-12-01T10:00:00.000Z",
  kwargs: { config: { configurable: { thread_id: thread } } },
});

function writeOps(dir: string, json: object): string {
  const file = path.join(dir, OPS_FILE);
  mkdirSync(path.dirname(file), { recursive: true });
  const meta = { values: { "runs.r1.created_at": ["Date"], "runs.r1.updated_at": ["Date"] } };
  writeFileSync(file, JSON.stringify({ json, meta }), { mode: 0o600 });
  return file;
}

test("a run left running is marked failed with its thread; pending, finished and other runs are kept", () => {
  project = makeTempDir("mini-cursor-stale-runs-");
  const file = writeOps(project.dir, {
    runs: { r1: run("r1", "t1", "running"), r2: run("r2", "t2", "pending"), r3: run("r3", "t1", "success") },
    threads: { t1: { thread_id: "t1", status: "busy" }, t2: { thread_id: "t2", status: "busy" } },
    assistants: {},
  });
  const result = failStaleRuns(project.dir);
  expect(result).toEqual({ runs: [{ runId: "r1", threadId: "t1" }] });
  const after = JSON.parse(readFileSync(file, "utf8"));
  expect(after.json.runs.r1.status).toBe("error");
  expect(after.json.runs.r1.updated_at).not.toBe("2026-12-01T10:00:00.000Z");
  expect(after.json.runs.r1.created_at).toBe("2026-12-01T10:00:00.000Z");
  expect(after.json.runs.r1.kwargs).toEqual(run("r1", "t1", "x").kwargs);
  expect(after.json.runs.r2.status).toBe("pending");
  expect(after.json.runs.r3.status).toBe("success");
  expect(after.json.threads).toEqual({
    t1: { thread_id: "t1", status: "error" },
    t2: { thread_id: "t2", status: "busy" },
  });
  expect(after.meta).toEqual({ values: { "runs.r1.created_at": ["Date"], "runs.r1.updated_at": ["Date"] } });
  expect(statSync(file).mode & 0o777).toBe(0o600);
  expect(staleRunLines(result)).toEqual([
    "mini-cursor studio: run r1 on thread t1 was in flight when the server stopped; it is marked failed, so the thread takes new runs. " +
      "The thread keeps its saved steps, and its next run tells the model which tool calls of the cut-off step finished and which were interrupted.",
  ]);
  // Nothing left to do the next time.
  expect(failStaleRuns(project.dir)).toEqual({ runs: [] });
});

test("no state yet: nothing to do, nothing said; a state file that cannot be read is said, with what to do", () => {
  project = makeTempDir("mini-cursor-stale-runs-");
  expect(failStaleRuns(project.dir)).toEqual({ runs: [] });
  expect(staleRunLines({ runs: [] })).toEqual([]);
  const file = writeOps(project.dir, {});
  writeFileSync(file, "{ not json");
  const result = failStaleRuns(project.dir);
  expect(result.runs).toEqual([]);
  expect(result.error).toContain(file);
  expect(staleRunLines(result)[0]).toContain(
    "A thread that refuses new runs as busy has one: delete it (DELETE /threads/<thread id>/runs/<run id>), which also drops that run's saved steps.",
  );
  expect(readFileSync(file, "utf8")).toBe("{ not json");
});
