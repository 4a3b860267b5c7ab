import type { RunnableConfig } from "@langchain/core/runnables";
import type {
  ChannelVersions,
  Checkpoint,
  CheckpointListOptions,
  CheckpointMetadata,
  CheckpointTuple,
} from "@langchain/langgraph-checkpoint";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import type pg from "pg";
import { inWrittenOrder, KEPT_CHECKPOINTS, writtenKey, type WrittenRow } from "./compact-saver.js";
import { CompactMessages, compactSerde, type ReadMessages } from "./compact-messages.js";
import { faultPoint } from "./fault-point.js";
import { missingTableError, STATE_FORMAT_VERSION, stateFormatError } from "./state-errors.js";

/**
 * LangGraph's PostgresSaver storing messages as the SQLite saver does (compact-messages.ts):
 * each message once per thread, compact and deflated, in mini_cursor_message_store under a
 * reference unique across processes, and a checkpoint's messages blob holds only ranges of
 * those references; pending writes use the compact form too. A thread keeps its newest
 * KEPT_CHECKPOINTS checkpoints, with their writes and the channel blobs they still refer to.
 * Tables are created on first use, under an advisory lock so two processes starting together
 * do not race on them. As in the SQLite saver, a thread's checkpoints are ordered as they were
 * written (WRITTEN_COLUMN, a sequence), never by their ids, which LangGraph makes from the clock.
 */

/** Our table of messages, beside LangGraph's checkpoints, checkpoint_blobs and checkpoint_writes. */
export const MESSAGES_TABLE = "public.mini_cursor_message_store";
/** The state format of the database (one row), written when mini-cursor creates its tables. */
export const FORMAT_TABLE = "public.mini_cursor_format";
/**
 * LangGraph's tables, created before any of ours (so ours never exist without them); with ours
 * (MESSAGES_TABLE and `ourTables`) a database of this format has them all.
 */
const LANGGRAPH_TABLES = ["public.checkpoints", "public.checkpoint_blobs", "public.checkpoint_writes"];
/** The column of LangGraph's checkpoints table that orders a thread's checkpoints as they were written. */
const WRITTEN_COLUMN = "mini_cursor_written";
/** pg_advisory_lock key held while the schema is created (any constant unique to us). */
export const SETUP_LOCK_KEY = 0x6d63_7372;

async function tableExists(db: pg.Pool | pg.PoolClient, table: string): Promise<boolean> {
  return (await db.query<{ t: string | null }>("SELECT to_regclass($1)::text AS t", [table])).rows[0]?.t != null;
}

/**
 * For a database without mini-cursor's format stamp: refuses one where a table of ours exists but
 * one of LangGraph's is gone. Run before the saver's setup (which creates LangGraph's first), so a
 * first setup by another process at the same time never looks like a lost table.
 */
export async function checkLostTables(pool: pg.Pool, url: string, ourTables: readonly string[]): Promise<void> {
  const present = (table: string) => tableExists(pool, table);
  if (await present(FORMAT_TABLE)) return; // checkFormat checks a stamped database itself
  if (!(await Promise.all([MESSAGES_TABLE, ...ourTables].map(present))).some(Boolean)) return;
  for (const table of LANGGRAPH_TABLES) if (!(await present(table))) throw missingTableError({ url }, table);
}

export class CompactPostgresSaver extends PostgresSaver {
  private ready: Promise<void> | undefined;
  private readonly messages = new CompactMessages();

  /** `moreTables` creates other tables under the same lock (the thread index, the loop's threads). */
  constructor(
    private readonly db: pg.Pool,
    private readonly moreTables: (client: pg.PoolClient) => Promise<void> = async () => undefined,
    /** The database as the user named it (for errors; its password is masked there). */
    private readonly url = "",
    /** The tables `moreTables` creates, checked with ours at start. */
    private readonly ourTables: readonly string[] = [],
  ) {
    super(db);
    // Pending writes (each step's new messages until the next checkpoint) in the compact form too.
    this.serde = compactSerde(this.serde);
  }

  /** Stored messages of a thread by reference, in one query (compact-messages.ts `ReadMessages`). */
  private readonly readMessages: ReadMessages = async (threadId, refs) => {
    const res = await this.db.query<{ ref: string; value: Buffer }>(
      `SELECT ref, value FROM ${MESSAGES_TABLE} WHERE thread_id = $1 AND ref = ANY($2::text[])`,
      [threadId, refs],
    );
    return res.rows.map((r) => ({ ref: r.ref, value: new Uint8Array(r.value) }));
  };

  /** Creates LangGraph's tables and ours once per process (and once per database, under a lock). */
  override setup(): Promise<void> {
    this.ready ??= (async () => {
      const client = await this.db.connect();
      try {
        await client.query("SELECT pg_advisory_lock($1)", [SETUP_LOCK_KEY]);
        const formatted = await this.checkFormat(client);
        await super.setup();
        // Rows already there are numbered in the order they are stored; every later one as it is written.
        await client.query(`ALTER TABLE public.checkpoints ADD COLUMN IF NOT EXISTS ${WRITTEN_COLUMN} BIGSERIAL`);
        await client.query(`CREATE TABLE IF NOT EXISTS ${MESSAGES_TABLE} (
  thread_id TEXT NOT NULL,
  ref TEXT NOT NULL,
  value BYTEA NOT NULL,
  PRIMARY KEY (thread_id, ref)
)`);
        await this.moreTables(client);
        if (!formatted) {
          await client.query(`CREATE TABLE IF NOT EXISTS ${FORMAT_TABLE} (version INTEGER NOT NULL)`);
          await client.query(`INSERT INTO ${FORMAT_TABLE} (version) VALUES ($1)`, [STATE_FORMAT_VERSION]);
        }
      } finally {
        await client.query("SELECT pg_advisory_unlock($1)", [SETUP_LOCK_KEY]).catch(() => undefined);
        client.release();
      }
    })().catch((err) => {
      this.ready = undefined;
      throw err;
    });
    return this.ready;
  }

