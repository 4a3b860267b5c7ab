import type { Json, ResponseExtras } from "./call-context.js";
import { ThinkSplitter } from "./think.js";
import { ToolCallAssembler, type RawToolCallDelta } from "./tool-call-stream.js";

/**
 * Streamed chat-completion chunks, normalised one by one before the SDK and LangChain read them:
 * a role on every delta (LangChain builds ChatMessageChunks from role-less ones and the answer is
 * lost), tool calls in OpenAI's shape (tool-call-stream.ts), `<think>` moved out of the content,
 * `finish_reason: ""` read as none, and at `[DONE]` a finish_reason for a message that never
 * said why it finished (SGLang, old Ollama, gateways).
 */

interface ChoiceState {
  calls: ToolCallAssembler;
  think: ThinkSplitter;
  finish?: string;
  seen: boolean;
}

export class ChunkNormaliser {
  private readonly choices = new Map<number, ChoiceState>();
  private template: Json = { object: "chat.completion.chunk" };

  constructor(private readonly extras: ResponseExtras) {}

  private state(index: number): ChoiceState {
    let st = this.choices.get(index);
    if (!st)
      this.choices.set(index, (st = { calls: new ToolCallAssembler(), think: new ThinkSplitter(), seen: false }));
    return st;
  }

  /** One parsed `data:` payload in, the payloads to pass on out. */
  chunk(data: Json): Json[] {
    if (!Array.isArray(data.choices)) {
      // vLLM and Mistral stream errors as `{"object":"error","message":…}`: the SDK reads `error`.
      if (data.error === undefined && data.object === "error")
        return [{ error: { message: data.message, type: data.type, code: data.code } }];
      return [data];
    }
    this.template = { id: data.id, object: "chat.completion.chunk", created: data.created, model: data.model };
    for (const choice of data.choices as Json[]) {
      choice.index = typeof choice.index === "number" ? choice.index : 0;
      const st = this.state(choice.index);
      st.seen = true;
      const delta: Json = choice.delta ?? choice.message ?? {};
      delete choice.message;
      choice.delta = delta;
      if (!delta.role) delta.role = "assistant";
      if (typeof delta.content === "string") {
        const split = st.think.push(delta.content);
        delta.content = split.text;
        this.extras.thinking += split.thinking;
      }
      for (const key of ["reasoning_content", "reasoning"] as const)
        if (typeof delta[key] === "string") this.extras.thinking += delta[key];
      if (Array.isArray(delta.tool_calls)) {
        const calls = st.calls.normalise(delta.tool_calls as RawToolCallDelta[]);
        if (calls.length > 0) delta.tool_calls = calls;
        else delete delta.tool_calls;
        Object.assign(this.extras.extraContent, st.calls.extras());
      } else if (delta.tool_calls !== undefined) {
        delete delta.tool_calls;
      }
      if (choice.finish_reason === "") choice.finish_reason = null;
      if (choice.finish_reason) {
        const held = st.think.flush();
        if (held.text) delta.content = `${delta.content ?? ""}${held.text}`;
        this.extras.thinking += held.thinking;
        st.finish = choice.finish_reason;
        this.extras.finishReason = choice.finish_reason;
      }
    }
    return [data];
  }

  /** Before `[DONE]`: text held back, and a finish for a complete message that lacked one. */
  done(): Json[] {
    const out: Json[] = [];
    for (const [index, st] of this.choices) {
      if (st.finish || !st.seen) continue;
      const held = st.think.flush();
      this.extras.thinking += held.thinking;
      const finish = st.calls.count > 0 ? "tool_calls" : "stop";
      st.finish = finish;
      this.extras.finishReason = finish;
      out.push({
        ...this.template,
        choices: [
          {
            index,
            delta: { role: "assistant", ...(held.text ? { content: held.text } : {}) },
            logprobs: null,
            finish_reason: finish,
          },
        ],
      });
    }
    return out;
  }
}

/** A non-streamed completion as the chunks of a stream, so one path normalises both. */
export function completionToChunks(body: Json): Json[] {
  const base = { id: body.id, object: "chat.completion.chunk", created: body.created, model: body.model };
  const out: Json[] = [];
  for (const choice of (body.choices ?? []) as Json[]) {
    const index = typeof choice.index === "number" ? choice.index : 0;
    const message: Json = { ...(choice.message ?? {}) };
    out.push({ ...base, choices: [{ index, delta: message, logprobs: null, finish_reason: null }] });
    out.push({ ...base, choices: [{ index, delta: {}, logprobs: null, finish_reason: choice.finish_reason ?? null }] });
  }
  if (body.usage) out.push({ ...base, choices: [], usage: body.usage });
  return out;
}
