import { afterEach, expect, jest, test } from "@jest/globals";
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { ScriptStep } from "../helpers/openai-server.js";
import { MAX_SNAPSHOT_FILE_BYTES } from "../../src/snapshots/store.js";
import { UNHELD } from "../../src/agent/snapshot-step.js";
import { openFixture, type Fixture } from "./harness.js";

/**
 * Issue 44 item 1: undo never reports success while a file it should restore is gone. A command
 * that deletes a file whose name is not UTF-8 is undone byte for byte; a file over the snapshot
 * limit that a command changes or deletes is named by the step and by undo, which refuses to say
 * it undid the turn unless told to go on (--force), and then names what it could not bring back;
 * so is a file or folder a command deletes by name that no snapshot holds (ignored, an empty folder).
 */

jest.setTimeout(300_000);

let fx: Fixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

const command = (line: string): ScriptStep => ({ toolCalls: [{ name: "execute_command", args: { command: line } }] });

test("a command deletes a file whose name is not UTF-8: undo recreates it, with its bytes, beside the others", async () => {
  fx = await openFixture("sqlite", [command("sh del.sh"), { content: "done" }]);
  const odd = Buffer.concat([Buffer.from(`${fx.workspace}/x`), Buffer.from([0xff]), Buffer.from(".txt")]);
  // printf makes the name: `x`, the byte 0xff (no UTF-8 sequence starts with it), `.txt`.
  writeFileSync(path.join(fx.workspace, "del.sh"), `rm a.txt "$(printf 'x\\377.txt')"\n`);
  writeFileSync(path.join(fx.workspace, "a.txt"), "a\n");
  writeFileSync(odd, Buffer.from([0, 1, 2, 0xfe]));
  const run = await fx.run(["--thread", "t", "GO"]);
  expect([run.code, existsSync(odd), existsSync(path.join(fx.workspace, "a.txt"))]).toEqual([0, false, false]);
  const undo = await fx.run(["--thread", "t", "--undo"]);
  expect([undo.code, undo.stdout.trim(), undo.stderr]).toEqual([
    0,
    "Undid turn 1: GO\nFiles (2):\n  recreated  a.txt\n  recreated  x\uFFFD.txt",
    "",
  ]);
  expect(readFileSync(odd)).toEqual(Buffer.from([0, 1, 2, 0xfe]));
  expect(readFileSync(path.join(fx.workspace, "a.txt"), "utf8")).toBe("a\n");
  expect(readdirSync(fx.workspace, { encoding: "buffer" }).length).toBe(3);
});