  /**
   * A database mini-cursor set up before says its format: a newer one, or one that lost a
   * table, is refused at start rather than read as empty. False for a database without one.
   */
  private async checkFormat(client: pg.PoolClient): Promise<boolean> {
    if (!(await tableExists(client, FORMAT_TABLE))) return false;
    const found = await client.query<{ v: number | null }>(`SELECT max(version) AS v FROM ${FORMAT_TABLE}`);
    const version = Number(found.rows[0]?.v ?? 0);
    if (version > STATE_FORMAT_VERSION) throw stateFormatError({ url: this.url }, version);
    for (const table of [...LANGGRAPH_TABLES, MESSAGES_TABLE, ...this.ourTables])
      if (!(await tableExists(client, table))) throw missingTableError({ url: this.url }, table);
    return true;
  }

  /** Without a checkpoint id: the thread's last checkpoint written, asked for by its id. */
  override async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    await this.setup();
    const { thread_id, checkpoint_ns = "", checkpoint_id } = config.configurable ?? {};
    if (!checkpoint_id && thread_id !== undefined) {
      const latest = await this.db.query<{ checkpoint_id: string }>(
        `SELECT checkpoint_id FROM public.checkpoints WHERE thread_id = $1 AND checkpoint_ns = $2 ORDER BY ${WRITTEN_COLUMN} DESC LIMIT 1`,
        [thread_id, checkpoint_ns],
      );
      const id = latest.rows[0]?.checkpoint_id;
      if (!id) return undefined;
      config = { configurable: { thread_id, checkpoint_ns, checkpoint_id: id } };
    }
    return this.messages.hydrate(await super.getTuple(config), this.readMessages);
  }

  /** Newest written first; `before` and `limit` by that order too. */
  override async *list(config: RunnableConfig, options?: CheckpointListOptions): AsyncGenerator<CheckpointTuple> {
    await this.setup();
    const rows = await this.db.query<WrittenRow>(
      `SELECT thread_id, checkpoint_ns, checkpoint_id, ${WRITTEN_COLUMN}::float8 AS written FROM public.checkpoints WHERE $1::text IS NULL OR thread_id = $1`,
      [config.configurable?.thread_id ?? null],
    );
    const written = new Map(rows.rows.map((row) => [writtenKey(row), row.written]));
    for await (const tuple of inWrittenOrder(super.list(config, { filter: options?.filter }), written, options))
      yield (await this.messages.hydrate(tuple, this.readMessages))!;
  }

  override async put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions,
  ): Promise<RunnableConfig> {
    await this.setup();
    const threadId = String(config.configurable?.thread_id ?? "");
    const { checkpoint: stored, fresh } = this.messages.store(threadId, checkpoint);
    // The messages first: a checkpoint never names a message another process cannot read yet.
    if (fresh.length > 0)
      await this.db.query(
        `INSERT INTO ${MESSAGES_TABLE} (thread_id, ref, value) SELECT $1, * FROM unnest($2::text[], $3::bytea[]) ON CONFLICT DO NOTHING`,
        [threadId, fresh.map((r) => r.ref), fresh.map((r) => Buffer.from(r.value))],
      );
    faultPoint("checkpoint");
    const saved = await super.put(config, stored, metadata, newVersions);
    await this.prune(threadId, String(config.configurable?.checkpoint_ns ?? ""));
    return saved;
  }

  override async putWrites(...args: Parameters<PostgresSaver["putWrites"]>): Promise<void> {
    await this.setup();
    return super.putWrites(...args);
  }

  /** Deletes all but the thread's newest written checkpoints, the writes of those deleted and unreferenced blobs. */
  private async prune(threadId: string, ns: string): Promise<void> {
    const cutoff = await this.db.query<{ written: string }>(
      `SELECT ${WRITTEN_COLUMN} AS written FROM public.checkpoints WHERE thread_id = $1 AND checkpoint_ns = $2 ORDER BY ${WRITTEN_COLUMN} DESC LIMIT 1 OFFSET $3`,
      [threadId, ns, KEPT_CHECKPOINTS - 1],
    );
    const written = cutoff.rows[0]?.written;
    if (written === undefined) return;
    await this.db.query(
      `DELETE FROM public.checkpoints WHERE thread_id = $1 AND checkpoint_ns = $2 AND ${WRITTEN_COLUMN} < $3`,
      [threadId, ns, written],
    );
    await this.db.query(
      `DELETE FROM public.checkpoint_writes w WHERE w.thread_id = $1 AND w.checkpoint_ns = $2 AND NOT EXISTS (
  SELECT 1 FROM public.checkpoints c WHERE c.thread_id = w.thread_id AND c.checkpoint_ns = w.checkpoint_ns AND c.checkpoint_id = w.checkpoint_id)`,
      [threadId, ns],
    );
    await this.db.query(
      `DELETE FROM public.checkpoint_blobs b WHERE b.thread_id = $1 AND b.checkpoint_ns = $2 AND NOT EXISTS (
  SELECT 1 FROM public.checkpoints c WHERE c.thread_id = b.thread_id AND c.checkpoint_ns = b.checkpoint_ns AND c.checkpoint->'channel_versions'->>b.channel = b.version)`,
      [threadId, ns],
    );
  }

  override async deleteThread(threadId: string): Promise<void> {
    await this.setup();
    await super.deleteThread(threadId);
    await this.db.query(`DELETE FROM ${MESSAGES_TABLE} WHERE thread_id = $1`, [threadId]);
    this.messages.forget(threadId);
  }
}
