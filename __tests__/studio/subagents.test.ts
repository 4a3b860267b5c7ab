import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { expect, jest, test } from "@jest/globals";
import type { Interrupt, ThreadState } from "@langchain/langgraph-sdk";
import { type ChatRequest, type ScriptStep } from "../helpers/openai-server.js";
import { printedApprovalCodes, useStudioServer } from "../helpers/studio-server.js";

/**
 * The `task` tool under the real Studio dev server (issue 32): the sub-agent's steps stream from
 * their own namespace nested under the call, its approval question is the parent's interrupt,
 * resuming the parent (with the one-time code) resumes the sub-agent at its question, and forking
 * the thread from before the sub-agent's edit takes that edit back.
 */

jest.setTimeout(600_000);
const RUN_DEADLINE_MS = 120_000;

const V0 = "Write notes v0.";
const DELEGATE = "Delegate the file.";
const SUB_BRIEF = "Create sub.txt with v1.";
const SAY_HI = "Say hi.";
const PAIR = "Write alpha and beta at once.";
const ALPHA_BRIEF = "Create alpha.txt.";
const BETA_BRIEF = "Create beta.txt.";
/** Both sub-agents' calls get the id a server that numbers a response's calls would give each. */
const SAME_ID = "call_0";
const PLANS: Record<string, ScriptStep[]> = {
  [V0]: [
    { toolCalls: [{ name: "write_file", args: { filePath: "notes.txt", content: "v0\n" } }] },
    { content: "Wrote v0." },
  ],
  [DELEGATE]: [
    {
      toolCalls: [
        { name: "task", args: { description: "Create sub.txt", prompt: SUB_BRIEF, subagent_type: "general" } },
      ],
    },
    { content: "Delegated." },
  ],
  [SUB_BRIEF]: [
    { toolCalls: [{ name: "write_file", args: { filePath: "sub.txt", content: "v1\n" } }] },
    { content: "Created sub.txt." },
  ],
  [SAY_HI]: [{ content: "Hi." }],
  [PAIR]: [
    {
      toolCalls: [
        { name: "task", args: { description: "Alpha", prompt: ALPHA_BRIEF, subagent_type: "general" } },
        { name: "task", args: { description: "Beta", prompt: BETA_BRIEF, subagent_type: "general" } },
      ],
    },
    { content: "Both done." },
  ],
  [ALPHA_BRIEF]: [
    { toolCalls: [{ id: SAME_ID, name: "write_file", args: { filePath: "alpha.txt", content: "a\n" } }] },
    { content: "Tried alpha." },
  ],
  [BETA_BRIEF]: [
    { toolCalls: [{ id: SAME_ID, name: "write_file", args: { filePath: "beta.txt", content: "b\n" } }] },
    { content: "Created beta." },
  ],
};

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((p) => String((p as { text?: string }).text ?? p)).join("");
  return "";
}

/** The plan of the latest request (a sub-agent's only request is its brief), stepped by the turns since it. */
function scriptStep(request: ChatRequest): ScriptStep {
  const lastUser = request.messages.map((m) => m.role).lastIndexOf("user");
  const key = textOf(request.messages[lastUser]?.content);
  const step = PLANS[key]?.[request.messages.slice(lastUser).filter((m) => m.role === "assistant").length];
  return step ?? { status: 500, error: { message: `no scripted step for ${key}` } };
}

interface ApiMessage {
  type: string;
  content: unknown;
  name?: string;
  tool_calls?: Array<{ name: string; id?: string }>;
}
type AgentValues = { messages: ApiMessage[] };

// Started in full-auto on its command line: its runs may ask for any mode.
const fx = useStudioServer(scriptStep, undefined, ["--approval", "full-auto"]);

const approvalCode = async (threadId: string) =>
  (await printedApprovalCodes(() => fx.studio.output(), threadId)).at(-1)!;

