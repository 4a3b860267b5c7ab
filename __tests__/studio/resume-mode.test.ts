import { expect, jest, test } from "@jest/globals";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import type { Interrupt, ThreadState } from "@langchain/langgraph-sdk";
import { STUDIO_CODE_MISSING } from "../../src/graph/studio-secret.js";
import type { ScriptStep } from "../helpers/openai-server.js";
import { printedApprovalCodes, STUDIO_STARTUP_DEADLINE_MS, useStudioServer } from "../helpers/studio-server.js";

/**
 * Attack (issue 42, kind 2): any local process can talk to the dev server's API. A call waits
 * for approval on a server started in its default mode (auto-edit); the attacker resumes it with
 * a looser `approval` in the run's config, approving without the one-time code, or starts a new
 * run in full-auto. The resume must be judged in the mode the question was asked in, and a run
 * may not be looser than the server's mode: nothing runs unasked.
 */

jest.setTimeout(STUDIO_STARTUP_DEADLINE_MS + 300_000);

const RUN_DEADLINE_MS = 90_000;

interface ApiMessage {
  type: string;
  content: unknown;
  status?: string;
}
type Values = { messages: ApiMessage[] };

const textOf = (content: unknown): string => (typeof content === "string" ? content : JSON.stringify(content));

/** `command <file>` runs a command that writes the file; `write <file>` calls write_file. */
const fx = useStudioServer((request): ScriptStep => {
  const last = request.messages.at(-1);
  const task = textOf(last?.content);
  if (last?.role === "user" && task.startsWith("command "))
    return { toolCalls: [{ name: "execute_command", args: { command: `echo ran > ${task.slice(8)}` } }] };
  if (last?.role === "user" && task.startsWith("write "))
    return { toolCalls: [{ name: "write_file", args: { filePath: task.slice(6), content: "written\n" } }] };
  return { content: "ok" };
});

type Result = Values & { __interrupt__?: Interrupt[] };

/** Starts `task` on a new thread in `approval` (the server's mode when undefined); it pauses at the call's question. */
async function paused(task: string, approval?: string) {
  const { client, assistantId } = fx.studio;
  const thread = await client.threads.create();
  const config = approval ? { config: { configurable: { approval } } } : {};
  const first = (await client.runs.wait(thread.thread_id, assistantId, {
    input: { messages: [{ type: "human", content: task }] },
    ...config,
  })) as Result;
  expect(first.__interrupt__).toHaveLength(1);
  /** A resume as any local process can send it: its own config, its own answer; the run's status. */
  const resume = async (value: Record<string, unknown>, asked?: string) => {
    const run = await client.runs.create(thread.thread_id, assistantId, {
      command: { resume: value },
      ...(asked ? { config: { configurable: { approval: asked } } } : {}),
    });
    await client.runs.join(thread.thread_id, run.run_id).catch(() => undefined);
    return (await client.runs.get(thread.thread_id, run.run_id)).status;
  };
  const state = async () => (await client.threads.getState(thread.thread_id)) as ThreadState<Values>;
  return { threadId: thread.thread_id, resume, state };
}

const file = (name: string) => path.join(fx.workspace.dir, name);

const LOOSER = (threadId: string) =>
  `mini-cursor: a run of thread ${threadId} asked for approval mode full-auto, looser than auto-edit, the mode this server was started in; it runs in auto-edit. To allow full-auto, start the server in it: npm run studio -- --approval full-auto`;

/** The tool result of a call declined for want of its code. */
const declined = (tool: string) =>
  `This ${tool} call was not run, because the user declined it. Their feedback: ${STUDIO_CODE_MISSING}`;

test(
  "a resume that asks for full-auto on an auto-edit server approves without the code: it runs in auto-edit, so the call is declined and nothing runs",
  async () => {
    const run = await paused("command one.txt");
    await printedApprovalCodes(() => fx.studio.output(), run.threadId, 1);
    expect(await run.resume({ decision: "approve" }, "full-auto")).toBe("success");
    expect(existsSync(file("one.txt"))).toBe(false);
    expect(fx.studio.output()).toContain(LOOSER(run.threadId));
    const messages = (await run.state()).values.messages;
    expect(messages.map((m) => m.type)).toEqual(["human", "ai", "tool", "ai"]);
    expect(messages[2]!.status).toBe("error");
    expect(textOf(messages[2]!.content)).toBe(declined("execute_command"));
  },
  RUN_DEADLINE_MS * 2,
);

test(
  "a question asked in suggest is judged in suggest when a resume comes in auto-edit: without the code nothing runs",
  async () => {
    const run = await paused("write two.txt", "suggest");
    await printedApprovalCodes(() => fx.studio.output(), run.threadId, 1);
    // auto-edit would let write_file run unasked; the question was asked in suggest.
    expect(await run.resume({ decision: "approve" }, "auto-edit")).toBe("success");
    expect(existsSync(file("two.txt"))).toBe(false);
    const messages = (await run.state()).values.messages;
    expect(messages.map((m) => m.type)).toEqual(["human", "ai", "tool", "ai"]);
    expect(messages[2]!.status).toBe("error");
    expect(textOf(messages[2]!.content)).toBe(declined("write_file"));
  },
  RUN_DEADLINE_MS * 2,
);

test(
  "a new run that asks for full-auto on an auto-edit server runs in auto-edit: the command waits for its code, and the code still runs it",
  async () => {
    const run = await paused("command three.txt", "full-auto");
    const [code] = await printedApprovalCodes(() => fx.studio.output(), run.threadId, 1);
    expect(existsSync(file("three.txt"))).toBe(false);
    expect(fx.studio.output()).toContain(LOOSER(run.threadId));
    expect(await run.resume({ decision: "approve", code }, "full-auto")).toBe("success");
    expect(readFileSync(file("three.txt"), "utf8")).toBe("ran\n");
  },
  RUN_DEADLINE_MS * 2,
);
