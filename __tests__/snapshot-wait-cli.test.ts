import { afterEach, expect, jest, test } from "@jest/globals";
import { readFileSync } from "node:fs";
import path from "node:path";
import type { ScriptStep } from "./helpers/openai-server.js";
import { openFixture, type Fixture } from "./faults/harness.js";

/**
 * Issue 30, goal 3: undo is never silently off. A command step waits for the workspace's first
 * snapshot at most MINI_CURSOR_SNAPSHOT_WAIT_MS (0 here, so it is never ready in time); the
 * trace says so, in --json and on the terminal, and undo of that turn explains why it cannot.
 */

jest.setTimeout(180_000);

let fx: Fixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

const command = (file: string): ScriptStep => ({
  toolCalls: [{ name: "execute_command", args: { command: `echo made > ${file}` } }],
});
const NOTICE =
  "Workspace snapshot not taken in time: the workspace's first snapshot is still being taken after 0 s, so this step runs without one and /undo cannot bring back the files it changes. Steps after it are recorded once that snapshot is done (MINI_CURSOR_SNAPSHOT_WAIT_MS sets the wait).";

test("a command step whose snapshot is not ready in time says so, and its undo explains", async () => {
  fx = await openFixture("sqlite", [command("c.txt"), { content: "done" }, command("d.txt"), { content: "done" }]);
  const noWait = { MINI_CURSOR_SNAPSHOT_WAIT_MS: "0" };
  const r1 = await fx.run(["--json", "FIRST"], noWait);
  expect(r1.code).toBe(0);
  const events = r1.stdout
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as { type: string; message?: string; threadId?: string });
  const notices = events.filter((e) => e.type === "notice").map((e) => e.message);
  expect(notices).toEqual([NOTICE]);
  expect(readFileSync(path.join(fx.workspace, "c.txt"), "utf8")).toBe("made\n");

  const thread = events.find((e) => e.type === "run_start")!.threadId!;
  const undo = await fx.run(["--thread", thread, "--undo"]);
  expect(undo.stdout.trim()).toBe(
    "The files of turn 1 were not recorded (the snapshot failed: it was not taken in time: the workspace's first snapshot was still being taken after 0 s (MINI_CURSOR_SNAPSHOT_WAIT_MS)), so they cannot be brought back; nothing was changed.",
  );
  expect(undo.code).toBe(1);
  expect(readFileSync(path.join(fx.workspace, "c.txt"), "utf8")).toBe("made\n");

  // The terminal trace says the same.
  const r2 = await fx.run(["SECOND"], noWait);
  expect(r2.code).toBe(0);
  expect(r2.stdout.replace(/\s+/g, " ")).toContain(NOTICE);
});