test(
  "a sub-agent streams nested under its call, asks through the parent's interrupt, resumes with it, and time travel takes its edit back",
  async () => {
    const { client, assistantId } = fx.studio;
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, assistantId, {
      input: { messages: [{ type: "human", content: V0 }] },
      config: { configurable: { approval: "full-auto" } },
    });
    expect(readFileSync(path.join(fx.workspace.dir, "notes.txt"), "utf8")).toBe("v0\n");

    // Streamed as Studio streams it (subgraphs on): the sub-agent's nodes come from its own namespace.
    const namespaces = new Set<string>();
    const interrupts: Interrupt[] = [];
    for await (const chunk of client.runs.stream(thread.thread_id, assistantId, {
      input: { messages: [{ type: "human", content: DELEGATE }] },
      config: { configurable: { approval: "suggest" } },
      streamMode: "updates",
      streamSubgraphs: true,
    })) {
      const [, ns] = chunk.event.split("|");
      const data = chunk.data as Record<string, unknown> | undefined;
      if (ns && data) for (const node of Object.keys(data)) namespaces.add(`${ns.split(":")[0]}/${node}`);
      if (!ns && data?.__interrupt__) interrupts.push(...(data.__interrupt__ as Interrupt[]));
    }
    expect([...namespaces].filter((n) => !n.endsWith("__interrupt__")).sort()).toEqual([
      "subagent/agent",
      "subagent/restore_files",
      "subagent/start_step",
      "subagent/summarise",
    ]);
    // The sub-agent's question is the parent's one interrupt; nothing is written yet.
    expect(interrupts.map((i) => (i.value as { tool: string; args: unknown }).tool)).toEqual(["write_file"]);
    expect(existsSync(path.join(fx.workspace.dir, "sub.txt"))).toBe(false);
    const paused = (await client.threads.getState(thread.thread_id)) as ThreadState<AgentValues>;
    expect(paused.next).toEqual(["subagent"]);

    // Resuming the parent with the code resumes the sub-agent at its question.
    const done = (await client.runs.wait(thread.thread_id, assistantId, {
      command: { resume: { decision: "approve", code: await approvalCode(thread.thread_id) } },
      config: { configurable: { approval: "suggest" } },
    })) as AgentValues;
    expect(readFileSync(path.join(fx.workspace.dir, "sub.txt"), "utf8")).toBe("v1\n");
    expect(done.messages.slice(4).map((m) => [m.type, m.name ?? "", textOf(m.content)])).toEqual([
      ["human", "", DELEGATE],
      ["ai", "", ""],
      ["tool", "task", "Created sub.txt."],
      ["ai", "", "Delegated."],
    ]);
    // The sub-agent's brief went to the model once before the question and once after it.
    expect(fx.model.requests.filter((r) => r.messages.some((m) => textOf(m.content) === SUB_BRIEF))).toHaveLength(2);

    // Time travel: a run forked from the end of the first request puts back its files: sub.txt goes.
    const history = (await client.threads.getHistory(thread.thread_id, { limit: 50 })) as ThreadState<AgentValues>[];
    const endOfFirst = history.find((s) => s.next.length === 0 && s.values.messages?.length === 4);
    expect(textOf(endOfFirst?.values.messages.at(-1)?.content)).toBe("Wrote v0.");
    await client.runs.wait(thread.thread_id, assistantId, {
      input: { messages: [{ type: "human", content: SAY_HI }] },
      config: { configurable: { approval: "full-auto" } },
      checkpoint: endOfFirst!.checkpoint,
    });
    expect(existsSync(path.join(fx.workspace.dir, "sub.txt"))).toBe(false);
    expect(readFileSync(path.join(fx.workspace.dir, "notes.txt"), "utf8")).toBe("v0\n");
  },
  RUN_DEADLINE_MS * 4,
);

