import { createHash } from "node:crypto";
import type { RunnableConfig } from "@langchain/core/runnables";
import type { Checkpoint, CheckpointListOptions, CheckpointMetadata, CheckpointTuple } from "@langchain/langgraph-checkpoint";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";

/**
 * SQLite checkpoints that grow with the conversation, not with its square.
 *
 * LangGraph saves the whole state after every node, so a thread of n messages is written about
 * 3n times: a 200-step session took ~90 MB. Here each message is stored once (content-addressed,
 * per thread) and a checkpoint keeps only the list of message hashes; older checkpoints beyond
 * the newest few are pruned, which is all resuming and answering an interrupt need.
 */

/** Checkpoints kept per thread: the latest (resume, interrupts) and a couple before it. */
export const KEPT_CHECKPOINTS = 3;
/** The state channel holding the conversation. */
const MESSAGES_CHANNEL = "messages";

interface MessageRefs {
  __messageRefs: string[];
}

function isRefs(value: unknown): value is MessageRefs {
  return typeof value === "object" && value !== null && Array.isArray((value as MessageRefs).__messageRefs);
}

export class CompactSqliteSaver extends SqliteSaver {
  /** Hash of each message object already stored, so unchanged messages are never re-serialised. */
  private readonly hashes = new WeakMap<object, string>();
  /** Messages already loaded, by hash, so loading a long thread does not parse a message twice. */
  private readonly loaded = new Map<string, unknown>();
  private compactReady = false;

  static open(file: string): CompactSqliteSaver {
    // Borrow the parent's connection factory: better-sqlite3 is its dependency, not ours.
    return new CompactSqliteSaver(SqliteSaver.fromConnString(file).db);
  }

  protected override setup(): void {
    super.setup();
    if (this.compactReady) return;
    this.db.exec(`CREATE TABLE IF NOT EXISTS messages (
  thread_id TEXT NOT NULL,
  hash TEXT NOT NULL,
  type TEXT,
  value BLOB,
  PRIMARY KEY (thread_id, hash)
);`);
    this.compactReady = true;
  }

  private async storeMessages(threadId: string, messages: unknown[]): Promise<string[]> {
    const insert = this.db.prepare("INSERT OR IGNORE INTO messages (thread_id, hash, type, value) VALUES (?, ?, ?, ?)");
    const refs: string[] = [];
    for (const message of messages) {
      const known = typeof message === "object" && message !== null ? this.hashes.get(message) : undefined;
      if (known) {
        refs.push(known);
        continue;
      }
      const [type, value] = await this.serde.dumpsTyped(message);
      const hash = createHash("sha256").update(type).update(value).digest("hex").slice(0, 32);
      insert.run(threadId, hash, type, value);
      if (typeof message === "object" && message !== null) this.hashes.set(message, hash);
      this.loaded.set(hash, message);
      refs.push(hash);
    }
    return refs;
  }

  private async loadMessages(threadId: string, refs: string[]): Promise<unknown[]> {
    const select = this.db.prepare("SELECT type, value FROM messages WHERE thread_id = ? AND hash = ?");
    const out: unknown[] = [];
    for (const hash of refs) {
      let message = this.loaded.get(hash);
      if (message === undefined) {
        const row = select.get(threadId, hash) as { type: string; value: Uint8Array } | undefined;
        if (!row) throw new Error(`Checkpoint refers to a message that is not stored (${hash}); the thread file is damaged.`);
        message = await this.serde.loadsTyped(row.type, row.value);
        this.loaded.set(hash, message);
        if (typeof message === "object" && message !== null) this.hashes.set(message, hash);
      }
      out.push(message);
    }
    return out;
  }

  private async hydrate(tuple: CheckpointTuple | undefined): Promise<CheckpointTuple | undefined> {
    const values = tuple?.checkpoint.channel_values;
    const refs = values?.[MESSAGES_CHANNEL];
    if (!tuple || !values || !isRefs(refs)) return tuple;
    const threadId = String(tuple.config.configurable?.thread_id ?? "");
    values[MESSAGES_CHANNEL] = await this.loadMessages(threadId, refs.__messageRefs);
    return tuple;
  }

  override async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    return this.hydrate(await super.getTuple(config));
  }

  override async *list(config: RunnableConfig, options?: CheckpointListOptions): AsyncGenerator<CheckpointTuple> {
    for await (const tuple of super.list(config, options)) yield (await this.hydrate(tuple))!;
  }

  override async put(config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata): Promise<RunnableConfig> {
    this.setup();
    const threadId = String(config.configurable?.thread_id ?? "");
    const messages = checkpoint.channel_values?.[MESSAGES_CHANNEL];
    let stored = checkpoint;
    if (threadId && Array.isArray(messages)) {
      const refs: MessageRefs = { __messageRefs: await this.storeMessages(threadId, messages) };
      stored = { ...checkpoint, channel_values: { ...checkpoint.channel_values, [MESSAGES_CHANNEL]: refs } };
    }
    const saved = await super.put(config, stored, metadata);
    this.prune(threadId, String(config.configurable?.checkpoint_ns ?? ""));
    return saved;
  }

  /** Deletes all but the newest checkpoints of a thread (ids sort by time) and their writes. */
  private prune(threadId: string, ns: string): void {
    const cutoff = this.db
      .prepare("SELECT checkpoint_id FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? ORDER BY checkpoint_id DESC LIMIT 1 OFFSET ?")
      .get(threadId, ns, KEPT_CHECKPOINTS - 1) as { checkpoint_id: string } | undefined;
    if (!cutoff) return;
    this.db.prepare("DELETE FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id < ?").run(threadId, ns, cutoff.checkpoint_id);
    this.db.prepare("DELETE FROM writes WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id < ?").run(threadId, ns, cutoff.checkpoint_id);
  }

  override async deleteThread(threadId: string): Promise<void> {
    await super.deleteThread(threadId);
    this.setup();
    this.db.prepare("DELETE FROM messages WHERE thread_id = ?").run(threadId);
  }
}
