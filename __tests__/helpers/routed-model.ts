import { randomUUID } from "node:crypto";
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import { messageText } from "../../src/agent/turn.js";

/** One scripted turn: text, or tool calls (ids are generated fresh on every call). */
export type RoutedTurn =
  | string
  | { content?: string; toolCalls: Array<{ name: string; args: Record<string, unknown> }> };

/**
 * A scripted model for runs where several conversations share one model at once (parallel
 * sub-agents): each conversation is told apart by its first user message, and plays its own
 * script, so the order in which the parallel calls arrive does not matter.
 */
export class RoutedChatModel extends BaseChatModel {
  readonly calls: BaseMessage[][] = [];
  private readonly played = new Map<string, number>();

  constructor(private readonly scripts: Record<string, RoutedTurn[]>) {
    super({});
  }

  _llmType(): string {
    return "routed";
  }

  override bindTools(): RoutedChatModel {
    return this;
  }

  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    this.calls.push([...messages]);
    const first = messages.find((m) => m.getType() === "human");
    const key = first ? messageText(first) : "";
    const script = this.scripts[key];
    if (!script) throw new Error(`RoutedChatModel: no script for ${JSON.stringify(key)}`);
    const index = this.played.get(key) ?? 0;
    this.played.set(key, index + 1);
    const turn = script[index];
    if (turn === undefined) throw new Error(`RoutedChatModel: no turn ${index + 1} for ${JSON.stringify(key)}`);
    const message =
      typeof turn === "string"
        ? new AIMessage({ id: randomUUID(), content: turn })
        : new AIMessage({
            id: randomUUID(),
            content: turn.content ?? "",
            tool_calls: turn.toolCalls.map((c) => ({
              ...c,
              id: `call_${randomUUID().slice(0, 8)}`,
              type: "tool_call" as const,
            })),
          });
    return { generations: [{ text: messageText(message), message }] };
  }

  /** The requests of one conversation (by its first user message), in order. */
  callsOf(key: string): BaseMessage[][] {
    return this.calls.filter((c) => {
      const first = c.find((m) => m.getType() === "human");
      return first !== undefined && messageText(first) === key;
    });
  }
}
