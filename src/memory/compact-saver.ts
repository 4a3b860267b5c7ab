import type { RunnableConfig } from "@langchain/core/runnables";
import {
  copyCheckpoint,
  WRITES_IDX_MAP,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointTuple,
  type PendingWrite,
} from "@langchain/langgraph-checkpoint";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { CompactMessages, compactSerde, MESSAGES_CHANNEL, type StoredMessageRow } from "./compact-messages.js";
import { faultPoint } from "./fault-point.js";

/**
 * SQLite checkpoints that grow with the conversation, not with its square.
 *
 * LangGraph saves the whole state after every node, so a thread of n messages is written about
 * 3n times: a 200-step session took ~90 MB. Here each message is stored once, in a compact form
 * (compact-messages.ts), and a checkpoint keeps only ranges of message references; checkpoints
 * older than the newest few are pruned, which is all resuming and answering an interrupt need.
 * Each checkpoint is one transaction with statements prepared once, and WAL commits are not
 * flushed to disk one by one (synchronous=NORMAL: a power cut may lose the last step, never
 * the file).
 *
 * A thread's checkpoints are ordered as they were written (the table's rowid), never by their
 * ids: LangGraph makes an id from the clock, so a checkpoint saved while the clock was set back
 * (a VM restored, an NTP step) would sort before older ones, be taken for an earlier state, and
 * be pruned. The latest checkpoint is the last one written.
 */

/** Checkpoints kept per thread after a prune: the latest (resume, interrupts) and a couple before it. */
export const KEPT_CHECKPOINTS = 3;
/** Checkpoints written between two prunes (a prune costs a query; between them a few more are kept). */
export const PRUNE_EVERY = 8;
/** The earlier form of a checkpoint's messages: one content hash per message, in the `messages` table. */
interface MessageHashes {
  __messageRefs: string[];
}

const isHashes = (value: unknown): value is MessageHashes =>
  Array.isArray((value as MessageHashes | null)?.__messageRefs);

/** A checkpoint and its place in the order checkpoints were written. */
export interface WrittenRow {
  thread_id: string;
  checkpoint_ns: string;
  checkpoint_id: string;
  written: number;
}

export const writtenKey = (row: Omit<WrittenRow, "written">) =>
  [row.thread_id, row.checkpoint_ns, row.checkpoint_id].join("\0");

const configKey = (config: RunnableConfig) =>
  writtenKey({
    thread_id: String(config.configurable?.thread_id),
    checkpoint_ns: String(config.configurable?.checkpoint_ns ?? ""),
    checkpoint_id: String(config.configurable?.checkpoint_id),
  });

/**
 * A saver's checkpoints (listed in any order) newest written first, with `before` (those written
 * before that checkpoint) and `limit` applied in that order: LangGraph's savers order by id, and
 * ids come from the clock.
 */
export async function* inWrittenOrder(
  tuples: AsyncGenerator<CheckpointTuple>,
  written: ReadonlyMap<string, number>,
  options?: CheckpointListOptions,
): AsyncGenerator<CheckpointTuple> {
  const place = (config: RunnableConfig) => written.get(configKey(config)) ?? 0;
  const all: CheckpointTuple[] = [];
  for await (const tuple of tuples) all.push(tuple);
  all.sort((a, b) => place(b.config) - place(a.config));
  const cut = options?.before ? place(options.before) : Number.POSITIVE_INFINITY;
  yield* all.filter((t) => place(t.config) < cut).slice(0, options?.limit ?? all.length);
}

