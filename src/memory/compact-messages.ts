import { randomBytes } from "node:crypto";
import { deflateRawSync, inflateRawSync } from "node:zlib";
import { BaseMessage, mapStoredMessageToChatMessage, type StoredMessage } from "@langchain/core/messages";
import type { SerializerProtocol } from "@langchain/langgraph-checkpoint";

/**
 * The compact stored form of a conversation, independent of where it is stored (the SQLite
 * checkpointer uses it; a Postgres one can too).
 *
 * - A message is stored once, as `{type, data}` (LangChain's own `toDict()`, which
 *   `mapStoredMessageToChatMessage` reads back) without the empty fields every message carries
 *   (`additional_kwargs: {}`, `invalid_tool_calls: []`, ...): about half the size of the default
 *   serialisation, with the same message after loading.
 * - Stored alone, a message is also deflated against a fixed dictionary of what every message
 *   repeats (field names, usage records, tool names), which about halves it again.
 * - A checkpoint names its messages by reference: `<session>.<n>`, where the session part is
 *   random per saver instance and n counts up, so consecutive messages compress to ranges
 *   (`k3f9a2b1.1-200`) and two processes writing one file never pick the same reference.
 */

/** The tag of the compact form in a serializer's `[type, bytes]` pair. */
export const COMPACT_MESSAGES_TYPE = "mini-cursor/messages";

function isEmpty(value: unknown): boolean {
  if (value === undefined || value === null) return true;
  if (Array.isArray(value)) return value.length === 0;
  return typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype && Object.keys(value).length === 0;
}

/** The compact stored form of one message: its `toDict()` without empty fields. */
export function packMessage(message: BaseMessage): StoredMessage {
  const { type, data } = message.toDict();
  const kept: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(data)) if (key === "content" || !isEmpty(value)) kept[key] = value;
  return { type, data: kept as unknown as StoredMessage["data"] };
}

export function unpackMessage(stored: StoredMessage): BaseMessage {
  return mapStoredMessageToChatMessage(stored);
}

/**
 * Text every stored message shares, for deflate's preset dictionary: the most frequent last.
 * Never edit it: messages stored with it could no longer be read. A new dictionary needs a new
 * format byte (FORMAT_DEFLATED_V1) and this one kept for reading.
 */
const DICTIONARY_V1 = Buffer.from(
  [
    '"execute_command","args":{"command":"', '"write_file","args":{"filePath":"', '"edit_file","args":{"filePath":"', '"apply_patch","args":{"patch":"',
    '"list_directory","args":{"directoryPath":"', '"search_files","args":{"pattern":"', '"find_files","args":{"pattern":"', "[Lines 1-", " of ", ", end of file.]",
    '{"type":"system","data":{"content":"', '{"type":"human","data":{"content":"', '","additional_kwargs":{}', '"invalid_tool_calls":[{',
    '"input_token_details":{"cache_read":0},"output_token_details":{"reasoning":0}},',
    '"response_metadata":{"prompt":0,"completion":0,"model_provider":"openai","usage":{"prompt_tokens":', ',"completion_tokens":', ',"total_tokens":',
    '},"finish_reason":"stop","system_fingerprint":"fp_', '},"finish_reason":"tool_calls","system_fingerprint":"fp_', '","model_name":"gpt-',
    '"usage_metadata":{"input_tokens":', ',"output_tokens":', ',"total_tokens":', ',"input_token_details":{},"output_token_details":{}},',
    '{"type":"ai","data":{"id":"chatcmpl-', '","content":"', '"tool_calls":[{"id":"call_', '","name":"read_file","args":{"filePath":"', '"},"type":"tool_call"}]}}',
    '{"type":"tool","data":{"content":"     1\t', '\n     2\t', '\n     3\t', '","tool_call_id":"call_', '","name":"read_file","status":"success","id":"',
  ].join(""),
);
/** First byte of a stored message: how the rest is encoded. */
const FORMAT_DEFLATED_V1 = 1;

/** One message as stored on its own: the compact form, deflated against DICTIONARY_V1. */
export function encodeMessage(message: BaseMessage): Uint8Array {
  const deflated = deflateRawSync(JSON.stringify(packMessage(message)), { dictionary: DICTIONARY_V1 });
  const out = Buffer.allocUnsafe(deflated.length + 1);
  out[0] = FORMAT_DEFLATED_V1;
  deflated.copy(out, 1);
  return out;
}

export function decodeMessage(stored: Uint8Array): BaseMessage {
  if (stored[0] !== FORMAT_DEFLATED_V1) throw new Error(`unknown stored message format ${stored[0]}`);
  const json = inflateRawSync(stored.subarray(1), { dictionary: DICTIONARY_V1 }).toString("utf8");
  return unpackMessage(JSON.parse(json) as StoredMessage);
}

