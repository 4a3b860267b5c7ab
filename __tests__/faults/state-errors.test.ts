import { afterEach, describe, expect, jest, test } from "@jest/globals";
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { appendFileSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { POSTGRES_URL, query, SAVERS } from "../helpers/postgres.js";
import { bannerThread, expectValidConversation, openFixture, roles, userTexts, type Fixture } from "./harness.js";

/**
 * Each state problem named as what it is, with the file or URL and what to do, before any
 * model request where it can be found at start: a newer format, a missing table, a file that
 * is not SQLite, a read-only state folder, a full disk mid-run, a database that goes away.
 */

jest.setTimeout(300_000);

const asRoot = process.getuid?.() === 0;

type Db = { pragma(sql: string): unknown; exec(sql: string): unknown; close(): void };
function openSqlite(file: string): Db {
  const saverEntry = createRequire(import.meta.url).resolve("@langchain/langgraph-checkpoint-sqlite");
  const Driver = createRequire(saverEntry)("better-sqlite3") as new (file: string) => Db;
  return new Driver(file);
}

const stateDb = (fx: Fixture) => path.join(fx.stateFolder, "state.sqlite");

describe.each(SAVERS)("foreign state (%s)", (saver) => {
  let fx: Fixture | undefined;
  afterEach(async () => {
    await fx?.close();
    fx = undefined;
  });

  test("a newer state format is refused at start, naming it, before any model request", async () => {
    fx = await openFixture(saver, [{ content: "never" }]);
    if (fx.db) {
      await query(fx.db.url, "CREATE TABLE public.mini_cursor_format (version INTEGER NOT NULL)");
      await query(fx.db.url, "INSERT INTO public.mini_cursor_format VALUES (99)");
    } else {
      mkdirSync(fx.stateFolder, { recursive: true });
      const db = openSqlite(stateDb(fx));
      db.pragma("user_version = 99");
      db.close();
    }
    const r = await fx.run(["hello"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("was written by a newer mini-cursor (state format 99; this version reads up to 1)");
    expect(r.stderr).toContain("Update mini-cursor");
    expect(r.stderr).not.toMatch(/model|damaged|Move it aside/);
    expect(fx.server.requests).toHaveLength(0);
  });

  test("a missing table is named at start, never read as an empty history", async () => {
    fx = await openFixture(saver, [{ content: "first" }, { content: "never" }]);
    const r1 = await fx.run(["hello"]);
    expect(r1.code).toBe(0);
    const thread = bannerThread(r1.stdout);
    if (fx.db) await query(fx.db.url, "DROP TABLE public.checkpoints");
    else {
      const db = openSqlite(stateDb(fx));
      db.exec("DROP TABLE checkpoints");
      db.close();
    }
    const r2 = await fx.run(["--thread", thread, "again"]);
    expect(r2.code).toBe(1);
    expect(r2.stderr).toContain(
      fx.db
        ? "The table public.checkpoints is missing from the PostgreSQL database at"
        : `The table checkpoints is missing from ${stateDb(fx)}`,
    );
    expect(r2.stderr).toContain("Restore it from a backup");
    if (fx.db) expect(r2.stderr).not.toContain(new URL(fx.db.url).password || "\u0000");
    expect(fx.server.requests).toHaveLength(1);
  });

  test("a lost table is refused also where the format stamp is gone (a file or database from before it)", async () => {
    fx = await openFixture(saver, [{ content: "first" }, { content: "never" }]);
    const r1 = await fx.run(["hello"]);
    expect(r1.code).toBe(0);
    const thread = bannerThread(r1.stdout);
    if (fx.db) {
      // With LangGraph's record of its migrations too, which would otherwise fail the first query.
      for (const table of ["checkpoints", "checkpoint_migrations", "mini_cursor_format"])
        await query(fx.db.url, `DROP TABLE public.${table}`);
    } else {
      const db = openSqlite(stateDb(fx));
      db.exec("DROP TABLE checkpoints");
      db.pragma("user_version = 0");
      db.close();
    }
    for (const args of [
      ["--thread", thread, "again"],
      ["--continue", "again"],
      ["--thread", thread, "--undo"],
    ]) {
      const r = await fx.run(args);
      expect(r.code).toBe(1);
      expect(r.stdout).toBe("");
      expect(r.stderr).toContain(
        fx.db
          ? "mini-cursor: The table public.checkpoints is missing from the PostgreSQL database at"
          : `mini-cursor: The table checkpoints is missing from ${stateDb(fx)}`,
      );
      expect(r.stderr).toContain("Nothing was run. Restore it from a backup");
    }
    expect(fx.server.requests).toHaveLength(1);
  });

  test("a damaged stored message is named (which, of which thread, where) at open; a new thread runs", async () => {
    fx = await openFixture(saver, [{ content: "first" }, { content: "a new thread" }]);
    const r1 = await fx.run(["hello"]);
    expect(r1.code).toBe(0);
    const thread = bannerThread(r1.stdout);
    // The first stored message (the request) with its format byte zeroed, as a disk or an editor would leave it.
    let ref: string;
    if (fx.db) {
      const table = "public.mini_cursor_message_store";
      ref = (await query<{ ref: string }>(fx.db.url, `SELECT ref FROM ${table} ORDER BY ref LIMIT 1`))[0]!.ref;
      await query(
        fx.db.url,
        `UPDATE ${table} SET value = overlay(value placing '\\x00'::bytea from 1 for 1) WHERE ref = $1`,
        [ref],
      );
    } else {
      const db = openSqlite(stateDb(fx)) as Db & { prepare(sql: string): { get(): { ref: string } } };
      ref = db.prepare("SELECT ref FROM message_store ORDER BY ref LIMIT 1").get().ref;
      db.exec(`UPDATE message_store SET value = CAST(X'00' || substr(value, 2) AS BLOB) WHERE ref = '${ref}'`);
      db.close();
    }
    const where = fx.db ? "the PostgreSQL database at postgres://" : stateDb(fx);
    for (const args of [
      ["--thread", thread, "again"],
      ["--continue", "again"],
      ["--thread", thread, "--undo"],
    ]) {
      const r = await fx.run(args);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`mini-cursor: Message ${ref} of thread ${thread} in ${where}`);
      expect(r.stderr).toContain(
        "cannot be read: its first byte, the format, is 0 and not 1. It was changed outside mini-cursor (or by the disk), so the thread cannot go on. " +
          "Nothing was run. Restore it from a backup to continue this thread, or leave out --thread/--continue to start a new one.",
      );
      expect(r.stderr).not.toMatch(/unknown stored message|model provider/);
    }
    expect(fx.server.requests).toHaveLength(1);
    const fresh = await fx.run(["hello again"]);
    expect(fresh.code).toBe(0);
    expect(fresh.stdout).toContain("a new thread");
  });

  test("a thread whose history is gone from a state moved aside is said at open, not continued empty", async () => {
    fx = await openFixture(saver, [{ content: "first" }, { content: "again" }, { content: "a new thread" }]);
    const r1 = await fx.run(["hello"]);
    expect(r1.code).toBe(0);
    const thread = bannerThread(r1.stdout);
    // Undone to its start, the thread still has a checkpoint and goes on.
    expect((await fx.run(["--thread", thread, "--undo"])).code).toBe(0);
    const again = await fx.run(["--thread", thread, "again"]);
    expect(again.code).toBe(0);
    expect(userTexts(fx.server.requests.at(-1)!.messages)).toEqual(["again"]);
    // What the missing table's advice says to do, or a state file replaced by another.
    if (fx.db) await query(fx.db.url, "DELETE FROM public.checkpoints");
    else renameSync(stateDb(fx), `${stateDb(fx)}.old`);
    for (const args of [
      ["--thread", thread, "again"],
      ["--continue", "again"],
      ["--thread", thread, "--undo"],
    ]) {
      const r = await fx.run(args);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(
        `mini-cursor: Thread ${thread} ran 2 steps (${fx.db ? "the thread index" : "threads.json"} says, last on `,
      );
      expect(r.stderr).toContain(`but ${fx.db ? "the PostgreSQL database at postgres://" : stateDb(fx)}`);
      expect(r.stderr).toContain(
        "holds none of its history: it was replaced, emptied or moved aside since. Nothing was run. Restore it from a backup to continue this thread, or leave out --thread/--continue to start a new one.",
      );
    }
    expect(fx.server.requests).toHaveLength(2);
    // A new thread is not refused.
    const fresh = await fx.run(["hello again"]);
    expect(fresh.code).toBe(0);
    expect(fresh.stdout).toContain("a new thread");
  });
});

describe("SQLite state files", () => {
  let fx: Fixture | undefined;
  const unmount: string[] = [];
  afterEach(async () => {
    for (const dir of unmount.splice(0)) spawnSync("umount", ["-l", dir]);
    await fx?.close();
    fx = undefined;
  });

  test("a loop thread whose file is gone is said at open; one undone to its start goes on", async () => {
    fx = await openFixture("sqlite", [
      { content: "first" },
      { content: "one" },
      { content: "two" },
      { content: "three" },
    ]);
    const r1 = await fx.run(["--engine", "loop", "hello"]);
    expect(r1.code).toBe(0);
    const thread = bannerThread(r1.stdout);
    const file = path.join(fx.stateFolder, "loop-threads", `${thread}.json`);
    // Undone to its start: an empty conversation, saved; the thread goes on.
    expect((await fx.run(["--thread", thread, "--undo"])).code).toBe(0);
    const again = await fx.run(["--thread", thread, "again"]);
    expect(again.stderr).toBe("");
    expect(again.code).toBe(0);
    expect(userTexts(fx.server.requests.at(-1)!.messages)).toEqual(["again"]);
    rmSync(file);
    for (const args of [
      ["--thread", thread, "more"],
      ["--continue", "more"],
      ["--thread", thread, "--undo"],
    ]) {
      const r = await fx.run(args);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`mini-cursor: Thread ${thread} ran 2 steps (threads.json says, last on `);
      expect(r.stderr).toContain(`but ${file} holds none of its history`);
    }
    expect(fx.server.requests).toHaveLength(2);
  });

  test("a file that is not SQLite is called damaged (the one case offered for moving aside)", async () => {
    fx = await openFixture("sqlite", [{ content: "never" }]);
    mkdirSync(fx.stateFolder, { recursive: true });
    writeFileSync(stateDb(fx), "these are not the bytes of a database ".repeat(200));
    const r = await fx.run(["hello"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${stateDb(fx)} is not a readable SQLite database`);
    expect(fx.server.requests).toHaveLength(0);
  });

  (asRoot ? test : test.skip)(
    "a read-only state folder is named as read-only, and its healthy file is not offered for moving aside",
    async () => {
      fx = await openFixture("sqlite", [{ content: "first" }, { content: "never" }]);
      const r1 = await fx.run(["hello"]);
      expect(r1.code).toBe(0);
      const folder = fx.stateFolder;
      expect(spawnSync("mount", ["--bind", folder, folder]).status).toBe(0);
      unmount.push(folder);
      expect(spawnSync("mount", ["-o", "remount,bind,ro", folder]).status).toBe(0);
      const r2 = await fx.run(["--thread", bannerThread(r1.stdout), "again"]);
      expect(r2.code).toBe(1);
      expect(r2.stderr).toContain("The state folder is read-only: mini-cursor cannot write");
      expect(r2.stderr).not.toMatch(/not a readable SQLite|Move it aside|\.damaged/);
      expect(fx.server.requests).toHaveLength(1);
    },
  );

  (asRoot ? test : test.skip)(
    "a disk that fills up mid-run: named as a full disk, temporary files gone, and the thread resumes valid",
    async () => {
      // The disk fills while the run is in the model's second turn: saving that turn meets it.
      let folder = "";
      const fillDisk = () => {
        const block = Buffer.alloc(64 * 1024);
        try {
          for (;;) appendFileSync(path.join(folder, "filler"), block);
        } catch {
          // full
        }
      };
      fx = await openFixture("sqlite", (_request, index) => {
        if (index === 0) return { toolCalls: [{ name: "write_file", args: { filePath: "a.txt", content: "one\n" } }] };
        if (index === 1) fillDisk();
        return { content: `answer ${index}` };
      });
      folder = fx.stateFolder;
      mkdirSync(folder, { recursive: true });
      expect(spawnSync("mount", ["-t", "tmpfs", "-o", "size=4m", "tmpfs", folder]).status).toBe(0);
      unmount.push(folder);
      const r1 = await fx.run(["FIRST"]);
      expect(r1.code).toBe(1);
      const said = r1.stdout + r1.stderr;
      expect(said).toContain("The disk is full: mini-cursor cannot save to");
      expect(said).toContain("Free some space");
      expect(said).not.toMatch(/model request failed|Could not reach the model provider/);
      const leftovers = (dir: string): string[] =>
        readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
          e.isDirectory() ? leftovers(path.join(dir, e.name)) : e.name.endsWith(".tmp") ? [e.name] : [],
        );
      expect(leftovers(folder)).toEqual([]);
      rmSync(path.join(folder, "filler"));
      const r2 = await fx.run(["--thread", bannerThread(r1.stdout), "SECOND"]);
      expect(r2.code).toBe(0);
      const next = fx.server.requests.at(-1)!.messages;
      expectValidConversation(next);
      expect(userTexts(next)).toEqual(["FIRST", "SECOND"]);
      expect(roles(next)).toEqual(["system", "user", "assistant", "tool", "user"]);
      expect(String(next[3]!.content)).toContain("a.txt");
      expect(String(next[3]!.content)).not.toContain("not run");
    },
  );
});

/** A TCP relay to the test database that the test can cut, as a stopped server would be. */
async function relay(target: URL): Promise<{ url: (db: string) => string; cut(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    sockets.add(client).add(upstream);
    client.pipe(upstream).pipe(client);
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on("error", end).on("close", end);
    upstream.on("error", end).on("close", end);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    url: (db) => {
      const u = new URL(db);
      u.hostname = "127.0.0.1";
      u.port = String(port);
      return u.toString();
    },
    cut: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

(POSTGRES_URL ? test : test.skip)(
  "a database that stops mid-run is named as the database, not the model provider",
  async () => {
    let cut: (() => Promise<void>) | undefined;
    const fx = await openFixture("postgres", (_request, index) => {
      if (index === 0) void cut?.();
      return { content: "an answer that cannot be saved" };
    });
    try {
      const link = await relay(new URL(fx.db!.url));
      cut = link.cut;
      const result = await fx.run(["hello"], { MINI_CURSOR_CHECKPOINTER: link.url(fx.db!.url) });
      expect(result.code).toBe(1);
      const said = result.stdout + result.stderr;
      // The thread lock's connection is cut with the others: whichever notices first names the database.
      expect(said).toMatch(
        /The PostgreSQL database at postgres:\/\/\S+@127\.0\.0\.1:\d+\/\S+ cannot be reached \((ECONNREFUSED|Connection terminated unexpectedly)\)|Lost the lock on thread \S+: its connection to the PostgreSQL database at postgres:\/\/\S+@127\.0\.0\.1:\d+\/\S+ ended \(Connection terminated unexpectedly\)/,
      );
      expect(said).not.toMatch(/model provider|model request failed/);
    } finally {
      await fx.close();
    }
  },
);