test.each([
  ["changes", "echo more >> big.log && echo b > b.txt"],
  ["deletes", "rm big.log && echo b > b.txt"],
])(
  "a command %s a file already over the snapshot limit: the step and undo name it; --force undoes the rest",
  async (_, line) => {
    fx = await openFixture("sqlite", [command(line), { content: "done" }]);
    const big = path.join(fx.workspace, "big.log");
    writeFileSync(big, Buffer.alloc(MAX_SNAPSHOT_FILE_BYTES + 1, "x"));
    appendFileSync(big, "end\n");
    const run = await fx.run(["--thread", "t", "GO"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(
      "Not recorded for /undo (over 10 MB, the snapshot limit): big.log. Undoing this step leaves it as it is.",
    );
    const refused = await fx.run(["--thread", "t", "--undo"]);
    expect([refused.code, refused.stdout.trim()]).toEqual([
      1,
      `These files changed in turn 1 but were not recorded (over 10 MB, the snapshot limit; or ${UNHELD}), so undoing it cannot bring them back:\n  big.log\nNothing was changed. To undo the rest anyway, run the same command with --force.`,
    ]);
    expect(existsSync(path.join(fx.workspace, "b.txt"))).toBe(true);
    const forced = await fx.run(["--thread", "t", "--undo", "--force"]);
    expect([forced.code, forced.stdout.trim()]).toEqual([
      0,
      `Undid turn 1: GO\nFiles (1):\n  removed    b.txt\nNot brought back (never recorded: over the snapshot limit, or ${UNHELD}):\n  big.log`,
    ]);
    expect(existsSync(path.join(fx.workspace, "b.txt"))).toBe(false);
    rmSync(big, { force: true });
  },
);

test("a command deletes by name what no snapshot holds (an ignored file and folder, an empty folder): the step and undo name them", async () => {
  fx = await openFixture("sqlite", [command("rm -rf .env node_modules/ empty k.txt"), { content: "done" }]);
  const ws = (name: string) => path.join(fx!.workspace, name);
  writeFileSync(ws(".gitignore"), ".env\nnode_modules/\n");
  writeFileSync(ws(".env"), "SECRET=1\n");
  mkdirSync(ws("node_modules/a"), { recursive: true });
  writeFileSync(ws("node_modules/a/b.js"), "b\n");
  mkdirSync(ws("empty"));
  writeFileSync(ws("k.txt"), "keep\n");
  const run = await fx.run(["--thread", "t", "GO"]);
  expect(run.code).toBe(0);
  expect(run.stdout).toContain(
    `Not recorded for /undo (${UNHELD}): .env, node_modules, empty. Undoing this step leaves them deleted.`,
  );
  const refused = await fx.run(["--thread", "t", "--undo"]);
  expect([refused.code, refused.stdout.trim()]).toEqual([
    1,
    `These files changed in turn 1 but were not recorded (over 10 MB, the snapshot limit; or ${UNHELD}), so undoing it cannot bring them back:\n  .env\n  node_modules\n  empty\nNothing was changed. To undo the rest anyway, run the same command with --force.`,
  ]);
  const forced = await fx.run(["--thread", "t", "--undo", "--force"]);
  expect([forced.code, forced.stdout.trim()]).toEqual([
    0,
    `Undid turn 1: GO\nFiles (1):\n  recreated  k.txt\nNot brought back (never recorded: over the snapshot limit, or ${UNHELD}):\n  .env\n  node_modules\n  empty`,
  ]);
  expect(readdirSync(fx.workspace).sort()).toEqual([".gitignore", "k.txt"]);
});

test("git init in a subfolder (no commit yet) does not stop snapshots: the next step's undo works, the nested repository is left", async () => {
  const write = { toolCalls: [{ name: "write_file", args: { filePath: "b.txt", content: "b\n" } }] };
  fx = await openFixture("sqlite", [
    command("mkdir app && cd app && git init -q && echo x > f.txt"),
    write,
    { content: "done" },
  ]);
  const run = await fx.run(["--thread", "t", "GO"]);
  expect([run.code, run.stdout.includes("snapshots failed")]).toEqual([0, false]);
  const undo = await fx.run(["--thread", "t", "--undo"]);
  expect([undo.code, undo.stdout.trim()]).toEqual([0, "Undid turn 1: GO\nFiles (1):\n  removed    b.txt"]);
  expect(existsSync(path.join(fx.workspace, "b.txt"))).toBe(false);
  expect(readFileSync(path.join(fx.workspace, "app", "f.txt"), "utf8")).toBe("x\n");
});

test("what a command deleted unheld and is back by the undo (npm ci made node_modules again) is not named as lost", async () => {
  fx = await openFixture("sqlite", [command("rm -rf node_modules k.txt"), { content: "done" }]);
  const ws = (name: string) => path.join(fx!.workspace, name);
  writeFileSync(ws(".gitignore"), "node_modules/\n");
  mkdirSync(ws("node_modules"));
  writeFileSync(ws("k.txt"), "keep\n");
  const run = await fx.run(["--thread", "t", "GO"]);
  expect(run.stdout).toContain(
    `Not recorded for /undo (${UNHELD}): node_modules. Undoing this step leaves it deleted.`,
  );
  mkdirSync(ws("node_modules"));
  const undo = await fx.run(["--thread", "t", "--undo"]);
  expect([undo.code, undo.stdout.trim()]).toEqual([0, "Undid turn 1: GO\nFiles (1):\n  recreated  k.txt"]);
});
