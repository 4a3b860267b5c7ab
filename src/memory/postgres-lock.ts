import type pg from "pg";
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

export function postgresThreadLocker(driver: typeof pg, url: string): ThreadLocker {
  return {
    async tryLock(threadId) {
      const holder = thisHolder();
      const client = new driver.Client({ connectionString: url, application_name: applicationName(holder) });
      // A server restart ends this connection: the next query says so; it must not crash the process.
      client.on("error", () => undefined);
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
          await client.end().catch(() => undefined);
          return { busy: parseHolder(who.rows[0]?.application_name) };
        }
      } catch (err) {
        await client.end().catch(() => undefined);
        throw err;
      }
      let released = false;
      return {
        lock: {
          threadId,
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
