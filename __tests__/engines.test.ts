import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { z } from "zod";
import type { AgentEvent } from "../src/contracts/events.js";
import { UNATTENDED_RESPONSE } from "../src/policy/approval.js";
import type { GraphSettings } from "../src/graph/graph.js";
import { TOOL_NAMES } from "../src/tools/index.js";
import { tool } from "@langchain/core/tools";
import { declared, ENDS_RUN } from "../src/contracts/tools.js";
import { createTools } from "../src/tools/index.js";
import { engineHarness, type EngineHarness, type EngineKind } from "./helpers/engine-harness.js";
import { repeatingTurns, type ScriptedTurn } from "./helpers/scripted-model.js";
import { makeTempDir, waitFor } from "./helpers/tmp.js";
import { ENGINE_MEMORIES, openPostgresMemory } from "./helpers/postgres.js";
import { INTERRUPTED_CALL_RESULT, INTERRUPTED_NOTE } from "../src/agent/turn.js";

let tmp: ReturnType<typeof makeTempDir>;
beforeEach(() => {
  tmp = makeTempDir();
});
afterEach(() => tmp.cleanup());

type Harness = EngineHarness;
let kind: EngineKind = "graph";

/** Threads in PostgreSQL for the postgres cases (see helpers/postgres.ts), else in memory. */
let backend: Awaited<ReturnType<typeof openPostgresMemory>> | undefined;

function harness(
  script: ScriptedTurn[],
  overrides: Partial<GraphSettings> = {},
  tools?: StructuredToolInterface[],
): Harness {
  return engineHarness(
    kind,
    tmp.dir,
    script,
    { approval: "auto-edit", ...overrides },
    {
      tools,
      defaultAnswer: UNATTENDED_RESPONSE,
      memory: backend?.memory,
    },
  );
}

