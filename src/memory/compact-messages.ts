import { randomBytes } from "node:crypto";
import { BaseMessage, mapStoredMessageToChatMessage, type StoredMessage } from "@langchain/core/messages";
import type { Checkpoint, CheckpointTuple, SerializerProtocol } from "@langchain/langgraph-checkpoint";
import {
  DamagedMessageError,
  decodeRefs,
  deflateStoredMessage,
  encodeRefs,
  inflateStoredMessage,
} from "./stored-message-codec.js";

export { decodeRefs, encodeRefs } from "./stored-message-codec.js";

/**
 * The compact stored form of a conversation, independent of where it is stored: the SQLite
 * checkpointer (compact-saver.ts) and the PostgreSQL one (postgres-saver.ts) both keep their
 * messages this way, each in a table of its own (`thread_id`, `ref`, `value`).
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
  return (
    typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype && Object.keys(value).length === 0
  );
}

/** The compact stored form of one message: its `toDict()` without empty fields. */
export function packMessage(message: BaseMessage): StoredMessage {
  const { type, data } = message.toDict();
  const kept: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(data)) if (key === "content" || !isEmpty(value)) kept[key] = value;
  return { type, data: kept as unknown as StoredMessage["data"] };
}

/** One message as stored on its own: the compact form, deflated (stored-message-codec.ts). */
export function encodeMessage(message: BaseMessage): Uint8Array {
  return deflateStoredMessage(JSON.stringify(packMessage(message)));
}

export function decodeMessage(stored: Uint8Array): BaseMessage {
  const packed = inflateStoredMessage(stored) as unknown as StoredMessage;
  try {
    return mapStoredMessageToChatMessage(packed);
  } catch (err) {
    throw new DamagedMessageError(`LangChain cannot read it as a message: ${(err as Error).message.split("\n")[0]}`);
  }
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
      if (BaseMessage.isInstance(value))
        return [COMPACT_MESSAGES_TYPE, encoder.encode(JSON.stringify(packMessage(value)))];
      if (isMessageList(value)) return [COMPACT_MESSAGES_TYPE, encoder.encode(JSON.stringify(value.map(packMessage)))];
      return inner.dumpsTyped(value);
    },
    async loadsTyped(type: string, data: Uint8Array | string): Promise<unknown> {
      if (type !== COMPACT_MESSAGES_TYPE) return inner.loadsTyped(type, data);
      const parsed = JSON.parse(typeof data === "string" ? data : decoder.decode(data)) as
        | StoredMessage
        | StoredMessage[];
      return Array.isArray(parsed)
        ? parsed.map((m) => mapStoredMessageToChatMessage(m))
        : mapStoredMessageToChatMessage(parsed);
    },
  };
}

/**
 * Which message objects of each thread are stored under which reference, so a message already
 * stored is never serialised again and one loaded from storage keeps its reference.
 */
export class MessageRefs {
  private readonly session = randomBytes(4).toString("hex");
  private next = 1;
  private readonly refs = new Map<string, WeakMap<object, string>>();
  /**
   * Held weakly (issue 30): a message compaction dropped from the conversation is referenced by
   * no checkpoint in memory any more and must not stay alive here for the rest of the session.
   */
  private readonly loaded = new Map<string, Map<string, WeakRef<BaseMessage>>>();
  private readonly collected = new FinalizationRegistry<{ threadId: string; ref: string }>(({ threadId, ref }) => {
    const loaded = this.loaded.get(threadId);
    if (loaded && loaded.get(ref)?.deref() === undefined) loaded.delete(ref);
  });

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
    loaded.set(ref, new WeakRef(message));
    this.collected.register(message, { threadId, ref });
  }

  /** A message of the thread still in memory. */
  loadedMessage(threadId: string, ref: string): BaseMessage | undefined {
    return this.loaded.get(threadId)?.get(ref)?.deref();
  }

  forget(threadId: string): void {
    this.refs.delete(threadId);
    this.loaded.delete(threadId);
  }
}

/** The state channel holding the conversation. */
export const MESSAGES_CHANNEL = "messages";

/** A checkpoint's messages as stored in its place: ranges of references (`encodeRefs`). */
export interface StoredMessageIds {
  __messageIds: string;
}

export const isStoredMessageIds = (value: unknown): value is StoredMessageIds =>
  typeof (value as StoredMessageIds | null)?.__messageIds === "string";

/** One message as a saver's table keeps it: its reference in the thread and `encodeMessage`'s bytes. */
export interface StoredMessageRow {
  ref: string;
  value: Uint8Array;
}

