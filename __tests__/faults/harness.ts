import { expect } from "@jest/globals";
import { mkdirSync } from "node:fs";
import path from "node:path";
import { baseEnv, collect, startCli, type CliResult } from "../helpers/cli.js";
import { startOpenAIServer, type ChatRequest, type OpenAIServer, type Script } from "../helpers/openai-server.js";
import { createTestDatabase, type SaverKind, type TestDatabase } from "../helpers/postgres.js";
import { makeTempDir, waitFor } from "../helpers/tmp.js";
import { stateFolderName, workspaceRealPath } from "../../src/memory/state-dir.js";

/** As state-dir.ts names the folder of workspaces under the state home. */
const WORKSPACES_DIR = "workspaces";

/**
 * The fault suite's fixture: a workspace in a temp folder, the scripted OpenAI-compatible
 * server, and (for PostgreSQL) a fresh database; the CLI runs as a subprocess, killed where a
 * test says (MINI_CURSOR_FAULT_POINT, or SIGKILL from here), and each case checks the
 * conversation the model is sent next.
 */

export interface Fixture {
  workspace: string;
  /** The workspace's state folder (under a state home of the test's own). */
  stateFolder: string;
  server: OpenAIServer;
  db?: TestDatabase;
  env(extra?: NodeJS.ProcessEnv): NodeJS.ProcessEnv;
  /** Starts the CLI on the workspace (full-auto, no sandbox), collecting its output; `under` a program such as faketime. */
  start(args: string[], extra?: NodeJS.ProcessEnv, under?: string[]): Started;
  run(args: string[], extra?: NodeJS.ProcessEnv, under?: string[]): Promise<CliResult>;
  close(): Promise<void>;
}

export interface Started {
  pid: number;
  done: Promise<CliResult>;
  /** stdout and stderr so far, while it runs. */
  output(): string;
}

export const CLI_DEADLINE_MS = 90_000;

/** How long a test waits for a running CLI to reach the state it kills it in (a busy machine is slow). */
export const RUN_STATE_DEADLINE_MS = 120_000;

export async function openFixture(saver: SaverKind, script: Script): Promise<Fixture> {
  const tmp = makeTempDir("mini-cursor-fault-");
  const workspace = path.join(tmp.dir, "ws");
  mkdirSync(workspace);
  const server = await startOpenAIServer(script);
  const stateHome = path.join(tmp.dir, "state");
  const db = saver === "postgres" ? await createTestDatabase() : undefined;
  const env = (extra: NodeJS.ProcessEnv = {}) =>
    baseEnv({
      OPENAI_BASE_URL: server.url,
      OPENAI_API_KEY: "test",
      MINI_CURSOR_MAX_RETRIES: "0",
      MINI_CURSOR_SANDBOX: "off",
      MINI_CURSOR_STATE_HOME: stateHome,
      ...(db ? { MINI_CURSOR_CHECKPOINTER: db.url } : {}),
      ...extra,
    });
  const start = (args: string[], extra?: NodeJS.ProcessEnv, under?: string[]) => {
    const child = startCli(["--workspace", workspace, "--approval", "full-auto", ...args], { env: env(extra), under });
    let live = "";
    child.stdout!.on("data", (d: Buffer) => (live += d.toString()));
    child.stderr!.on("data", (d: Buffer) => (live += d.toString()));
    return { pid: child.pid!, done: collect(child, CLI_DEADLINE_MS), output: () => live };
  };
  return {
    workspace,
    stateFolder: path.join(stateHome, WORKSPACES_DIR, stateFolderName(workspaceRealPath(workspace))),
    server,
    db,
    env,
    start,
    run: (args, extra, under) => start(args, extra, under).done,
    async close() {
      await server.close();
      await db?.drop();
      tmp.cleanup();
    },
  };
}

/** The thread id the banner printed (`next time: --thread <id>`). */
export function bannerThread(stdout: string): string {
  const id = /--thread (\S+)/.exec(stdout)?.[1];
  if (!id) throw new Error(`no thread id in the banner:\n${stdout}`);
  return id;
}

type WireMessage = ChatRequest["messages"][number];

/**
 * A conversation a provider accepts: every assistant tool call answered by a tool message right
 * after it, and no tool message that answers nothing.
 */
export function expectValidConversation(messages: WireMessage[]): void {
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    if (m.role === "tool") throw new Error(`message ${i} is a tool result that answers no call`);
    const ids = (m.tool_calls ?? []).map((c) => c.id);
    if (m.role !== "assistant" || ids.length === 0) continue;
    const answered: string[] = [];
    while (messages[i + 1]?.role === "tool") answered.push(messages[++i]!.tool_call_id ?? "");
    expect(answered.sort()).toEqual([...ids].sort());
  }
}

/** Roles with the system prompt's (system or developer) said as "system". */
export const roles = (messages: WireMessage[]) => messages.map((m) => (m.role === "developer" ? "system" : m.role));

export const toolResults = (messages: WireMessage[]) =>
  messages.filter((m) => m.role === "tool").map((m) => String(m.content));

export const userTexts = (messages: WireMessage[]) =>
  messages
    .filter((m) => m.role === "user")
    .map((m) => String(typeof m.content === "string" ? m.content : JSON.stringify(m.content)));

/** Waits until `ready` holds while `run` runs; a miss says what the run printed so far. */
export async function waitOnRun(run: Started, ready: () => boolean): Promise<void> {
  await waitFor(ready, RUN_STATE_DEADLINE_MS, 50).catch((err: Error) => {
    throw new Error(`${err.message}; output:\n${run.output()}`);
  });
}

/** The result of a run that must have ended by SIGKILL (a fault point's, or the test's). */
export async function killedResult(run: Started): Promise<CliResult> {
  const result = await run.done;
  expect(result.signal).toBe("SIGKILL");
  return result;
}

/** SIGKILLs `run` now and returns its result. */
export function sigkill(run: Started): Promise<CliResult> {
  process.kill(run.pid, "SIGKILL");
  return killedResult(run);
}

/**
 * Run 2 ("SECOND", after `args`) on the thread whose id the first run's banner printed: it must
 * end cleanly, and the conversation it sends the model must be valid.
 */
export async function resumeSecond(fx: Fixture, first: CliResult, args: string[] = [], extra?: NodeJS.ProcessEnv) {
  const thread = bannerThread(first.stdout);
  const r2 = await fx.run([...args, "--thread", thread, "SECOND"], extra);
  expect(r2.stderr).toBe("");
  expect(r2.code).toBe(0);
  const next = fx.server.requests.at(-1)!.messages;
  expectValidConversation(next);
  return { thread, r2, next };
}