const isMessageList = (value: unknown): value is BaseMessage[] =>
  Array.isArray(value) && value.length > 0 && value.every((m) => BaseMessage.isInstance(m));

/**
 * A serializer that writes messages (one, or a list) in the compact form and hands everything
 * else to `inner`: used for the checkpointer's pending writes, where each step's new messages
 * wait until the next checkpoint.
 */
export function compactSerde(inner: SerializerProtocol): SerializerProtocol {
  const encoder = new TextEncoder();
  const decoder = new TextDecoder();
  return {
    async dumpsTyped(value: unknown): Promise<[string, Uint8Array]> {
      if (BaseMessage.isInstance(value)) return [COMPACT_MESSAGES_TYPE, encoder.encode(JSON.stringify(packMessage(value)))];
      if (isMessageList(value)) return [COMPACT_MESSAGES_TYPE, encoder.encode(JSON.stringify(value.map(packMessage)))];
      return inner.dumpsTyped(value);
    },
    async loadsTyped(type: string, data: Uint8Array | string): Promise<unknown> {
      if (type !== COMPACT_MESSAGES_TYPE) return inner.loadsTyped(type, data);
      const parsed = JSON.parse(typeof data === "string" ? data : decoder.decode(data)) as StoredMessage | StoredMessage[];
      return Array.isArray(parsed) ? parsed.map(unpackMessage) : unpackMessage(parsed);
    },
  };
}

/** `a.1,a.2,a.3,b.7` → `a.1-3,b.7`: consecutive references of one session as a range. */
export function encodeRefs(refs: readonly string[]): string {
  const parts: string[] = [];
  let i = 0;
  while (i < refs.length) {
    const [session, n] = splitRef(refs[i]!);
    let end = n;
    while (i + 1 < refs.length) {
      const [nextSession, next] = splitRef(refs[i + 1]!);
      if (nextSession !== session || next !== end + 1) break;
      end = next;
      i++;
    }
    parts.push(end === n ? `${session}.${n}` : `${session}.${n}-${end}`);
    i++;
  }
  return parts.join(",");
}

export function decodeRefs(encoded: string): string[] {
  if (encoded === "") return [];
  const refs: string[] = [];
  for (const part of encoded.split(",")) {
    const dot = part.lastIndexOf(".");
    const session = part.slice(0, dot);
    const [from, to = from] = part.slice(dot + 1).split("-").map(Number) as [number, number?];
    for (let n = from; n <= to; n++) refs.push(`${session}.${n}`);
  }
  return refs;
}

function splitRef(ref: string): [string, number] {
  const dot = ref.lastIndexOf(".");
  const n = Number(ref.slice(dot + 1));
  if (dot <= 0 || !Number.isSafeInteger(n)) throw new Error(`not a message reference: ${ref}`);
  return [ref.slice(0, dot), n];
}

/**
 * Which message objects of each thread are stored under which reference, so a message already
 * stored is never serialised again and one loaded from storage keeps its reference.
 */
export class MessageRefs {
  private readonly session = randomBytes(4).toString("hex");
  private next = 1;
  private readonly refs = new Map<string, WeakMap<object, string>>();
  private readonly loaded = new Map<string, Map<string, BaseMessage>>();

  private of(threadId: string): WeakMap<object, string> {
    let refs = this.refs.get(threadId);
    if (!refs) this.refs.set(threadId, (refs = new WeakMap()));
    return refs;
  }

  /** The message's reference in the thread, and whether it is new (still to be stored). */
  refFor(threadId: string, message: BaseMessage): { ref: string; fresh: boolean } {
    const refs = this.of(threadId);
    const known = refs.get(message);
    if (known) return { ref: known, fresh: false };
    const ref = `${this.session}.${this.next++}`;
    this.remember(threadId, ref, message);
    return { ref, fresh: true };
  }

  /** Records a message loaded from storage (or just stored) under its reference. */
  remember(threadId: string, ref: string, message: BaseMessage): void {
    this.of(threadId).set(message, ref);
    let loaded = this.loaded.get(threadId);
    if (!loaded) this.loaded.set(threadId, (loaded = new Map()));
    loaded.set(ref, message);
  }

  /** A message of the thread already in memory. */
  loadedMessage(threadId: string, ref: string): BaseMessage | undefined {
    return this.loaded.get(threadId)?.get(ref);
  }

  forget(threadId: string): void {
    this.refs.delete(threadId);
    this.loaded.delete(threadId);
  }
}
