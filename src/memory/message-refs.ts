import { createHash } from "node:crypto";
import type { Checkpoint, CheckpointTuple, SerializerProtocol } from "@langchain/langgraph-checkpoint";

/**
 * The storage-agnostic half of a compact checkpointer: a checkpoint's message list is replaced by
 * the hashes of its messages, and each message is stored once per thread under its hash (by the
 * saver's own table, SQLite or PostgreSQL). Loading puts the messages back. The SQLite saver
 * (compact-saver.ts) predates this module and keeps its own copy of the same scheme.
 */

/** The state channel holding the conversation. */
export const MESSAGES_CHANNEL = "messages";

export interface MessageRefs {
  __messageRefs: string[];
}

export function isMessageRefs(value: unknown): value is MessageRefs {
  return typeof value === "object" && value !== null && Array.isArray((value as MessageRefs).__messageRefs);
}

/** One stored message, as the saver's table keeps it. */
export interface StoredMessage {
  hash: string;
  type: string;
  value: Uint8Array;
}

/** Where messages live: write the new ones, read some back by hash. */
export interface MessageTable {
  insert(threadId: string, rows: StoredMessage[]): Promise<void>;
  select(threadId: string, hashes: string[]): Promise<StoredMessage[]>;
}

export class MessageRefCodec {
  /** Hash of each message object already stored, so unchanged messages are never re-serialised. */
  private readonly hashes = new WeakMap<object, string>();
  /** Messages already loaded, by hash, so loading a long thread does not parse a message twice. */
  private readonly loaded = new Map<string, unknown>();

  constructor(
    private readonly serde: SerializerProtocol,
    private readonly table: MessageTable,
  ) {}

  /** The checkpoint as stored: its messages written to the table, their hashes in their place. */
  async compact(threadId: string, checkpoint: Checkpoint): Promise<Checkpoint> {
    const messages = checkpoint.channel_values?.[MESSAGES_CHANNEL];
    if (!threadId || !Array.isArray(messages)) return checkpoint;
    const refs: string[] = [];
    const fresh: StoredMessage[] = [];
    for (const message of messages) {
      const isObject = typeof message === "object" && message !== null;
      const known = isObject ? this.hashes.get(message) : undefined;
      if (known) {
        refs.push(known);
        continue;
      }
      const [type, value] = await this.serde.dumpsTyped(message);
      const hash = createHash("sha256").update(type).update(value).digest("hex").slice(0, 32);
      fresh.push({ hash, type, value });
      if (isObject) this.hashes.set(message, hash);
      this.loaded.set(hash, message);
      refs.push(hash);
    }
    if (fresh.length > 0) await this.table.insert(threadId, fresh);
    const stored: MessageRefs = { __messageRefs: refs };
    return { ...checkpoint, channel_values: { ...checkpoint.channel_values, [MESSAGES_CHANNEL]: stored } };
  }

  /** The tuple with its message hashes replaced by the messages. */
  async hydrate(tuple: CheckpointTuple | undefined): Promise<CheckpointTuple | undefined> {
    const values = tuple?.checkpoint.channel_values;
    const refs = values?.[MESSAGES_CHANNEL];
    if (!tuple || !values || !isMessageRefs(refs)) return tuple;
    const threadId = String(tuple.config.configurable?.thread_id ?? "");
    const missing = [...new Set(refs.__messageRefs.filter((h) => !this.loaded.has(h)))];
    if (missing.length > 0) {
      for (const row of await this.table.select(threadId, missing)) {
        const message = await this.serde.loadsTyped(row.type, row.value);
        this.loaded.set(row.hash, message);
        if (typeof message === "object" && message !== null) this.hashes.set(message, row.hash);
      }
    }
    values[MESSAGES_CHANNEL] = refs.__messageRefs.map((hash) => {
      if (!this.loaded.has(hash))
        throw new Error(`Checkpoint refers to a message that is not stored (${hash}); the thread's data is damaged.`);
      return this.loaded.get(hash);
    });
    return tuple;
  }
}
