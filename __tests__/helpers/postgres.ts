import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { PROJECT_ROOT } from "./cli.js";
import { openMemory, type MemoryBackend } from "../../src/memory/backend.js";

/**
 * PostgreSQL for the memory tests: `.ci/run` starts a throwaway cluster and exports its URL as
 * MINI_CURSOR_TEST_POSTGRES_URL (with MINI_CURSOR_TEST_POSTGRES=required, so a missing server
 * fails the suite there). Locally, without the URL, the PostgreSQL cases are skipped with a note.
 * Each test gets a database of its own, dropped afterwards.
 */

export const POSTGRES_URL = process.env.MINI_CURSOR_TEST_POSTGRES_URL || undefined;
const REQUIRED = process.env.MINI_CURSOR_TEST_POSTGRES === "required";

if (!POSTGRES_URL) {
  if (REQUIRED)
    throw new Error(
      "MINI_CURSOR_TEST_POSTGRES=required but MINI_CURSOR_TEST_POSTGRES_URL is not set: .ci/postgres did not start a server.",
    );
  process.stderr.write(
    "PostgreSQL memory tests skipped: set MINI_CURSOR_TEST_POSTGRES_URL (e.g. the URL printed by `.ci/postgres start /tmp/pg`) to run them.\n",
  );
}

export type SaverKind = "sqlite" | "postgres";
/** The savers the memory tests run against here. */
export const SAVERS: SaverKind[] = POSTGRES_URL ? ["sqlite", "postgres"] : ["sqlite"];

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

/** A fresh, empty database on the test server. */
export async function createTestDatabase(): Promise<TestDatabase> {
  if (!POSTGRES_URL) throw new Error("no PostgreSQL server for the tests");
  const name = `mc_test_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: POSTGRES_URL });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}

/** Runs one SQL query on a test database. */
export async function query<T extends pg.QueryResultRow>(
  url: string,
  sql: string,
  params: unknown[] = [],
): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql, params)).rows;
  } finally {
    await client.end();
  }
}

/** The memory backends the engine tests run on: in process always, PostgreSQL when a server is there. */
export const ENGINE_MEMORIES: Array<"in-memory" | "postgres"> = POSTGRES_URL
  ? ["in-memory", "postgres"]
  : ["in-memory"];

/** A PostgreSQL memory backend on a fresh database; `close` releases it and drops the database. */
export async function openPostgresMemory(
  workspace: string,
): Promise<{ memory: MemoryBackend; url: string; close(): Promise<void> }> {
  const db = await createTestDatabase();
  const memory = await openMemory({ workspace, checkpointer: db.url });
  return {
    memory,
    url: db.url,
    async close() {
      await memory.close();
      await db.drop();
    },
  };
}

/**
 * A PostgreSQL cluster of the test's own (`.ci/postgres`), for faults that would disturb the
 * shared one: `restart` is `pg_ctl restart -m fast` (every connection ends), `stop` removes it.
 */
export interface OwnCluster {
  url: string;
  restart(): void;
  stop(): void;
}

export function startOwnCluster(): OwnCluster {
  const dir = mkdtempSync(path.join(os.tmpdir(), "mini-cursor-pg-"));
  const script = path.join(PROJECT_ROOT, ".ci", "postgres");
  const url = execFileSync(script, ["start", dir], { encoding: "utf8" }).trim();
  const bin = readdirSync("/usr/lib/postgresql")
    .sort((a, b) => Number(a) - Number(b))
    .map((v) => path.join("/usr/lib/postgresql", v, "bin"))
    .at(-1)!;
  const asDb =
    process.getuid?.() === 0 ? ["setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups", "--"] : [];
  return {
    url,
    restart() {
      const [cmd, ...args] = [
        ...asDb,
        path.join(bin, "pg_ctl"),
        "-D",
        path.join(dir, "data"),
        "-l",
        path.join(dir, "server.log"),
      ];
      // The server's output goes to its log file, so nothing here waits for its pipes.
      execFileSync(cmd!, [...args, "-m", "fast", "-w", "-t", "60", "restart"], { stdio: "ignore" });
    },
    stop() {
      try {
        execFileSync(script, ["stop", dir], { stdio: "ignore" });
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
