import { randomUUID } from "node:crypto";
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";

/** One scripted model turn: text, tool calls (ids are generated fresh), or a function of what was sent. */
export type ScriptedTurn =
  | string
  | { content?: string; toolCalls?: Array<{ name: string; args: Record<string, unknown> }> }
  | ((messages: BaseMessage[]) => AIMessage)
  | Error;

/**
 * An in-process chat model that plays a script. Each call returns a fresh AIMessage with unique
 * tool-call ids (reusing one makes the messages reducer replace it and the run end early), and
 * records what it was sent so tests can assert exact message sequences.
 */
export class ScriptedChatModel extends BaseChatModel {
  readonly calls: BaseMessage[][] = [];
  boundToolNames: string[] = [];
  private index = 0;

  constructor(private readonly script: ScriptedTurn[]) {
    super({});
  }

  _llmType(): string {
    return "scripted";
  }

  override bindTools(tools: Array<{ name?: string }>): ScriptedChatModel {
    this.boundToolNames = tools.map((t) => t.name ?? "");
    return this;
  }

  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    this.calls.push([...messages]);
    const turn = this.script[this.index++];
    if (turn === undefined) throw new Error(`ScriptedChatModel: no turn ${this.index} in the script`);
    if (turn instanceof Error) throw turn;
    let message: AIMessage;
    if (typeof turn === "function") message = turn(messages);
    else if (typeof turn === "string") message = new AIMessage({ content: turn, id: randomUUID() });
    else
      message = new AIMessage({
        id: randomUUID(),
        content: turn.content ?? "",
        tool_calls: (turn.toolCalls ?? []).map((c) => ({
          ...c,
          id: `call_${randomUUID().slice(0, 8)}`,
          type: "tool_call" as const,
        })),
      });
    return { generations: [{ text: typeof message.content === "string" ? message.content : "", message }] };
  }

  /** How many turns of the script have been played. */
  get played(): number {
    return this.index;
  }
}

/** A model that repeats the same tool call forever (for step limits and loop guards). */
export function repeatingTurns(name: string, args: Record<string, unknown>, count: number): ScriptedTurn[] {
  return Array.from({ length: count }, () => ({ toolCalls: [{ name, args }] }));
}
