import { createRequire } from "node:module";

/** The part of better-sqlite3's Database this package uses directly. */
export interface SqliteDatabase {
  exec(sql: string): unknown;
  pragma(sql: string, options?: { simple: boolean }): unknown;
  prepare(sql: string): {
    get(...params: unknown[]): unknown;
    run(...params: unknown[]): unknown;
    all(...params: unknown[]): unknown[];
  };
  close(): void;
}

type SqliteConstructor = new (file: string, options?: { readonly?: boolean; timeout?: number }) => SqliteDatabase;

let driver: SqliteConstructor | undefined;

/** better-sqlite3 as the SQLite checkpointer loads it (it is that package's dependency, not ours). */
export function openSqliteFile(file: string, options?: { readonly?: boolean; timeout?: number }): SqliteDatabase {
  if (!driver) {
    const saverEntry = createRequire(import.meta.url).resolve("@langchain/langgraph-checkpoint-sqlite");
    driver = createRequire(saverEntry)("better-sqlite3") as SqliteConstructor;
  }
  return new driver(file, options);
}