/** Reads stored messages of a thread by reference from the saver's table; rows not found are left out. */
export type ReadMessages = (
  threadId: string,
  refs: readonly string[],
) => StoredMessageRow[] | Promise<StoredMessageRow[]>;

/**
 * The half of a compact checkpointer that does not depend on the database: a checkpoint's
 * message list becomes reference ranges plus the rows of the messages not stored yet, and a
 * loaded checkpoint gets its messages back. The saver writes the rows (before or with the
 * checkpoint, so a checkpoint never names a message that is not there) and reads them.
 */
/** Threads whose last stored message list is kept to compare the next one with (CompactMessages). */
export const LAST_LISTS_KEPT = 4;

export class CompactMessages {
  private readonly refs = new MessageRefs();
  /**
   * Each thread's last stored list: LangGraph saves after every node, and most nodes of a step add
   * no message, so a list is mostly the last one again, or it with a message or two added. The
   * messages they share (the same objects, in the same places) are not looked up or checked again.
   * Kept for the few threads written last only: a thread left behind (a REPL's /new) must not keep
   * its conversation alive here (issue 30).
   */
  private readonly last = new Map<string, { messages: readonly unknown[]; refs: string[]; ids: string }>();

  /** The checkpoint as stored, and the messages to store with it (each message once per thread). */
  store(threadId: string, checkpoint: Checkpoint): { checkpoint: Checkpoint; fresh: StoredMessageRow[] } {
    const messages = checkpoint.channel_values?.[MESSAGES_CHANNEL];
    if (!Array.isArray(messages)) return { checkpoint, fresh: [] };
    const last = this.last.get(threadId);
    let shared = 0;
    if (last)
      while (shared < messages.length && shared < last.messages.length && messages[shared] === last.messages[shared])
        shared++;
    // Anything but a list of messages (not expected in this state) is left to the serializer.
    for (let i = shared; i < messages.length; i++)
      if (!BaseMessage.isInstance(messages[i])) return { checkpoint, fresh: [] };
    const fresh: StoredMessageRow[] = [];
    const refs = last ? last.refs.slice(0, shared) : [];
    for (let i = shared; i < messages.length; i++) {
      const message = messages[i] as BaseMessage;
      const { ref, fresh: isNew } = this.refs.refFor(threadId, message);
      if (isNew) fresh.push({ ref, value: encodeMessage(message) });
      refs.push(ref);
    }
    const same = last !== undefined && shared === messages.length && shared === last.messages.length;
    const encoded = same ? last.ids : encodeRefs(refs);
    // A copy: the list may change in place later, and the next comparison is with what was stored.
    this.last.delete(threadId);
    this.last.set(threadId, { messages: [...messages], refs, ids: encoded });
    if (this.last.size > LAST_LISTS_KEPT) this.last.delete(this.last.keys().next().value!);
    const ids: StoredMessageIds = { __messageIds: encoded };
    return {
      checkpoint: { ...checkpoint, channel_values: { ...checkpoint.channel_values, [MESSAGES_CHANNEL]: ids } },
      fresh,
    };
  }

  /**
   * The tuple with its message references replaced by the messages: those already in memory
   * are reused, the others read with one `read` call (a thread another process wrote).
   */
  async hydrate(tuple: CheckpointTuple | undefined, read: ReadMessages): Promise<CheckpointTuple | undefined> {
    const values = tuple?.checkpoint.channel_values;
    const stored = values?.[MESSAGES_CHANNEL];
    if (!tuple || !values || !isStoredMessageIds(stored)) return tuple;
    const threadId = String(tuple.config.configurable?.thread_id ?? "");
    const refs = decodeRefs(stored.__messageIds);
    // Held here while the tuple is built: a message only weakly known could go between the read and the use.
    const found = new Map<string, BaseMessage>();
    for (const ref of refs) {
      const message = this.refs.loadedMessage(threadId, ref);
      if (message) found.set(ref, message);
    }
    const missing = refs.filter((ref) => !found.has(ref));
    if (missing.length > 0)
      for (const row of await read(threadId, missing)) {
        let message: BaseMessage;
        try {
          message = decodeMessage(row.value);
        } catch (err) {
          throw err instanceof DamagedMessageError ? new DamagedMessageError(err.why, { threadId, ref: row.ref }) : err;
        }
        this.refs.remember(threadId, row.ref, message);
        found.set(row.ref, message);
      }
    values[MESSAGES_CHANNEL] = refs.map((ref) => {
      const message = found.get(ref);
      if (!message)
        throw new DamagedMessageError("the thread's latest checkpoint names it, but it is not stored", {
          threadId,
          ref,
        });
      return message;
    });
    return tuple;
  }

  forget(threadId: string): void {
    this.refs.forget(threadId);
    this.last.delete(threadId);
  }
}
