import { afterEach, expect, jest, test } from "@jest/globals";
import { readFileSync, statSync } from "node:fs";
import path from "node:path";
import { bannerThread, expectValidConversation, openFixture, toolResults, type Fixture } from "./harness.js";

/**
 * A command that prints 200 MB: the terminal trace shows its first lines, a count of the rest and
 * its last lines, and where the whole is (a few kilobytes, where it echoed all 240 MB); the model's
 * result is bounded as before, and the saved file holds every byte.
 */

jest.setTimeout(300_000);

const LINE = "0123456789012345678901234567890123456789012345678";
const BYTES = 200_000_000;
const COMMAND = `yes ${LINE} | head -c ${BYTES}; echo; echo THE-END`;

let fx: Fixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

test("a 200 MB command output: a bounded trace naming the saved whole; the next conversation and --undo as usual", async () => {
  fx = await openFixture("sqlite", [
    { toolCalls: [{ name: "execute_command", args: { command: COMMAND } }] },
    { content: "printed" },
    { content: "second" },
  ]);
  const r1 = await fx.run(["FIRST"]);
  expect(r1.stderr).toBe("");
  expect(r1.code).toBe(0);
  expect(r1.stdout.length).toBeLessThan(20_000);
  const saved = /… the whole output is saved in (\S+)\n/.exec(r1.stdout)?.[1];
  expect(saved?.startsWith(path.join(fx.stateFolder, "output", "command-"))).toBe(true);
  expect(statSync(saved!).size).toBe(BYTES + "\nTHE-END\n".length);
  expect(r1.stdout).toContain("  │ … more output, not shown here: its last lines follow when the call ends\n");
  expect(r1.stdout).toMatch(/ {2}│ … 3,99\d,\d{3} more lines \(190\.\d MB\) not shown; the last 10:\n/);
  expect(r1.stdout).toContain(`  │ ${LINE}\n  │ \n  │ THE-END\n  │ … the whole output is saved in ${saved}\n`);

  // The model's result was bounded and named the same file; the thread goes on.
  const r2 = await fx.run(["--thread", bannerThread(r1.stdout), "SECOND"]);
  expect(r2.code).toBe(0);
  const sent = fx.server.requests.at(-1)!.messages;
  expectValidConversation(sent);
  const [result] = toolResults(sent);
  expect(result!.length).toBeLessThan(31_000);
  // That result may since have been moved out of the conversation, to a file the model can read.
  const movedTo = /The full text is in (\S+); read it with read_file/.exec(result!)?.[1];
  const whole = movedTo ? readFileSync(movedTo, "utf8") : result!;
  expect(whole.length).toBeLessThan(31_000);
  expect(whole).toContain(`saved to ${saved}; page through it with read_file.]`);
  expect((await fx.run(["--thread", bannerThread(r1.stdout), "--undo"])).code).toBe(0);
});
