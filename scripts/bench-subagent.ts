import { configureParts } from "../src/app/configure.js";
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import { MemorySaver } from "@langchain/langgraph";
import type { Engine } from "../src/agent/engine.js";
import { createRuntime } from "../src/agent/runtime.js";
import { messageText } from "../src/agent/turn.js";
import { createGraph, type GraphSettings } from "../src/graph/graph.js";
import { createGraphEngine } from "../src/graph/engine.js";
import { createLoopEngine } from "../src/loop/loop.js";
import { createSqliteCheckpointer } from "../src/memory/checkpointer.js";
import { createTools } from "../src/tools/index.js";
import { BUILT_IN_SUBAGENTS } from "../src/tools/task.js";

// As the CLI does at start: each part of mini-cursor this script uses gets its slice of the settings.
configureParts();

/**
 * The cost of a `task` call (issue 32): from the end of the parent's model turn that asks for it
 * to the sub-agent's first model request, with a zero-latency model, so what is measured is the
 * engine's work: the parent's routing and tools step, starting the sub-agent (the Send and the
 * subgraph's first nodes, or the nested loop), and building its first request.
 */

export type TaskVariant = "loop" | "graph+memory" | "graph+sqlite";
export const TASK_VARIANTS: TaskVariant[] = ["loop", "graph+memory", "graph+sqlite"];

const BRIEF = "List the workspace and report.";

/** Answers the parent with one task call, the sub-agent with its report; notes when each turn ran. */
class TaskBenchModel extends BaseChatModel {
  parentTurnEnd = 0;
  subFirstRequest = 0;
  _llmType(): string {
    return "bench-task";
  }
  override bindTools(): TaskBenchModel {
    return this;
  }
  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const first = messages.find((m) => m.getType() === "human");
    const sub = first !== undefined && messageText(first) === BRIEF;
    const answered = messages.some((m) => m.getType() === "tool");
    if (sub && this.subFirstRequest === 0) this.subFirstRequest = performance.now();
    const message =
      !sub && !answered
        ? new AIMessage({
            id: randomUUID(),
            content: "",
            tool_calls: [
              {
                name: "task",
                args: { description: "List", prompt: BRIEF, subagent_type: "explore" },
                id: `call_${randomUUID()}`,
                type: "tool_call",
              },
            ],
          })
        : new AIMessage({ id: randomUUID(), content: sub ? "Report." : "Done." });
    if (!sub && !answered) this.parentTurnEnd = performance.now();
    return { generations: [{ text: messageText(message), message }] };
  }
}

/** Milliseconds from the parent's task call to the sub-agent's first model request, for one run. */
export async function measureTaskCall(variant: TaskVariant): Promise<number> {
  const workspace = mkdtempSync(path.join(os.tmpdir(), "mini-cursor-bench-task-"));
  try {
    writeFileSync(path.join(workspace, "a.txt"), "a\n");
    const settings: GraphSettings = {
      workspace,
      model: "bench",
      provider: "offline",
      requestTimeoutMs: 10_000,
      maxRetries: 0,
      approval: "full-auto",
      maxSteps: 10,
      contextTokens: 10_000_000,
    };
    const model = new TaskBenchModel({});
    const tools = createTools({ workspace });
    const meta = { engine: variant, model: "bench", provider: "offline", workspace };
    let engine: Engine;
    if (variant === "loop") {
      engine = createLoopEngine({
        runtime: { ...createRuntime(settings, { model, tools, subagents: BUILT_IN_SUBAGENTS }), workspace },
        meta,
        modelSettings: settings,
      });
    } else {
      const checkpointer = variant === "graph+sqlite" ? createSqliteCheckpointer(workspace) : new MemorySaver();
      const graph = createGraph(settings, { model, tools, checkpointer, subagents: BUILT_IN_SUBAGENTS });
      engine = createGraphEngine({ graph, meta, modelSettings: settings, approval: "full-auto", maxSteps: 10 });
    }
    const summary = await engine.run({
      task: "bench",
      threadId: "bench",
      emit: () => undefined,
      approver: async () => ({ decision: "approve" }),
    });
    if (summary.reason !== "done" || model.subFirstRequest === 0)
      throw new Error(`${variant}: the task call did not run (${summary.reason})`);
    return model.subFirstRequest - model.parentTurnEnd;
  } finally {
    rmSync(workspace, { recursive: true, force: true });
  }
}
