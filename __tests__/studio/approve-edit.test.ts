import { expect, jest, test } from "@jest/globals";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { Interrupt, ThreadState } from "@langchain/langgraph-sdk";
import { STUDIO_CODE_MISSING } from "../../src/graph/studio-secret.js";
import { editNote } from "../../src/guard/results.js";
import { type ScriptStep } from "../helpers/openai-server.js";
import { printedApprovalCodes, STUDIO_STARTUP_DEADLINE_MS, useStudioServer } from "../helpers/studio-server.js";
import { makeTempDir } from "../helpers/tmp.js";

/**
 * Issue 32 item 4 through the real Studio dev server: a resume with {decision: "edit", args}
 * runs the edited call under the same one-time code rule as an approval; without the code, or
 * with a wrong one, nothing runs; an edit that makes the call dangerous is asked about again,
 * with a code of its own (the first one, which the dev server keeps with the resume, does not
 * answer it).
 */

jest.setTimeout(STUDIO_STARTUP_DEADLINE_MS + 300_000);

const RUN_DEADLINE_MS = 90_000;

interface ApiMessage {
  type: string;
  content: unknown;
  status?: string;
  tool_calls?: Array<{ id: string; name: string; args: Record<string, unknown> }>;
}
type Values = { messages: ApiMessage[] };
interface ApprovalValue {
  toolCallId: string;
  tool: string;
  args: Record<string, unknown>;
  edited?: boolean;
  asksEveryTime?: boolean;
}

const textOf = (content: unknown): string =>
  typeof content === "string"
    ? content
    : Array.isArray(content)
      ? content.map((p) => String((p as { text?: string }).text ?? p)).join("")
      : "";

/** Each task names the file its command writes: `write <name>`. */
const fx = useStudioServer((request): ScriptStep => {
  const last = request.messages.at(-1);
  const task = textOf(last?.content);
  if (last?.role === "user" && task.startsWith("write "))
    return { toolCalls: [{ name: "execute_command", args: { command: `echo model > ${task.slice(6)}` } }] };
  return { content: "ok" };
});

/** The codes the server printed for the thread's waiting calls, in order. */
const codes = (threadId: string, atLeast: number) => printedApprovalCodes(() => fx.studio.output(), threadId, atLeast);

/** Starts `write <file>` on a new thread; it pauses at the command's approval. */
async function paused(file: string) {
  const { client, assistantId } = fx.studio;
  const thread = await client.threads.create();
  const first = (await client.runs.wait(thread.thread_id, assistantId, {
    input: { messages: [{ type: "human", content: `write ${file}` }] },
  })) as { __interrupt__?: Interrupt<ApprovalValue>[] };
  expect(first.__interrupt__!.map((i) => i.value!.args)).toEqual([{ command: `echo model > ${file}` }]);
  const resume = async (value: Record<string, unknown>) =>
    (await client.runs.wait(thread.thread_id, assistantId, { command: { resume: value } })) as Values & {
      __interrupt__?: Interrupt<ApprovalValue>[];
    };
  const state = async () => (await client.threads.getState(thread.thread_id)) as ThreadState<Values>;
  return { threadId: thread.thread_id, resume, state };
}

test(
  "an edit with the call's code runs the edited command; the model is told and the saved turn keeps its call",
  async () => {
    const run = await paused("one.txt");
    const [code] = await codes(run.threadId, 1);
    const args = { command: "echo person > one.txt" };
    const done = await run.resume({ decision: "edit", args, code });
    expect(done.__interrupt__).toBeUndefined();
    expect(readFileSync(path.join(fx.workspace.dir, "one.txt"), "utf8")).toBe("person\n");
    const messages = (await run.state()).values.messages;
    expect(messages.map((m) => m.type)).toEqual(["human", "ai", "tool", "ai"]);
    expect(messages[1]!.tool_calls!.map((c) => c.args)).toEqual([{ command: "echo model > one.txt" }]);
    const result = textOf(messages[2]!.content);
    expect(result.startsWith(`${editNote("execute_command", args)}\n`)).toBe(true);
    const request = fx.model.requests.find((r) =>
      r.messages.some((m) => m.role === "tool" && textOf(m.content) === result),
    );
    expect(request).toBeDefined();
  },
  RUN_DEADLINE_MS * 2,
);