/** Every statement the saver runs, prepared once. */
function prepareStatements(db: SqliteSaver["db"]) {
  const writeSql = (verb: string) =>
    `INSERT ${verb} INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, value) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`;
  return {
    insertMessage: db.prepare("INSERT OR IGNORE INTO message_store (thread_id, ref, value) VALUES (?, ?, ?)"),
    selectMessage: db.prepare("SELECT value FROM message_store WHERE thread_id = ? AND ref = ?"),
    insertCheckpoint: db.prepare(
      "INSERT OR REPLACE INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata) VALUES (?, ?, ?, ?, ?, ?, ?)",
    ),
    latest: db.prepare(
      "SELECT checkpoint_id FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? ORDER BY rowid DESC LIMIT 1",
    ),
    order: db.prepare("SELECT thread_id, checkpoint_ns, checkpoint_id, rowid AS written FROM checkpoints"),
    cutoff: db.prepare(
      "SELECT rowid AS written FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? ORDER BY rowid DESC LIMIT 1 OFFSET ?",
    ),
    pruneCheckpoints: db.prepare("DELETE FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? AND rowid < ?"),
    pruneWrites: db.prepare(
      "DELETE FROM writes WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id NOT IN (SELECT checkpoint_id FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ?)",
    ),
    writeReplace: db.prepare(writeSql("OR REPLACE")),
    writeIgnore: db.prepare(writeSql("OR IGNORE")),
  };
}

export class CompactSqliteSaver extends SqliteSaver {
  private readonly messages = new CompactMessages();
  private statements?: ReturnType<typeof prepareStatements>;
  private putsSincePrune = 0;

  constructor(db: SqliteSaver["db"]) {
    super(db);
    // Pending writes (each step's new messages until the next checkpoint) in the compact form too.
    this.serde = compactSerde(this.serde);
  }

  static open(file: string): CompactSqliteSaver {
    // Borrow the parent's connection factory: better-sqlite3 is its dependency, not ours.
    return new CompactSqliteSaver(SqliteSaver.fromConnString(file).db);
  }

  protected override setup(): void {
    super.setup();
    if (this.statements) return;
    this.db.pragma("synchronous=NORMAL");
    this.db.exec(`CREATE TABLE IF NOT EXISTS message_store (
  thread_id TEXT NOT NULL,
  ref TEXT NOT NULL,
  value BLOB NOT NULL,
  PRIMARY KEY (thread_id, ref)
) WITHOUT ROWID;`);
    this.statements = prepareStatements(this.db);
  }

  /** Creates the tables now (the format check at open needs them). */
  prepare(): void {
    this.setup();
  }

  private get sql() {
    this.setup();
    return this.statements!;
  }

  /** Stored messages of a thread by reference (compact-messages.ts `ReadMessages`). */
  private readonly readMessages = (threadId: string, refs: readonly string[]): StoredMessageRow[] => {
    const rows: StoredMessageRow[] = [];
    for (const ref of refs) {
      const row = this.sql.selectMessage.get(threadId, ref) as { value: Uint8Array } | undefined;
      if (row) rows.push({ ref, value: row.value });
    }
    return rows;
  };

  /** A thread saved by an earlier version: its messages are in the `messages` table, by hash. */
  private async loadHashedMessages(threadId: string, stored: MessageHashes): Promise<unknown[]> {
    const select = this.db.prepare("SELECT type, value FROM messages WHERE thread_id = ? AND hash = ?");
    const out: unknown[] = [];
    for (const hash of stored.__messageRefs) {
      const row = select.get(threadId, hash) as { type: string; value: Uint8Array } | undefined;
      if (!row)
        throw new Error(`A checkpoint refers to a message that is not stored (${hash}): the thread file is damaged.`);
      out.push(await this.serde.loadsTyped(row.type, row.value));
    }
    return out;
  }

  private async hydrate(tuple: CheckpointTuple | undefined): Promise<CheckpointTuple | undefined> {
    const values = tuple?.checkpoint.channel_values;
    const stored = values?.[MESSAGES_CHANNEL];
    if (tuple && values && isHashes(stored)) {
      values[MESSAGES_CHANNEL] = await this.loadHashedMessages(
        String(tuple.config.configurable?.thread_id ?? ""),
        stored,
      );
      return tuple;
    }
    return this.messages.hydrate(tuple, this.readMessages);
  }

