import { afterEach, describe, expect, jest, test } from "@jest/globals";
import { readFileSync } from "node:fs";
import path from "node:path";
import { SAVERS } from "../helpers/postgres.js";
import { openFixture, resumeSecond, roles, toolResults, userTexts, type Fixture } from "./harness.js";

/**
 * A provider that accepts the connection and sends nothing, or stalls in the middle of its
 * answer, is reported after MINI_CURSOR_TIMEOUT_MS with the sentence that says which; the
 * thread it leaves continues as a valid conversation that agrees with the disk.
 */

jest.setTimeout(240_000);

/** Short, so the test does not sit through the default minute; the sentence names it. */
const LIMIT_MS = 3_000;
const limit = { MINI_CURSOR_TIMEOUT_MS: String(LIMIT_MS) };

describe.each(SAVERS)("a silent or stalled provider (%s)", (saver) => {
  let fx: Fixture | undefined;
  afterEach(async () => {
    await fx?.close();
    fx = undefined;
  });

  test.each(["graph", "loop"])(
    "silent from the start (%s): reported, and the request stays in the thread",
    async (engine) => {
      fx = await openFixture(saver, [{ silent: true }, { content: "ok" }]);
      const r1 = await fx.run(["--engine", engine, "FIRST"], limit);
      expect(r1.code).toBe(1);
      expect(r1.stdout).toContain(
        `The model provider at ${fx.server.url} accepted the connection but sent no response for 3 s (the limit, MINI_CURSOR_TIMEOUT_MS=${LIMIT_MS})`,
      );
      // Silence is not retried.
      expect(fx.server.requests).toHaveLength(1);
      const { next } = await resumeSecond(fx, r1, ["--engine", engine]);
      expect(userTexts(next)).toEqual(["FIRST", "SECOND"]);
      expect(roles(next)).toEqual(["system", "user", "user"]);
    },
  );

  test.each(["graph", "loop"])(
    "stalled mid-stream after a write (%s): reported; the write's result is in the thread and on disk",
    async (engine) => {
      fx = await openFixture(saver, [
        { toolCalls: [{ name: "write_file", args: { filePath: "a.txt", content: "one\n" } }] },
        { content: "This answer is streamed and then stalls forever here", stallAfterChunks: 2 },
        { content: "ok" },
      ]);
      const r1 = await fx.run(["--engine", engine, "FIRST"], limit);
      expect(r1.code).toBe(1);
      expect(r1.stdout).toContain(
        `The model provider at ${fx.server.url} stopped sending in the middle of the response for 3 s (the limit, MINI_CURSOR_TIMEOUT_MS=${LIMIT_MS})`,
      );
      expect(fx.server.requests).toHaveLength(2);
      const { next } = await resumeSecond(fx, r1, ["--engine", engine]);
      expect(userTexts(next)).toEqual(["FIRST", "SECOND"]);
      // The half-streamed answer is not in the thread; the step before it is, as the disk has it.
      expect(roles(next)).toEqual(["system", "user", "assistant", "tool", "user"]);
      expect(readFileSync(path.join(fx.workspace, "a.txt"), "utf8")).toBe("one\n");
      const [result] = toolResults(next);
      expect(result).toContain("a.txt");
      expect(result).not.toMatch(/not run|interrupted/);
    },
  );
});