test(
  "an edit without the code, or with a wrong one, is refused like an approval: nothing runs",
  async () => {
    for (const [file, code] of [
      ["two.txt", undefined],
      ["three.txt", "AAAAA-BBBBB"],
    ] as const) {
      const run = await paused(file);
      await codes(run.threadId, 1);
      const done = await run.resume({ decision: "edit", args: { command: `echo pwned > ${file}` }, code });
      expect(done.__interrupt__).toBeUndefined();
      const messages = (await run.state()).values.messages;
      expect(messages[2]!.status).toBe("error");
      expect(textOf(messages[2]!.content)).toBe(
        `This execute_command call was not run, because the user declined it. Their feedback: ${STUDIO_CODE_MISSING}`,
      );
      expect(existsSync(path.join(fx.workspace.dir, file))).toBe(false);
    }
  },
  RUN_DEADLINE_MS * 3,
);

test(
  "an edit that makes the command dangerous is asked about again with a new code; the first code does not answer it",
  async () => {
    const victim = makeTempDir("mini-cursor-studio-edit-victim-");
    try {
      mkdirSync(path.join(victim.dir, "data"));
      writeFileSync(path.join(victim.dir, "data", "keep.txt"), "keep\n");
      const run = await paused("four.txt");
      const [first] = await codes(run.threadId, 1);
      const dangerous = { command: `rm -rf ${path.join(victim.dir, "data")}` };
      const again = await run.resume({ decision: "edit", args: dangerous, code: first });
      expect(again.__interrupt__!.map((i) => [i.value!.args, i.value!.edited, i.value!.asksEveryTime])).toEqual([
        [dangerous, true, true],
      ]);
      const [, second] = await codes(run.threadId, 2);
      expect(second).not.toBe(first);
      // The spent code, as a process reading the dev server's runs would find it, answers nothing.
      const replayed = await run.resume({ decision: "approve", code: first });
      expect(replayed.__interrupt__).toBeUndefined();
      const messages = (await run.state()).values.messages;
      expect(textOf(messages[2]!.content)).toBe(
        "This execute_command call was not run, because the user declined it. " +
          `It needed approval because: dangerous command: rm deletes ${path.join(victim.dir, "data")} (outside the workspace). ` +
          `Their feedback: ${STUDIO_CODE_MISSING}`,
      );
      expect(readFileSync(path.join(victim.dir, "data", "keep.txt"), "utf8")).toBe("keep\n");
      expect(existsSync(path.join(fx.workspace.dir, "four.txt"))).toBe(false);
    } finally {
      victim.cleanup();
    }
  },
  RUN_DEADLINE_MS * 3,
);

test(
  "the re-asked edit, approved with its own code, runs as edited",
  async () => {
    const run = await paused("five.txt");
    const [first] = await codes(run.threadId, 1);
    const outside = path.join(fx.workspace.dir, "..", `${path.basename(fx.workspace.dir)}-outside.txt`);
    const edit = { command: `echo person > ${outside}` };
    const again = await run.resume({ decision: "edit", args: edit, code: first });
    expect(again.__interrupt__!.map((i) => [i.value!.args, i.value!.edited])).toEqual([[edit, true]]);
    const [, second] = await codes(run.threadId, 2);
    await run.resume({ decision: "approve", code: second });
    try {
      expect(readFileSync(outside, "utf8")).toBe("person\n");
      const messages = (await run.state()).values.messages;
      expect(textOf(messages[2]!.content).startsWith(`${editNote("execute_command", edit)}\n`)).toBe(true);
    } finally {
      if (existsSync(outside)) writeFileSync(outside, "");
    }
  },
  RUN_DEADLINE_MS * 3,
);