test(
  "the sub-agent is LangGraph's subgraph; two sub-agents' calls with one id wait with a question each, each naming its sub-agent, and one code approves only its own call",
  async () => {
    const { client, assistantId } = fx.studio;
    // Studio's graph view: the subagent node's compiled graph, drawn inside it with xray.
    const subgraphs = await client.assistants.getSubgraphs(assistantId);
    expect(Object.keys(subgraphs)).toEqual(["subagent"]);
    const drawn = (await client.assistants.getGraph(assistantId, { xray: true })) as { nodes: Array<{ id: string }> };
    expect(drawn.nodes.map((n) => n.id)).toEqual(
      expect.arrayContaining(["subagent:agent", "subagent:approve", "subagent:tools"]),
    );

    const thread = await client.threads.create();
    const interrupts: Interrupt[] = [];
    for await (const chunk of client.runs.stream(thread.thread_id, assistantId, {
      input: { messages: [{ type: "human", content: PAIR }] },
      config: { configurable: { approval: "suggest" } },
      streamMode: "updates",
    })) {
      const data = chunk.data as Record<string, unknown> | undefined;
      if (data?.__interrupt__) interrupts.push(...(data.__interrupt__ as Interrupt[]));
    }
    type Asked = { toolCallId: string; args: { filePath: string }; askedBy?: string; subagent?: { callId: string } };
    const asked = interrupts.map((i) => i.value as Asked);
    const paused = (await client.threads.getState(thread.thread_id, undefined, {
      subgraphs: true,
    })) as ThreadState<AgentValues>;
    const taskCalls = paused.values.messages.at(-1)!.tool_calls!.map((c) => c.id!);
    expect(asked.map((a) => [a.toolCallId, a.args.filePath, a.askedBy, a.subagent]).sort()).toEqual([
      [SAME_ID, "alpha.txt", "general: Alpha", { callId: taskCalls[0], type: "general", description: "Alpha" }],
      [SAME_ID, "beta.txt", "general: Beta", { callId: taskCalls[1], type: "general", description: "Beta" }],
    ]);
    // Each waiting sub-agent's own state, read as Studio reads it (getState with subgraphs).
    const briefs = paused.tasks
      .map((t) => (t.state as ThreadState<AgentValues> | undefined)?.values?.messages?.[0])
      .map((m) => textOf(m?.content))
      .sort();
    expect(briefs).toEqual([ALPHA_BRIEF, BETA_BRIEF]);

    // Two codes, one per call, each printed with the sub-agent that asks.
    await printedApprovalCodes(() => fx.studio.output(), thread.thread_id, 2);
    const codeOf = (label: string) =>
      new RegExp(
        `write_file of sub-agent ${label} in thread ${thread.thread_id} waits for approval[^\\n]*\\n  One-time approval code: (\\S+)`,
      ).exec(fx.studio.output())?.[1];
    const [alphaCode, betaCode] = [codeOf("general: Alpha"), codeOf("general: Beta")];
    expect(alphaCode).toBeDefined();
    expect(betaCode).toBeDefined();
    expect(alphaCode).not.toBe(betaCode);

    // Beta's code given for both: beta's call runs, alpha's is refused.
    const idOf = (file: string) => interrupts[asked.findIndex((a) => a.args.filePath === file)]!.id!;
    await client.runs.wait(thread.thread_id, assistantId, {
      command: {
        resume: {
          [idOf("alpha.txt")]: { decision: "approve", code: betaCode },
          [idOf("beta.txt")]: { decision: "approve", code: betaCode },
        },
      },
      config: { configurable: { approval: "suggest" } },
    });
    expect(readFileSync(path.join(fx.workspace.dir, "beta.txt"), "utf8")).toBe("b\n");
    expect(existsSync(path.join(fx.workspace.dir, "alpha.txt"))).toBe(false);
    const alphaResult = fx.model.requests
      .filter((r) => r.messages.some((m) => textOf(m.content) === ALPHA_BRIEF))
      .at(-1)!
      .messages.at(-1)!;
    expect(alphaResult).toMatchObject({ role: "tool", tool_call_id: SAME_ID });
    expect(textOf(alphaResult.content)).toContain("one-time Studio approval code");
  },
  RUN_DEADLINE_MS * 4,
);
