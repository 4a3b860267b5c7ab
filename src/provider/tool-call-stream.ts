import { makeToolCallId, realId } from "./ids.js";

/**
 * Tool-call deltas as providers really stream them, turned into OpenAI's exact shape before
 * LangChain merges them by `index`. Seen in the wild: deltas without `index` whose arguments
 * come in several pieces (Cloudflare Workers AI, Kimi); a second call whose header comes on
 * index 0 and its arguments on index 1 (gateways in front of DeepSeek); continuation chunks
 * whose id is `""` or `"null"` (GLM behind gateways); the id repeated on every chunk (DashScope);
 * `arguments` as a JSON object (llama.cpp builds, MiniMax, TGI); whole calls in one chunk (Gemini,
 * Ollama). The rules: a chunk with a new id, or a new name, starts a call; a known id goes to its
 * own call whatever its index says; a chunk with neither continues the latest call.
 */

export interface RawToolCallDelta {
  index?: number;
  id?: string | null;
  type?: string;
  function?: { name?: string | null; arguments?: unknown };
  extra_content?: unknown;
}

export interface ToolCallDelta {
  index: number;
  id?: string;
  type?: "function";
  function: { name?: string; arguments: string };
  extra_content?: unknown;
}

interface Call {
  id: string;
  name?: string;
  idSent: boolean;
  nameSent: boolean;
  hasArgs: boolean;
  extra?: unknown;
}

function argumentsText(args: unknown): string {
  if (args === undefined || args === null) return "";
  return typeof args === "string" ? args : JSON.stringify(args);
}

export class ToolCallAssembler {
  private readonly calls: Call[] = [];
  private readonly byId = new Map<string, number>();

  get count(): number {
    return this.calls.length;
  }

  /** Each call's `extra_content` (Gemini's thought signature), by id. */
  extras(): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const c of this.calls) if (c.extra !== undefined) out[c.id] = c.extra;
    return out;
  }

  private start(id: string | undefined, name: string | undefined): number {
    const call: Call = { id: id ?? makeToolCallId(), name, idSent: false, nameSent: false, hasArgs: false };
    this.calls.push(call);
    this.byId.set(call.id, this.calls.length - 1);
    return this.calls.length - 1;
  }

  private target(id: string | undefined, name: string | undefined): number {
    if (id !== undefined && this.byId.has(id)) return this.byId.get(id)!;
    const last = this.calls.at(-1);
    if (id !== undefined) return this.start(id, name);
    if (!last) return this.start(undefined, name);
    if (name && last.name && !(last.name === name && !last.hasArgs)) return this.start(undefined, name);
    return this.calls.length - 1;
  }

  normalise(deltas: RawToolCallDelta[]): ToolCallDelta[] {
    const out: ToolCallDelta[] = [];
    for (const d of deltas) {
      if (!d || typeof d !== "object") continue;
      const id = realId(d.id);
      const name =
        typeof d.function?.name === "string" && d.function.name.trim() !== "" ? d.function.name.trim() : undefined;
      const index = this.target(id, name);
      const call = this.calls[index]!;
      if (name && !call.name) call.name = name;
      const args = argumentsText(d.function?.arguments);
      if (args !== "") call.hasArgs = true;
      if (d.extra_content !== undefined) call.extra = d.extra_content;
      const delta: ToolCallDelta = { index, function: { arguments: args } };
      if (!call.idSent) {
        delta.id = call.id;
        delta.type = "function";
        call.idSent = true;
      }
      if (!call.nameSent && call.name) {
        delta.function.name = call.name;
        call.nameSent = true;
      }
      if (d.extra_content !== undefined) delta.extra_content = d.extra_content;
      out.push(delta);
    }
    return out;
  }
}
