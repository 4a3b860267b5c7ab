import type pg from "pg";
import { redactCredentials } from "../credential-shapes.js";
import { POSTGRES_CONNECT_TIMEOUT_MS, StateError } from "./state-errors.js";
import { thisHolder, type ThreadHolder, type ThreadLocker } from "./thread-lock.js";

/**
 * One writer per thread in PostgreSQL: a session advisory lock, on a connection of its own
 * (not the pool's, whose connections come and go), keyed by the thread id. The server drops
 * it when the connection ends, so a killed process never leaves a thread locked. The holder
 * names itself in its connection's application_name, which pg_stat_activity shows to others.
 */

/** What the lock's key is derived from (hashtextextended of this and the thread id). */
const KEY_PREFIX = "mini-cursor thread ";
const APP_PREFIX = "mini-cursor ";

/** `mini-cursor pid=<pid> since=<ISO> host=<name>`, within application_name's 63 bytes. */
function applicationName(holder: ThreadHolder): string {
  return `${APP_PREFIX}pid=${holder.pid} since=${holder.since.slice(0, 19)} host=${holder.host}`.slice(0, 63);
}

function parseHolder(name: string | null | undefined): ThreadHolder | undefined {
  const m = /^mini-cursor pid=(\d+) since=(\S+) host=(\S*)/.exec(name ?? "");
  return m ? { pid: Number(m[1]), since: m[2]!, host: m[3]! } : undefined;
}

/**
 * The lock's connection ended while this process still held the thread (a server restart, a
 * dropped connection): the server released the lock, so another process may take the thread.
 * Nothing of this thread may be written any more (lock-gate.ts refuses it); the run stops.
 */
export class ThreadLockLostError extends StateError {
  override name = "ThreadLockLostError";
  constructor(threadId: string, url: string, cause?: unknown) {
    const why = cause instanceof Error && cause.message ? ` (${cause.message.split("\n")[0]})` : "";
    super(
      `Lost the lock on thread ${threadId}: its connection to the PostgreSQL database at ${redactCredentials(url)} ended${why}, ` +
        "as when the server restarts, so another process could take the thread. The run stopped and nothing more of it was saved; " +
        `the thread is kept up to its last saved step. Once the database is reachable, continue with --thread ${threadId}.`,
      "LOCK_LOST",
    );
  }
}

export function postgresThreadLocker(driver: typeof pg, url: string): ThreadLocker {
  return {
    async tryLock(threadId) {
      const holder = thisHolder();
      // keepAlive: a connection that silently vanished (a network cut) ends too, and is noticed.
      const client = new driver.Client({
        connectionString: url,
        application_name: applicationName(holder),
        keepAlive: true,
        connectionTimeoutMillis: POSTGRES_CONNECT_TIMEOUT_MS,
      });
      let released = false;
      let lost: Error | undefined;
      const listeners = new Set<(err: Error) => void>();
      // A server restart ends this connection and with it the lock: said, never a crash.
      const end = (cause?: unknown) => {
        if (released || lost) return;
        lost = new ThreadLockLostError(threadId, url, cause);
        for (const listener of listeners) listener(lost);
      };
      client.on("error", end);
      await client.connect();
      const key = `${KEY_PREFIX}${threadId}`;
      try {
        const got = await client.query<{ locked: boolean }>(
          "SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS locked",
          [key],
        );
        if (!got.rows[0]?.locked) {
          const who = await client.query<{ application_name: string }>(
            `SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
  AND l.classid::bigint = ((hashtextextended($1, 0) >> 32) & 4294967295)
  AND l.objid::bigint = (hashtextextended($1, 0) & 4294967295)`,
            [key],
          );
          released = true;
          await client.end().catch(() => undefined);
          return { busy: parseHolder(who.rows[0]?.application_name) };
        }
      } catch (err) {
        released = true;
        await client.end().catch(() => undefined);
        throw err;
      }
      client.on("end", () => end());
      return {
        lock: {
          threadId,
          onLost(listener) {
            if (lost) listener(lost);
            else listeners.add(listener);
            return () => listeners.delete(listener);
          },
          lost: () => lost,
          async release() {
            if (released) return;
            released = true;
            // Ending the connection releases the lock (an unlock first would be one more round trip).
            await client.end().catch(() => undefined);
          },
        },
      };
    },
  };
}
