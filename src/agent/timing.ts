import { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import type { ToolMessage } from "@langchain/core/messages";
import { resultDiff } from "../tools/preview.js";
import type { AgentEvent } from "../contracts/events.js";
import { messageText } from "./turn.js";

/**
 * Measures each tool call by its id through LangChain callbacks, so concurrent calls get
 * their own durations in both engines.
 */
export class ToolTimer extends BaseCallbackHandler {
  name = "mini-cursor-tool-timer";
  override awaitHandlers = true;
  // Only tool events matter here. Without these, every runnable of every step (a graph node, its
  // channel writes and routes: dozens a step) would hand this handler its start and end.
  override ignoreChain = true;
  override ignoreLLM = true;
  override ignoreAgent = true;
  override ignoreRetriever = true;
  override ignoreCustomEvent = true;
  private readonly startByRun = new Map<string, { id: string; at: number }>();
  private readonly startById = new Map<string, number>();
  private readonly durations = new Map<string, number>();

  /** `onStart` is told when any tool starts (before it runs: the handlers are awaited). */
  constructor(private readonly onStart?: () => void) {
    super();
  }

  override handleToolStart(
    _tool: unknown,
    _input: string,
    runId: string,
    _parentRunId?: string,
    _tags?: string[],
    _metadata?: Record<string, unknown>,
    _runName?: string,
    toolCallId?: string,
  ): void {
    this.onStart?.();
    if (!toolCallId) return;
    const at = Date.now();
    this.startByRun.set(runId, { id: toolCallId, at });
    this.startById.set(toolCallId, at);
  }

  override handleToolEnd(_output: unknown, runId: string): void {
    this.finish(runId);
  }

  override handleToolError(_err: unknown, runId: string): void {
    this.finish(runId);
  }

  private finish(runId: string): void {
    const start = this.startByRun.get(runId);
    if (!start) return;
    this.durations.set(start.id, Date.now() - start.at);
    this.startByRun.delete(runId);
  }

  /** The call's duration, or the time since it started when it has not ended yet. */
  durationOf(toolCallId: string): number {
    const done = this.durations.get(toolCallId);
    if (done !== undefined) return done;
    const start = this.startById.get(toolCallId);
    return start === undefined ? 0 : Date.now() - start;
  }
}

/** The tool_result event for a result message, the same in both engines. */
export function toolResultEvent(
  result: ToolMessage,
  step: number,
  timer: ToolTimer,
): Extract<AgentEvent, { type: "tool_result" }> {
  const diff = resultDiff(result);
  const artifact = (result.artifact ?? {}) as { notRun?: unknown; exitCode?: unknown; editedArgs?: unknown };
  const edited = artifact.editedArgs;
  const exitCode = typeof artifact.exitCode === "number" || artifact.exitCode === null ? artifact.exitCode : undefined;
  return {
    type: "tool_result",
    step,
    id: result.tool_call_id,
    name: result.name ?? "",
    status: result.status === "error" ? "error" : "success",
    content: messageText(result),
    durationMs: timer.durationOf(result.tool_call_id),
    ...(diff ? { diff } : {}),
    ...(artifact.notRun === true ? { notRun: true } : {}),
    ...(exitCode !== undefined && result.status === "error" ? { exitCode } : {}),
    ...(edited && typeof edited === "object" ? { editedArgs: edited as Record<string, unknown> } : {}),
  };
}
