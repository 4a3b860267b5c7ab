import { configureParts } from "../src/app/configure.js";
/**
 * One engine on one task, in this process, for `npm run compare`: prints one JSON line with the
 * outcome, counts, the wall time split into model, tools and orchestration, and peak memory.
 *
 *   tsx scripts/compare-run.ts <engine> <workspace> <approval> <maxSteps> <task>
 */
import { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { createAgentParts } from "../src/app/agent.js";
import type { AgentEvent } from "../src/contracts/events.js";
import { createChatModel } from "../src/models/model.js";
import { nonInteractiveApprover } from "../src/ui/approval-prompt.js";
import { loadSettings, type EngineName } from "../src/settings.js";
import { unionMs, type Interval } from "./compare-lib.js";
import { peakRssBytes } from "./peak-rss.js";

// As the CLI does at start: each part of mini-cursor this script uses gets its slice of the settings.
configureParts();

/** Records when each model request and each tool call ran. */
class Clock extends BaseCallbackHandler {
  name = "compare-clock";
  override awaitHandlers = true;
  readonly model: Interval[] = [];
  readonly tools: Interval[] = [];
  private readonly open = new Map<string, number>();
  modelCalls = 0;
  override handleChatModelStart(_llm: unknown, _messages: unknown, runId: string): void {
    this.modelCalls++;
    this.open.set(runId, performance.now());
  }
  override handleLLMEnd(_output: unknown, runId: string): void {
    this.close(runId, this.model);
  }
  override handleLLMError(_err: unknown, runId: string): void {
    this.close(runId, this.model);
  }
  override handleToolStart(_tool: unknown, _input: string, runId: string): void {
    this.open.set(runId, performance.now());
  }
  override handleToolEnd(_output: unknown, runId: string): void {
    this.close(runId, this.tools);
  }
  override handleToolError(_err: unknown, runId: string): void {
    this.close(runId, this.tools);
  }
  private close(runId: string, into: Interval[]): void {
    const start = this.open.get(runId);
    if (start === undefined) return;
    into.push([start, performance.now()]);
    this.open.delete(runId);
  }
}

async function main(): Promise<void> {
  const [engine, workspace, approval, maxSteps, ...taskWords] = process.argv.slice(2);
  const settings = loadSettings({ engine: engine as EngineName, workspace, approval, maxSteps, color: false });
  const clock = new Clock();
  // The clock rides on the model's callbacks, so it sees every request and every tool call.
  const model = createChatModel(settings) as BaseChatModel;
  model.callbacks = [clock];
  const events: AgentEvent[] = [];
  const parts = createAgentParts(settings, { emit: (e) => events.push(e), model });
  for (const tool of parts.tools) (tool as { callbacks?: unknown }).callbacks = [clock];
  const started = performance.now();
  const summary = await parts.engine.run({
    task: taskWords.join(" "),
    threadId: `compare-${engine}`,
    approver: nonInteractiveApprover,
    emit: (e) => events.push(e),
  });
  const wallMs = performance.now() - started;
  await parts.tools.processes.stopAll();
  await parts.close();
  const modelMs = unionMs(clock.model);
  const toolMs = unionMs(clock.tools);
  const result = {
    engine,
    outcome: summary.reason,
    steps: summary.steps,
    modelCalls: clock.modelCalls,
    toolCalls: summary.toolCalls,
    // Sub-agents' calls carry the id of their task call (`subagent`); the task calls are the parent's.
    subagents: events.filter((e) => e.type === "tool_call" && e.name === "task" && !e.subagent).length,
    subagentToolCalls: events.filter((e) => e.type === "tool_call" && e.subagent).length,
    tokensIn: summary.usage.input,
    tokensOut: summary.usage.output,
    tokensEstimated: summary.usage.estimated,
    wallMs,
    modelMs,
    toolMs,
    orchestrationMs: Math.max(0, wallMs - modelMs - toolMs),
    peakRssBytes: peakRssBytes(),
    finalText: summary.finalText ?? "",
    error: summary.error,
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`compare-run: ${(err as Error).message}\n`);
    process.exit(1);
  },
);