  /** Without a checkpoint id: the thread's last checkpoint written, asked for by its id. */
  override async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    const { thread_id, checkpoint_ns = "", checkpoint_id } = config.configurable ?? {};
    if (checkpoint_id || thread_id === undefined) return this.hydrate(await super.getTuple(config));
    const latest = this.sql.latest.get(thread_id, checkpoint_ns) as { checkpoint_id: string } | undefined;
    if (!latest) return undefined;
    return this.hydrate(
      await super.getTuple({ configurable: { thread_id, checkpoint_ns, checkpoint_id: latest.checkpoint_id } }),
    );
  }

  /** Newest written first; `before` and `limit` by that order too. */
  override async *list(config: RunnableConfig, options?: CheckpointListOptions): AsyncGenerator<CheckpointTuple> {
    const written = new Map<string, number>();
    for (const row of this.sql.order.all() as WrittenRow[]) written.set(writtenKey(row), row.written);
    for await (const tuple of inWrittenOrder(super.list(config, { filter: options?.filter }), written, options))
      yield (await this.hydrate(tuple))!;
  }

  override async put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
  ): Promise<RunnableConfig> {
    const sql = this.sql;
    const threadId = config.configurable?.thread_id as string | undefined;
    if (!threadId) throw new Error('Missing "thread_id" field in passed "config.configurable".');
    const ns = String(config.configurable?.checkpoint_ns ?? "");
    const { checkpoint: stored, fresh } = this.messages.store(threadId, copyCheckpoint(checkpoint));
    const [[type, body], [metaType, meta]] = await Promise.all([
      this.serde.dumpsTyped(stored),
      this.serde.dumpsTyped(metadata),
    ]);
    if (type !== metaType) throw new Error("Failed to serialize the checkpoint and its metadata to the same type.");
    const prune = ++this.putsSincePrune >= PRUNE_EVERY;
    if (prune) this.putsSincePrune = 0;
    this.db.transaction(() => {
      for (const { ref, value } of fresh) sql.insertMessage.run(threadId, ref, value);
      faultPoint("checkpoint");
      sql.insertCheckpoint.run(threadId, ns, checkpoint.id, config.configurable?.checkpoint_id, type, body, meta);
      if (prune) this.prune(threadId, ns);
    })();
    return { configurable: { thread_id: threadId, checkpoint_ns: ns, checkpoint_id: checkpoint.id } };
  }

  override async putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string): Promise<void> {
    const sql = this.sql;
    const { thread_id, checkpoint_ns, checkpoint_id } = config.configurable ?? {};
    if (!thread_id) throw new Error("Missing thread_id field in config.configurable.");
    if (!checkpoint_id) throw new Error("Missing checkpoint_id field in config.configurable.");
    const statement = writes.every(([channel]) => channel in WRITES_IDX_MAP) ? sql.writeReplace : sql.writeIgnore;
    const rows = await Promise.all(
      writes.map(async ([channel, value], idx) => {
        const [type, body] = await this.serde.dumpsTyped(value);
        return [
          thread_id,
          checkpoint_ns,
          checkpoint_id,
          taskId,
          WRITES_IDX_MAP[channel] ?? idx,
          channel,
          type,
          body,
        ] as const;
      }),
    );
    this.db.transaction(() => {
      for (const row of rows) statement.run(...row);
    })();
  }

  /** Deletes all but the thread's newest written checkpoints, and the writes of those deleted. */
  private prune(threadId: string, ns: string): void {
    const sql = this.sql;
    const cutoff = sql.cutoff.get(threadId, ns, KEPT_CHECKPOINTS - 1) as { written: number } | undefined;
    if (!cutoff) return;
    sql.pruneCheckpoints.run(threadId, ns, cutoff.written);
    sql.pruneWrites.run(threadId, ns, threadId, ns);
  }

  override async deleteThread(threadId: string): Promise<void> {
    await super.deleteThread(threadId);
    this.setup();
    this.db.prepare("DELETE FROM message_store WHERE thread_id = ?").run(threadId);
    const legacy = this.db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'messages'").get();
    if (legacy) this.db.prepare("DELETE FROM messages WHERE thread_id = ?").run(threadId);
    this.messages.forget(threadId);
  }
}
