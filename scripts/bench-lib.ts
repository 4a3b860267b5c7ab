import { randomUUID } from "node:crypto";
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";

/** Words the scripted model "thinks" each step, so transcripts have a realistic size. */
const THOUGHT = "Looking at the listing to decide the next step. ".repeat(4);

/**
 * A zero-latency model for benchmarks: `steps - 1` turns that each call `call(step)`, then an
 * answer. Time spent inside it is recorded so it can be subtracted from orchestration.
 */
export class BenchModel extends BaseChatModel {
  modelMs = 0;
  calls = 0;
  constructor(
    private readonly steps: number,
    private readonly call: (step: number) => { name: string; args: Record<string, unknown> }[],
  ) {
    super({});
  }
  _llmType(): string {
    return "bench";
  }
  override bindTools(): BenchModel {
    return this;
  }
  async _generate(_messages: BaseMessage[]): Promise<ChatResult> {
    const started = performance.now();
    this.calls++;
    const step = this.calls;
    const message =
      step < this.steps
        ? new AIMessage({
            id: randomUUID(),
            content: THOUGHT,
            tool_calls: this.call(step).map((c) => ({ ...c, id: `call_${randomUUID()}`, type: "tool_call" as const })),
          })
        : new AIMessage({ id: randomUUID(), content: "All done." });
    this.modelMs += performance.now() - started;
    return { generations: [{ text: String(message.content), message }] };
  }
}
