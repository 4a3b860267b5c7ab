import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { BaseMessage } from "@langchain/core/messages";
import { afterEach, beforeEach, describe, expect, test } from "@jest/globals";
import { createGraph, type GraphSettings } from "../src/graph/graph.js";
import { createGraphEngine } from "../src/graph/engine.js";
import { KEPT_CHECKPOINTS } from "../src/memory/compact-saver.js";
import { createTools } from "../src/tools/index.js";
import { baseEnv, runCli, startCli, collect } from "./helpers/cli.js";
import { closedPortUrl, startOpenAIServer, type OpenAIServer } from "./helpers/openai-server.js";
import {
  createTestDatabase,
  openPostgresMemory,
  POSTGRES_URL,
  query,
  SAVERS,
  type SaverKind,
  type TestDatabase,
} from "./helpers/postgres.js";
import { ScriptedChatModel, type ScriptedTurn } from "./helpers/scripted-model.js";
import { makeTempDir } from "./helpers/tmp.js";
import { stateDirOf } from "./helpers/state-dir.js";

/**
 * Threads, --continue and --threads behave the same whether they live in the workspace
 * (SQLite and JSON files, the default) or in PostgreSQL (MINI_CURSOR_CHECKPOINTER), and a
 * PostgreSQL database is shared: a thread started in one checkout continues in another.
 */

let tmp: ReturnType<typeof makeTempDir>;
let db: TestDatabase | undefined;
let openai: OpenAIServer | undefined;

beforeEach(() => {
  tmp = makeTempDir();
});
afterEach(async () => {
  await openai?.close();
  openai = undefined;
  await db?.drop();
  db = undefined;
  tmp.cleanup();
});

/** A workspace folder `name` under `parent` with one file in it. */
function workspaceAt(...parts: string[]): string {
  const dir = path.join(tmp.dir, ...parts);
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, "hello.txt"), "hello from the workspace\n");
  return dir;
}

async function memoryEnv(saver: SaverKind, extra: NodeJS.ProcessEnv = {}): Promise<NodeJS.ProcessEnv> {
  if (saver === "postgres") db ??= await createTestDatabase();
  return baseEnv({ ...(saver === "postgres" ? { MINI_CURSOR_CHECKPOINTER: db!.url } : {}), ...extra });
}

interface ThreadLine {
  id: string;
  engine: string;
  runs: number;
  steps: number;
  firstRequest: string;
}

async function threadsOf(workspace: string, env: NodeJS.ProcessEnv): Promise<ThreadLine[]> {
  const r = await runCli(["--workspace", workspace, "--threads", "--json"], { env });
  expect(r.code).toBe(0);
  return r.stdout.trim() === ""
    ? []
    : r.stdout
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as ThreadLine);
}

describe.each(SAVERS.flatMap((s) => (["graph", "loop"] as const).map((e) => [s, e] as const)))(
  "threads in %s, %s engine",
  (saver, engine) => {
    test("a thread is saved, resumed by id and by --continue, and listed by --threads", async () => {
      const ws = workspaceAt("proj");
      const env = await memoryEnv(saver);
      const first = await runCli(["--workspace", ws, "--engine", engine, "--thread", "t-one", "read hello.txt"], {
        env,
      });
      expect(first.stderr).toBe("");
      expect(first.code).toBe(0);
      const second = await runCli(["--workspace", ws, "--engine", engine, "--continue", "list the files here"], {
        env,
      });
      expect(second.code).toBe(0);
      expect(second.stdout).toContain("t-one (resumed)");
      const threads = await threadsOf(ws, env);
      expect(threads).toEqual([
        expect.objectContaining({ id: "t-one", engine, runs: 2, steps: 4, firstRequest: "read hello.txt" }),
      ]);
      // PostgreSQL holds everything: nothing of the thread is written in the state folder.
      expect(existsSync(path.join(ws, ".mini-cursor"))).toBe(false);
      const state = stateDirOf(ws);
      const inWorkspace = ["state.sqlite", "threads.json", "loop-threads"].filter((f) =>
        existsSync(path.join(state, f)),
      );
      const expected = {
        sqlite: { graph: ["state.sqlite", "threads.json"], loop: ["threads.json", "loop-threads"] },
        postgres: { graph: [], loop: [] },
      };
      expect(inWorkspace).toEqual(expected[saver][engine]);
    });
  },
);

const withPostgres = POSTGRES_URL ? describe : describe.skip;

withPostgres("one PostgreSQL database shared by two checkouts", () => {
  test.each(["graph", "loop"] as const)(
    "%s: a thread started in one checkout continues in the other with its whole conversation",
    async (engine) => {
      // The same project checked out at two paths (two machines): threads are scoped by the folder name.
      const here = workspaceAt("machine-a", "proj");
      const there = workspaceAt("machine-b", "proj");
      openai = await startOpenAIServer([{ content: "first answer" }, { content: "second answer" }]);
      const env = await memoryEnv("postgres", {
        OPENAI_BASE_URL: openai.url,
        OPENAI_API_KEY: "test",
        MINI_CURSOR_MAX_RETRIES: "0",
      });
      const a = await runCli(["--workspace", here, "--engine", engine, "--thread", "shared", "first question"], {
        env,
      });
      expect(a.code).toBe(0);
      const b = await runCli(["--workspace", there, "--engine", engine, "--continue", "second question"], { env });
      expect(b.code).toBe(0);
      expect(b.stdout).toContain("shared (resumed)");
      const sent = openai.requests[1]!.messages.filter((m) => m.role !== "system" && m.role !== "developer").map(
        (m) => `${m.role}:${String(m.content)}`,
      );
      expect(sent).toEqual(["user:first question", "assistant:first answer", "user:second question"]);
      expect(await threadsOf(here, env)).toEqual([expect.objectContaining({ id: "shared", runs: 2 })]);
      // Another project on the same database sees none of them.
      expect(await threadsOf(workspaceAt("other"), env)).toEqual([]);
    },
  );

  test("two processes starting together on an empty database both set it up and save their threads", async () => {
    const ws = workspaceAt("proj");
    const env = await memoryEnv("postgres");
    const runs = await Promise.all(
      ["one", "two"].map((id) => collect(startCli(["--workspace", ws, "--thread", id, "read hello.txt"], { env }))),
    );
    for (const r of runs) expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
    expect((await threadsOf(ws, env)).map((t) => t.id).sort()).toEqual(["one", "two"]);
  });
});

