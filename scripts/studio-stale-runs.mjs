// Runs a killed dev server left "running". The LangGraph dev server keeps its threads and runs in
// `.langgraph_api/.langgraphjs_ops.json` (superjson: the values under `json`, their types under
// `meta`). A run in flight when the server was killed stays "running" there, and the restarted
// in-memory server neither runs nor cancels it: every new run on its thread is refused as busy
// (or waits for ever with multitask_strategy "interrupt"). Before the server starts, no run can be
// running, so each such run is marked failed ("error", as the server marks a run whose graph
// threw), and its thread with it; its checkpoints stay, so the thread goes on from its last saved
// step, and the thread's next run closes the step it left open from mini-cursor's tool journal
// (src/studio/thread-runs.ts). Deleting the run instead, the only way the API offers, would also
// delete its checkpoints, and with them what the model needs to be told.
import { readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";

export const OPS_FILE = path.join(".langgraph_api", ".langgraphjs_ops.json");
/** What the dev server calls a run in flight. */
const IN_FLIGHT = "running";
/** What it calls a run whose graph failed. */
const FAILED = "error";

/**
 * Marks the runs the last server of `project` left in flight as failed; returns them
 * (`{ runId, threadId }`), or `{ error }` when the file is there but could not be read or written.
 * Call it only while no dev server runs on `project`.
 */
export function failStaleRuns(project) {
  const file = path.join(project, OPS_FILE);
  let text;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return { runs: [] }; // no server ran here yet
  }
  try {
    const data = JSON.parse(text);
    const store = data && typeof data.json === "object" ? data.json : data;
    const runs = Object.values(store?.runs ?? {}).filter((run) => run?.status === IN_FLIGHT);
    if (runs.length === 0) return { runs: [] };
    const now = new Date().toISOString();
    for (const run of runs) {
      run.status = FAILED;
      if (typeof run.updated_at === "string") run.updated_at = now;
      const thread = store.threads?.[run.thread_id];
      if (thread && thread.status === "busy") thread.status = FAILED;
    }
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(data), { mode: statSync(file).mode & 0o777 });
    renameSync(tmp, file);
    return { runs: runs.map((run) => ({ runId: String(run.run_id), threadId: String(run.thread_id) })) };
  } catch (err) {
    return { runs: [], error: `${file}: ${err?.message ?? err}` };
  }
}

/** The lines the server's terminal shows for what failStaleRuns did. */
export function staleRunLines({ runs, error }) {
  if (error)
    return [
      `mini-cursor studio: could not check for runs a stopped server left in flight (${error}). ` +
        "A thread that refuses new runs as busy has one: delete it (DELETE /threads/<thread id>/runs/<run id>), which also drops that run's saved steps.",
    ];
  return runs.map(
    ({ runId, threadId }) =>
      `mini-cursor studio: run ${runId} on thread ${threadId} was in flight when the server stopped; it is marked failed, so the thread takes new runs. ` +
      "The thread keeps its saved steps, and its next run tells the model which tool calls of the cut-off step finished and which were interrupted.",
  );
}
