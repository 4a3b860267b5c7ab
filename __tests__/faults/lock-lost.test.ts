import { afterEach, describe, expect, jest, test } from "@jest/globals";
import { readFileSync } from "node:fs";
import path from "node:path";
import { POSTGRES_URL, startOwnCluster, type OwnCluster } from "../helpers/postgres.js";
import {
  bannerThread,
  openFixture,
  resumeSecond,
  roles,
  toolResults,
  userTexts,
  waitOnRun,
  type Fixture,
} from "./harness.js";

/**
 * The PostgreSQL advisory lock that makes a process the thread's one writer dies with its
 * connection. When the server restarts while a run waits for the model mid-stream, the run
 * must notice, stop with a sentence saying so, and write nothing more; the thread then
 * continues validly, agreeing with the disk. A cluster of the test's own, since it restarts.
 */

jest.setTimeout(300_000);

const withPostgres = POSTGRES_URL ? describe : describe.skip;

withPostgres("the thread's lock is lost (PostgreSQL restarts mid-run)", () => {
  let fx: Fixture | undefined;
  let cluster: OwnCluster | undefined;
  afterEach(async () => {
    await fx?.close();
    fx = undefined;
    cluster?.stop();
    cluster = undefined;
  });

  test.each(["graph", "loop"])(
    "%s: the run stops naming the lost lock, and the next conversation is valid and matches the disk",
    async (engine) => {
      cluster = startOwnCluster();
      fx = await openFixture("sqlite", [
        { toolCalls: [{ name: "write_file", args: { filePath: "a.txt", content: "one\n" } }] },
        { content: "This answer is streamed and then stalls forever here", stallAfterChunks: 2 },
        { content: "ok" },
      ]);
      const env = { MINI_CURSOR_CHECKPOINTER: cluster.url };
      const run1 = fx.start(["--engine", engine, "FIRST"], env);
      // The second model request is the one that stalls: the write is saved, the answer is not.
      await waitOnRun(run1, () => fx!.server.requests.length === 2);
      cluster.restart();
      const r1 = await run1.done;
      expect(r1.code).toBe(1);
      const thread = bannerThread(r1.stdout);
      expect(r1.stdout).toContain(
        `Lost the lock on thread ${thread}: its connection to the PostgreSQL database at ${cluster.url} ended`,
      );
      expect(r1.stdout).toContain(`continue with --thread ${thread}.`);
      // Only the server's restart ended the run: the stalled answer never came.
      expect(fx.server.requests).toHaveLength(2);

      const { next } = await resumeSecond(fx, r1, ["--engine", engine], env);
      expect(userTexts(next)).toEqual(["FIRST", "SECOND"]);
      expect(roles(next)).toEqual(["system", "user", "assistant", "tool", "user"]);
      expect(readFileSync(path.join(fx.workspace, "a.txt"), "utf8")).toBe("one\n");
      expect(toolResults(next)[0]).toContain("a.txt");
      expect(toolResults(next)[0]).not.toMatch(/not run|interrupted/);
    },
  );
});