withPostgres("the PostgreSQL checkpointer's storage", () => {
  test("stays linear: few checkpoints and blobs, each message stored once; a new process resumes the thread whole", async () => {
    const ws = workspaceAt("proj");
    const settings: GraphSettings = {
      workspace: ws,
      model: "s",
      provider: "offline",
      requestTimeoutMs: 1000,
      maxRetries: 0,
      approval: "full-auto",
      maxSteps: 100,
      contextTokens: 1_000_000,
    };
    const backend = await openPostgresMemory(ws);
    const open = (script: ScriptedTurn[], memory = backend.memory) => {
      const model = new ScriptedChatModel(script);
      const graph = createGraph(settings, {
        checkpointer: memory.checkpointer(),
        model,
        tools: createTools({ workspace: ws }),
      });
      const engine = createGraphEngine({
        graph,
        meta: { engine: "graph", model: "s", provider: "offline", workspace: ws },
        modelSettings: settings,
        approval: "full-auto",
        maxSteps: 100,
      });
      return {
        graph,
        model,
        run: (task: string) =>
          engine.run({ task, threadId: "t", emit: () => undefined, approver: async () => ({ decision: "approve" }) }),
      };
    };
    try {
      // Different arguments each turn, so the loop guard does not step in.
      const turns: ScriptedTurn[] = Array.from({ length: 40 }, (_, i) => ({
        toolCalls: [{ name: "list_directory", args: { directoryPath: `d${i}` } }],
      }));
      const first = open([...turns, "done"]);
      expect((await first.run("list a lot")).reason).toBe("done");
      const count = async (table: string) =>
        Number((await query<{ n: string }>(backend.url, `SELECT count(*) AS n FROM ${table}`))[0]!.n);
      expect(await count("checkpoints")).toBeLessThanOrEqual(KEPT_CHECKPOINTS);
      // 1 request + 40 calls + 40 results + 1 answer
      expect(await count("mini_cursor_message_store")).toBe(82);
      // The blobs the kept checkpoints refer to (a few channels each: messages, alwaysAllow,
      // snapshots, todos, stopReason and a branch channel), not one per step (40 steps here).
      expect(await count("checkpoint_blobs")).toBeLessThanOrEqual(KEPT_CHECKPOINTS * 6);
      const before = (await first.graph.getState({ configurable: { thread_id: "t" } })).values
        .messages as BaseMessage[];

      // A second process: its own connections, no cache.
      const other = await openPostgresMemoryOn(backend.url, ws);
      try {
        const second = open(["and again"], other);
        await second.run("more");
        const seen = second.model.calls[0]!.slice(1).map((m) => m.getType());
        expect(seen).toEqual([...before.map((m) => m.getType()), "human"]);
        expect(second.model.calls[0]!.slice(1, -1).map((m) => m.content)).toEqual(before.map((m) => m.content));
      } finally {
        await other.close();
      }
    } finally {
      await backend.close();
    }
  });
});

/** Another connection pool on an existing test database (a second process). */
async function openPostgresMemoryOn(url: string, workspace: string) {
  const { openMemory } = await import("../src/memory/backend.js");
  return openMemory({ workspace, checkpointer: url });
}

test("an unreachable database stops the run before any model request, and the message hides the password", async () => {
  const port = new URL(await closedPortUrl()).port;
  const ws = workspaceAt("proj");
  // Every libpq form a password comes in (issue 25): in the userinfo with an @ in it, and as ?password=.
  for (const [url, shown] of [
    [
      `postgres://agent:hunter2@not-shown@127.0.0.1:${port}/threads`,
      `postgres://agent:[redacted]@127.0.0.1:${port}/threads`,
    ],
    [
      `postgres://agent@127.0.0.1:${port}/threads?password=hunter2-not-shown`,
      `postgres://agent@127.0.0.1:${port}/threads?password=[redacted]`,
    ],
  ]) {
    const r = await runCli(["--workspace", ws, "--checkpointer", url!, "read hello.txt"], { env: baseEnv() });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`mini-cursor: The PostgreSQL database at ${shown} cannot be reached (ECONNREFUSED). `);
    expect(r.stderr).toContain("unset it to keep threads in the workspace (SQLite)");
    expect(r.stderr + r.stdout).not.toContain("hunter2");
    expect(r.stderr + r.stdout).not.toContain("not-shown");
  }
}, 120_000);

test("a checkpointer that is neither sqlite nor a PostgreSQL URL is a usage error", async () => {
  const r = await runCli(["--workspace", workspaceAt("proj"), "--checkpointer", "mysql://u:secretpw@h/db", "hi"], {
    env: baseEnv(),
  });
  expect(r.code).toBe(2);
  expect(r.stderr).toBe(
    'mini-cursor: --checkpointer must be "sqlite" or a PostgreSQL URL such as postgres://user@host:5432/db (a password goes after the user: user:password@host), got "mysql://u:[redacted]@h/db".\n',
  );
});
