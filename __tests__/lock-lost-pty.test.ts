import net from "node:net";
import { afterEach, beforeAll, describe, expect, jest, test } from "@jest/globals";
import { baseEnv } from "./helpers/cli.js";
import { startOpenAIServer, type OpenAIServer } from "./helpers/openai-server.js";
import { POSTGRES_URL, startOwnCluster, type OwnCluster } from "./helpers/postgres.js";
import { makeTempDir, waitFor } from "./helpers/tmp.js";
import { atPrompt, createTmux, paneExitCode, requireTmux, startCliInPane, type TmuxTerminal } from "./helpers/tmux.js";

/**
 * Issue 26's waits and lost lock in an interactive session on a real terminal (tmux): the
 * spinner's text names the database a session waits for, and a session whose PostgreSQL lock
 * was lost (the server restarted mid-turn) says so, stays open, and takes the thread again at
 * its next turn, whose request is a valid conversation.
 */

jest.setTimeout(240_000);

let tmp: ReturnType<typeof makeTempDir> | undefined;
let term: TmuxTerminal | undefined;
let provider: OpenAIServer | undefined;
let cluster: OwnCluster | undefined;

beforeAll(() => requireTmux());

afterEach(async () => {
  await term?.kill();
  term = undefined;
  await provider?.close();
  provider = undefined;
  cluster?.stop();
  cluster = undefined;
  tmp?.cleanup();
  tmp = undefined;
});

async function startSession(env: NodeJS.ProcessEnv): Promise<TmuxTerminal> {
  tmp = makeTempDir();
  term = createTmux(baseEnv({ MINI_CURSOR_SANDBOX: "off", ...env }));
  await startCliInPane(term, tmp.dir, []);
  return term;
}

test("waiting for a PostgreSQL port that never answers: the terminal says what it waits for, then why it gave up", async () => {
  const sockets: net.Socket[] = [];
  const silent = net.createServer((socket) => sockets.push(socket));
  await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
  const port = (silent.address() as net.AddressInfo).port;
  try {
    const t = await startSession({
      MINI_CURSOR_CHECKPOINTER: `postgres://me:secret@127.0.0.1:${port}/mc`,
      MINI_CURSOR_WAIT_NOTICE_MS: "300",
    });
    const masked = `postgres://me:[redacted]@127.0.0.1:${port}/mc`;
    await t.waitForScreen(
      (s) => s.includes(`Waiting for the PostgreSQL database at ${masked} to answer (at most 10 s)…`),
      "the wait's text",
    );
    const screen = await t.waitForScreen(
      (s) => s.includes(`The PostgreSQL database at ${masked} did not answer within 10 s of connecting.`),
      "the reason it gave up",
      60_000,
    );
    expect(screen).not.toContain("secret");
    expect(await paneExitCode(tmp!.dir)).toBe("EXITED:1");
  } finally {
    for (const s of sockets) s.destroy();
    await new Promise((resolve) => silent.close(resolve));
  }
});

const withPostgres = POSTGRES_URL ? describe : describe.skip;

withPostgres("a lost lock in an interactive session", () => {
  test("the turn stops naming the lost lock, the session stays, and the next turn retakes the thread", async () => {
    cluster = startOwnCluster();
    provider = await startOpenAIServer([
      { content: "This answer is streamed and then stalls forever here", stallAfterChunks: 2 },
      { content: "Second answer." },
    ]);
    const t = await startSession({
      OPENAI_BASE_URL: provider.url,
      OPENAI_API_KEY: "test",
      MINI_CURSOR_CHECKPOINTER: cluster.url,
    });
    await t.waitForScreen(atPrompt, "the first prompt", 60_000);
    await t.type("FIRST");
    await t.press("Enter");
    await waitFor(() => provider!.requests.length === 1, 60_000, 50);
    cluster.restart();
    await t.waitForScreen(
      (s) => atPrompt(s) && s.includes("Lost the lock on thread ") && s.includes(`at ${cluster!.url} ended`),
      "the lost lock and the prompt again",
      60_000,
    );
    await t.type("SECOND");
    await t.press("Enter");
    await t.waitForScreen((s) => atPrompt(s) && s.includes("Second answer."), "the second turn's answer", 60_000);
    expect(provider.requests).toHaveLength(2);
    const sent = provider.requests[1]!.messages;
    // The first turn's streamed half was not saved: the thread holds its question only.
    expect(sent.filter((m) => m.role === "user").map((m) => m.content)).toEqual(["FIRST", "SECOND"]);
    expect(sent.slice(1).map((m) => m.role)).toEqual(["user", "user"]);
    await t.press("C-d");
    expect(await paneExitCode(tmp!.dir)).toBe("EXITED:0");
  });
});
