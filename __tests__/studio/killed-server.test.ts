import { afterAll, beforeAll, expect, jest, test } from "@jest/globals";
import { existsSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { startOpenAIServer, type OpenAIServer, type ScriptStep } from "../helpers/openai-server.js";
import {
  STUDIO_STARTUP_DEADLINE_MS,
  killAllIn,
  startStudioServer,
  type StudioServer,
} from "../helpers/studio-server.js";
import { makeTempDir, waitFor } from "../helpers/tmp.js";
import { expectValidConversation, toolResults, userTexts } from "../faults/harness.js";

/**
 * The dev server SIGKILLed while a run's command runs. langgraph-api's in-memory server keeps
 * that run marked "running" after a restart and never runs or cancels it, so its thread would
 * refuse new runs; `npm run studio` marks it failed before the restarted server loads its state
 * and says so (scripts/studio-stale-runs.mjs). The thread then takes a new run at once, from its
 * last saved step, and that run tells the model the cut-off command was interrupted.
 */

jest.setTimeout(2 * STUDIO_STARTUP_DEADLINE_MS + 240_000);

const RUN_DEADLINE_MS = 90_000;
const HOLD = "Run the long job.";
const AFTER = "Did the job finish?";
/** Writes a file, says it started, then runs until it is killed. */
const HOLD_COMMAND = "echo partial > partial.txt && touch hold.started && while true; do sleep 0.1; done";
/** The dev server writes its checkpoints 3 s after the last change (langgraph-api's persist.mjs). */
const CHECKPOINTS = ".langgraph_api/.langgraphjs_api.checkpointer.json";

let model: OpenAIServer;
let workspace: ReturnType<typeof makeTempDir>;
let first: StudioServer | undefined;
let second: StudioServer | undefined;

beforeAll(async () => {
  workspace = makeTempDir("mini-cursor-studio-ws-");
  model = await startOpenAIServer((request): ScriptStep => {
    const last = request.messages.at(-1);
    if (last?.role === "user" && last.content === HOLD)
      return { toolCalls: [{ name: "execute_command", args: { command: HOLD_COMMAND } }] };
    return { content: "It was cut off when the server died." };
  });
});

afterAll(async () => {
  first?.kill();
  second?.stop();
  killAllIn(workspace.dir);
  await model?.close();
  workspace?.cleanup();
});

const env = () => ({
  OPENAI_BASE_URL: model.url,
  OPENAI_API_KEY: "test",
  MINI_CURSOR_WORKSPACE: workspace.dir,
  MINI_CURSOR_SANDBOX: "off",
  // The person's choice for this server: its runs may ask for full-auto.
  MINI_CURSOR_APPROVAL: "full-auto",
});

test("a run cut off by a killed server: the restart marks it failed and says so, and the thread's next run tells the model the command was interrupted", async () => {
  first = await startStudioServer(env(), [workspace.dir]);
  const { client, assistantId } = first;
  const thread = await client.threads.create();
  const cut = await client.runs.create(thread.thread_id, assistantId, {
    input: { messages: [{ type: "human", content: HOLD }] },
    config: { configurable: { approval: "full-auto" } },
  });
  await waitFor(() => existsSync(path.join(workspace.dir, "hold.started")), RUN_DEADLINE_MS, 50);
  // Killed once the step with the call is on disk (its checkpoints are base64 there: the file's time says it).
  const saved = path.join(first.project, CHECKPOINTS);
  const began = statSync(path.join(workspace.dir, "hold.started")).mtimeMs;
  await waitFor(() => existsSync(saved) && statSync(saved).mtimeMs > began, 30_000, 100);
  first.kill();
  killAllIn(workspace.dir);
  const project = first.project;
  first = undefined;

  second = await startStudioServer(env(), [workspace.dir], project);
  expect(second.output()).toContain(
    `mini-cursor studio: run ${cut.run_id} on thread ${thread.thread_id} was in flight when the server stopped; it is marked failed, so the thread takes new runs. ` +
      "The thread keeps its saved steps, and its next run tells the model which tool calls of the cut-off step finished and which were interrupted.\n",
  );
  expect(await second.client.runs.list(thread.thread_id, { status: "running" })).toEqual([]);
  expect((await second.client.runs.get(thread.thread_id, cut.run_id)).status).toBe("error");
  const before = model.requests.length;
  await second.client.runs.wait(thread.thread_id, second.assistantId, {
    input: { messages: [{ type: "human", content: AFTER }] },
    config: { configurable: { approval: "full-auto" } },
  });
  expect(model.requests).toHaveLength(before + 1);
  const sent = model.requests.at(-1)!.messages;
  expectValidConversation(sent);
  expect(userTexts(sent)).toEqual([HOLD, AFTER]);
  const [result] = toolResults(sent);
  expect(result).toMatch(/^This execute_command call was interrupted/);
  expect(result).toContain("partial.txt (added)");
  expect(second.output()).toContain(`mini-cursor: thread ${thread.thread_id}: `);
  expect(readFileSync(path.join(workspace.dir, "partial.txt"), "utf8")).toBe("partial\n");
});
