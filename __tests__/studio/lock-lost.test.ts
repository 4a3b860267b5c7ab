import { afterAll, beforeAll, describe, expect, jest, test } from "@jest/globals";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { POSTGRES_URL, startOwnCluster, type OwnCluster } from "../helpers/postgres.js";
import type { ScriptStep } from "../helpers/openai-server.js";
import { STUDIO_STARTUP_DEADLINE_MS, useStudioServer } from "../helpers/studio-server.js";
import { waitFor } from "../helpers/tmp.js";

/**
 * A Studio run holds its thread's PostgreSQL advisory lock (studio/thread-runs.ts), which dies
 * with its connection. When the database restarts while the run's command is running, the run
 * must fail naming the lost lock and write nothing more of the thread; the next run of that
 * thread takes the lock again and tells the model the truth about the cut-off call. A cluster of
 * the test's own, since it restarts.
 */

jest.setTimeout(STUDIO_STARTUP_DEADLINE_MS + 240_000);

const RUN_DEADLINE_MS = 90_000;
const HOLD = "Hold the thread while the database restarts.";
const AFTER = "What happened to the command?";
/** A command that says it started and runs until the test lets it end. */
const HOLD_COMMAND = "touch hold.started && while [ ! -f hold.release ]; do sleep 0.1; done; echo after > after.txt";

const withPostgres = POSTGRES_URL ? describe : describe.skip;

withPostgres("Studio: the thread's lock is lost (PostgreSQL restarts mid-run)", () => {
  const cluster = {} as { own: OwnCluster };
  beforeAll(() => {
    cluster.own = startOwnCluster();
  });
  afterAll(() => cluster.own?.stop());
  const fx = useStudioServer(
    (request): ScriptStep => {
      const last = request.messages.at(-1);
      if (last?.role === "user" && last.content === HOLD)
        return { toolCalls: [{ name: "execute_command", args: { command: HOLD_COMMAND } }] };
      return { content: "The command was cut off." };
    },
    // The person's choice for this server: its runs may ask for full-auto.
    () => ({ MINI_CURSOR_CHECKPOINTER: cluster.own.url, MINI_CURSOR_APPROVAL: "full-auto" }),
  );

  test("the run fails naming the lost lock and saves nothing more; the next run retakes the thread and is told the call was interrupted", async () => {
    const { client, assistantId } = fx.studio;
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, assistantId, {
      input: { messages: [{ type: "human", content: HOLD }] },
      config: { configurable: { approval: "full-auto" } },
    });
    await waitFor(() => existsSync(path.join(fx.workspace.dir, "hold.started")), RUN_DEADLINE_MS, 50);
    // Every connection ends, the lock's with them; the command is still running.
    cluster.own.restart();
    writeFileSync(path.join(fx.workspace.dir, "hold.release"), "");
    await client.runs.join(thread.thread_id, run.run_id).catch(() => undefined);
    expect((await client.runs.get(thread.thread_id, run.run_id)).status).toBe("error");
    await waitFor(
      () =>
        fx.studio
          .output()
          .includes(`Lost the lock on thread ${thread.thread_id}: its connection to the PostgreSQL database at `),
      10_000,
      50,
    );
    // The command itself finished (it was running), but no step after it: one model request.
    expect(readFileSync(path.join(fx.workspace.dir, "after.txt"), "utf8")).toBe("after\n");
    expect(fx.model.requests).toHaveLength(1);

    const next = await client.runs.wait(thread.thread_id, assistantId, {
      input: { messages: [{ type: "human", content: AFTER }] },
      config: { configurable: { approval: "full-auto" } },
    });
    expect(fx.model.requests).toHaveLength(2);
    const sent = fx.model.requests[1]!.messages;
    // The instructions go first (as "developer" for the server's default model), then the thread.
    expect(sent.slice(1).map((m) => m.role)).toEqual(["user", "assistant", "tool", "user"]);
    const result = String(sent[3]!.content);
    expect(result).toMatch(/^This execute_command call was interrupted: it started, but mini-cursor stopped/);
    expect(sent[4]!.content).toBe(AFTER);
    const messages = (next as { messages?: Array<{ content: unknown }> }).messages ?? [];
    expect(messages.at(-1)?.content).toBe("The command was cut off.");
  });
});