/** Whether process `pid` is running (a zombie counts as gone). */
function isAlive(pid: number): boolean {
  try {
    return !/^\S+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

function types(events: AgentEvent[]): string[] {
  return events.filter((e) => e.type !== "usage" && e.type !== "token").map((e) => e.type);
}

function roles(messages: BaseMessage[]): string[] {
  return messages.map((m) => m.getType());
}

describe.each((["graph", "loop"] as const).flatMap((e) => ENGINE_MEMORIES.map((m) => [e, m] as const)))(
  "%s engine, threads %s",
  (engineKind, memoryKind) => {
    beforeAll(() => {
      kind = engineKind;
    });
    beforeEach(async () => {
      if (memoryKind === "postgres") backend = await openPostgresMemory(tmp.dir);
    });
    afterEach(async () => {
      await backend?.close();
      backend = undefined;
    });

    test("a tool failure is a result with status error for the trace, the saved conversation and the model", async () => {
      mkdirSync(path.join(tmp.dir, "adir"));
      const h = harness(
        [
          {
            toolCalls: [
              { name: "write_file", args: { filePath: "adir", content: "x" } },
              { name: "read_file", args: { filePath: "missing.txt" } },
              { name: "execute_command", args: { command: "exit 7" } },
              { name: "execute_command", args: { command: "echo fine" } },
            ],
          },
          "ok",
        ],
        { approval: "full-auto" },
      );
      expect((await h.run("go")).reason).toBe("done");
      const results = h.events.filter((e) => e.type === "tool_result") as Array<{
        name: string;
        status: string;
        content: string;
        exitCode?: number;
      }>;
      const byContent = (needle: string) => results.find((r) => r.content.includes(needle));
      expect(byContent("is a directory")).toMatchObject({ name: "write_file", status: "error" });
      expect(byContent("missing.txt")).toMatchObject({ name: "read_file", status: "error" });
      expect(byContent("Exit code: 7")).toMatchObject({ name: "execute_command", status: "error", exitCode: 7 });
      expect(byContent("fine")).toMatchObject({ status: "success" });
      expect(byContent("fine")).not.toHaveProperty("exitCode");
      const sent = h.model.calls[1]!.filter((m): m is ToolMessage => ToolMessage.isInstance(m));
      expect(sent.map((m) => m.status)).toEqual(["error", "error", "error", "success"]);
      const saved = (await h.history()).filter((m): m is ToolMessage => ToolMessage.isInstance(m));
      expect(saved.map((m) => m.status)).toEqual(["error", "error", "error", "success"]);
    });

    test("a server that numbers every response's calls from call_0: each turn's calls run", async () => {
      writeFileSync(path.join(tmp.dir, "a.txt"), "A\n");
      writeFileSync(path.join(tmp.dir, "b.txt"), "B\n");
      const turn = (file: string) => () =>
        new AIMessage({
          content: "",
          tool_calls: [{ id: "call_0", name: "read_file", args: { filePath: file }, type: "tool_call" }],
        });
      const h = harness([turn("a.txt"), turn("b.txt"), "Read both."]);
      expect((await h.run("read a.txt, then b.txt")).reason).toBe("done");
      const results = h.events.filter((e) => e.type === "tool_result") as Array<{ content: string }>;
      expect(results.map((r) => r.content.split("\n")[0])).toEqual(["     1\tA", "     1\tB"]);
      expect(roles(await h.history())).toEqual(["human", "ai", "tool", "ai", "tool", "ai"]);
    });

    test("a tool call, its result and the answer, as events and as the saved conversation", async () => {
      const h = harness([
        { toolCalls: [{ name: "write_file", args: { filePath: "a.txt", content: "hello\n" } }] },
        "Wrote a.txt.",
      ]);
      const summary = await h.run("write a.txt");
      expect(summary.reason).toBe("done");
      expect(summary.steps).toBe(2);
      expect(summary.toolCalls).toBe(1);
      expect(readFileSync(path.join(tmp.dir, "a.txt"), "utf8")).toBe("hello\n");
      expect(types(h.events)).toEqual(["run_start", "step", "tool_call", "tool_result", "step", "final", "run_end"]);
      const result = h.events.find((e) => e.type === "tool_result");
      expect(result).toMatchObject({ name: "write_file", status: "success" });
      expect(h.events.find((e) => e.type === "final")).toEqual({ type: "final", text: "Wrote a.txt." });

      expect(roles(await h.history())).toEqual(["human", "ai", "tool", "ai"]);
      // The second model request carries the system prompt, the request, the call and its result.
      expect(roles(h.model.calls[1]!)).toEqual(["system", "human", "ai", "tool"]);
      const toolMsg = h.model.calls[1]![3] as ToolMessage;
      expect(toolMsg.tool_call_id).toBe((h.model.calls[1]![2] as AIMessage).tool_calls![0]!.id);
    });

    test("tool calls of one turn on different paths run concurrently", async () => {
      // Each tool waits until both have started: run one after the other, they would never finish.
      // It declares that it reads the path it is named after, so the two calls touch different paths.
      let started = 0;
      let release!: () => void;
      const both = new Promise<void>((resolve) => (release = resolve));
      const rendezvous = declared(
        tool(
          async ({ name }: { name: string }) => {
            started++;
            if (started === 2) release();
            let timer: NodeJS.Timeout | undefined;
            const deadline = new Promise(
              (_, reject) => (timer = setTimeout(() => reject(new Error("not concurrent")), 5000)),
            );
            try {
              await Promise.race([both, deadline]);
            } finally {
              clearTimeout(timer);
            }
            return `done ${name}`;
          },
          { name: "rendezvous", description: "test", schema: z.object({ name: z.string() }) },
        ),
        { kind: "read", paths: { name: "path" } },
      );
      const h = harness(
        [
          {
            toolCalls: [
              { name: "rendezvous", args: { name: "a" } },
              { name: "rendezvous", args: { name: "b" } },
            ],
          },
          "ok",
        ],
        {},
        [rendezvous],
      );
      await h.run("go");
      const results = h.events.filter((e) => e.type === "tool_result").map((e) => (e as { content: string }).content);
      expect(results.sort()).toEqual(["done a", "done b"]);
    });

    test("auto-edit asks before a command; a denial becomes a tool result with the feedback", async () => {
      const h = harness([
        { toolCalls: [{ name: "execute_command", args: { command: "touch made-by-command" } }] },
        "ok",
      ]);
      await h.run("make it", { answers: [{ decision: "deny", feedback: "not now" }] });
      expect(h.approvals).toHaveLength(1);
      expect(h.approvals[0]).toMatchObject({ tool: "execute_command", args: { command: "touch made-by-command" } });
      expect(h.approvals[0]!.reason).toContain("auto-edit");
      const result = h.events.find((e) => e.type === "tool_result") as { content: string; status: string };
      expect(result.status).toBe("error");
      expect(result.content).toBe(
        "This execute_command call was not run, because the user declined it. Their feedback: not now",
      );
      expect(() => readFileSync(path.join(tmp.dir, "made-by-command"))).toThrow();
      expect(types(h.events)).toEqual([
        "run_start",
        "step",
        "tool_call",
        "approval",
        "tool_result",
        "step",
        "final",
        "run_end",
      ]);
    });

    test("approve runs the command; always stops asking for that program in the thread", async () => {
      const h = harness([
        { toolCalls: [{ name: "execute_command", args: { command: "echo one > one.txt" } }] },
        { toolCalls: [{ name: "execute_command", args: { command: "echo two > two.txt" } }] },
        { toolCalls: [{ name: "execute_command", args: { command: "touch three.txt" } }] },
        "done",
      ]);
      await h.run("go", { answers: [{ decision: "always" }, { decision: "approve" }] });
      // echo asked once (always), touch asked once (approve)
      expect(h.approvals.map((a) => a.args.command)).toEqual(["echo one > one.txt", "touch three.txt"]);
      expect(readFileSync(path.join(tmp.dir, "two.txt"), "utf8")).toBe("two\n");
      expect(readFileSync(path.join(tmp.dir, "three.txt"), "utf8")).toBe("");
    });

    test("suggest asks before writes; full-auto asks only for dangerous commands", async () => {
      const suggest = harness(
        [{ toolCalls: [{ name: "write_file", args: { filePath: "x.txt", content: "x" } }] }, "ok"],
        { approval: "suggest" },
      );
      await suggest.run("write");
      expect(suggest.approvals.map((a) => a.tool)).toEqual(["write_file"]);

      const auto = harness(
        [
          {
            toolCalls: [
              { name: "execute_command", args: { command: "echo safe" } },
              { name: "execute_command", args: { command: "rm -rf ~/important" } },
            ],
          },
          "ok",
        ],
        { approval: "full-auto" },
      );
      await auto.run("go");
      expect(auto.approvals.map((a) => a.args.command)).toEqual(["rm -rf ~/important"]);
      expect(auto.approvals[0]!.reason).toMatch(/dangerous/);
      const results = auto.events.filter((e) => e.type === "tool_result") as Array<{ content: string; status: string }>;
      // In full-auto no flag would allow it: the model is told what would (issue 14, item 2).
      expect(results.find((r) => r.content.includes("not run"))?.content).toBe(
        "This execute_command call was not run, because nobody could be asked to approve it (mini-cursor is not running on a terminal). " +
          `It needed approval because: ${auto.approvals[0]!.reason}. ` +
          "Such a call asks in every approval mode and no allow rule covers it: it needs a person on a terminal to approve it. Tell the user what was not done and why.",
      );
      expect(results.some((r) => r.content.includes("safe"))).toBe(true);
    });

    test("the step limit stops a model that never answers, cleanly", async () => {
      const h = harness(repeatingTurns("list_directory", { directoryPath: "." }, 10), { maxSteps: 3 });
      const summary = await h.run("loop forever");
      expect(summary.reason).toBe("max_steps");
      expect(h.model.played).toBe(3);
      expect(summary.steps).toBe(3);
      expect(roles(await h.history())).toEqual(["human", "ai", "tool", "ai", "tool", "ai", "tool"]);
    });

    test("a second task on the same thread sees the first", async () => {
      const h = harness(["Beijing: sunny.", "Shanghai: rain."]);
      await h.run("今天北京天气怎么样", { threadId: "weather" });
      await h.run("那上海呢", { threadId: "weather" });
      expect(roles(h.model.calls[1]!)).toEqual(["system", "human", "ai", "human"]);
      expect(h.model.calls[1]![1]!.content).toBe("今天北京天气怎么样");
      expect(h.model.calls[1]![2]!.content).toBe("Beijing: sunny.");
      expect(h.model.calls[1]![3]!.content).toBe("那上海呢");
    });

    test("a provider failure mid-run keeps completed steps and the thread continues", async () => {
      const h = harness([
        { toolCalls: [{ name: "write_file", args: { filePath: "kept.txt", content: "kept" } }] },
        Object.assign(new Error("boom"), { status: 500 }),
        "continued",
      ]);
      const first = await h.run("do it", { threadId: "crash" });
      expect(first.reason).toBe("error");
      expect(h.events.find((e) => e.type === "error")).toMatchObject({ message: expect.stringContaining("HTTP 500") });
      const second = await h.run("continue", { threadId: "crash" });
      expect(second.reason).toBe("done");
      expect(roles(h.model.calls[2]!)).toEqual(["system", "human", "ai", "tool", "human"]);
    });

    test("unknown tools and bad arguments reach the model as errors and the run goes on", async () => {
      const h = harness([
        {
          toolCalls: [
            { name: "delete_everything", args: {} },
            { name: "read_file", args: { filePath: 42 } },
          ],
        },
        "recovered",
      ]);
      const summary = await h.run("go");
      expect(summary.reason).toBe("done");
      const results = h.events.filter((e) => e.type === "tool_result") as Array<{
        name: string;
        content: string;
        status: string;
      }>;
      expect(results.find((r) => r.name === "delete_everything")?.content).toBe(
        `Error: there is no tool named "delete_everything". Available tools: ${TOOL_NAMES.join(", ")}.`,
      );
      const bad = results.find((r) => r.name === "read_file")!;
      expect(bad.status).toBe("error");
      expect(bad.content).toMatch(/filePath/);
    });

    test("a conversation with an unanswered tool call is repaired before the next request", async () => {
      const h = harness(["fine"]);
      const dangling = new AIMessage({
        content: "",
        tool_calls: [{ id: "c1", name: "list_directory", args: { directoryPath: "." }, type: "tool_call" }],
      });
      await h.seed("t1", [new HumanMessage("first"), dangling]);
      await h.run("second");
      expect(roles(h.model.calls[0]!)).toEqual(["system", "human", "ai", "tool", "human"]);
    });

    test("the system prompt names the workspace and the cd rule", async () => {
      writeFileSync(path.join(tmp.dir, "x"), "");
      const h = harness(["hi"]);
      await h.run("hello");
      const system = String(h.model.calls[0]![0]!.content);
      expect(system).toContain(`Workspace root: ${tmp.dir}`);
      expect(system).toContain("Use workingDirectory instead of cd");
      expect(h.model.boundToolNames).toEqual([...TOOL_NAMES]);
      expect(h.model.boundToolNames).toEqual(
        expect.arrayContaining(["edit_file", "search_files", "find_files", "process_output", "stop_process"]),
      );
    });

    test("cancelled while a command runs beside a finished edit: the next request keeps the edit", async () => {
      const h = harness(
        [
          {
            toolCalls: [
              { name: "write_file", args: { filePath: "a.txt", content: "new\n" } },
              { name: "execute_command", args: { command: "touch started; sleep 30" } },
            ],
          },
          "next",
        ],
        { approval: "full-auto" },
      );
      const controller = new AbortController();
      const running = h.run("edit and wait", { signal: controller.signal });
      // The command may touch any file, so it starts once the edit has ended (the turn's order).
      await waitFor(() => existsSync(path.join(tmp.dir, "started")));
      controller.abort();
      expect((await running).reason).toBe("interrupted");
      expect((await h.run("go on")).reason).toBe("done");
      expect(readFileSync(path.join(tmp.dir, "a.txt"), "utf8")).toBe("new\n");
      expect(h.events.filter((e) => e.type === "notice").map((e) => e.message)).toEqual([]);
    });

    test("a call that ends the run (its state cannot be saved) stops the turn's other calls before the run ends", async () => {
      const broken = declared(
        tool(
          async () => {
            // Once the command runs beside it.
            await waitFor(() => existsSync(path.join(tmp.dir, "pid")), 30_000);
            const err = new Error("the journal's disk is full");
            Object.assign(err, { [ENDS_RUN]: true });
            throw err;
          },
          { name: "broken", description: "test", schema: z.object({}) },
        ),
        // Run beside the command (a turn's commands do not wait for each other), once it started.
        { kind: "execute" },
      );
      const h = harness(
        [
          {
            toolCalls: [
              { name: "execute_command", args: { command: "sleep 30 & echo $! > pid.tmp; mv pid.tmp pid; wait" } },
              { name: "broken", args: {} },
            ],
          },
        ],
        { approval: "full-auto" },
        [...createTools({ workspace: tmp.dir }), broken],
      );
      const summary = await h.run("go");
      expect(summary.reason).toBe("error");
      // When the run has ended, the command's process is gone (stopped, not left running).
      const pid = Number(readFileSync(path.join(tmp.dir, "pid"), "utf8"));
      // Its group was signalled before the run ended; the child's own exit may lag a moment behind.
      await waitFor(() => !isAlive(pid), 10_000);
    });

    test("cancelling mid-command stops it, keeps the conversation and tells the model", async () => {
      const h = harness(
        [{ toolCalls: [{ name: "execute_command", args: { command: "touch started; sleep 30" } }] }, "next"],
        { approval: "full-auto" },
      );
      const controller = new AbortController();
      const running = h.run("wait", { signal: controller.signal });
      await waitFor(() => existsSync(path.join(tmp.dir, "started")));
      controller.abort();
      const summary = await running;
      expect(summary.reason).toBe("interrupted");
      const saved = await h.history();
      expect(roles(saved)).toEqual(["human", "ai", "tool", "ai"]);
      expect(saved[2]!.content).toBe(INTERRUPTED_CALL_RESULT);
      expect(saved[3]!.content).toBe(INTERRUPTED_NOTE);
      await h.run("go on");
      expect(roles(h.model.calls[1]!)).toEqual(["system", "human", "ai", "tool", "ai", "human"]);
    });
  },
);
