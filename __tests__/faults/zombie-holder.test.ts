import { afterEach, describe, expect, jest, test } from "@jest/globals";
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { procStat } from "../../src/process-life.js";
import { shellQuote } from "../../src/shell-quote.js";
import { PROJECT_ROOT, TSX_LOADER } from "../helpers/cli.js";
import type { ScriptStep } from "../helpers/openai-server.js";
import { waitFor } from "../helpers/tmp.js";
import {
  expectValidConversation,
  openFixture,
  RUN_STATE_DEADLINE_MS,
  toolResults,
  userTexts,
  type Fixture,
} from "./harness.js";

/**
 * A thread's holder that has exited but was not reaped (a zombie) holds nothing: its record lock
 * went with its descriptors, and its pid and start time, still in /proc, must not be read as a
 * live holder. The holder here is the real CLI started by a parent that never waits for it
 * (`sleep`, exec'd in place of the shell that started it in the background), SIGKILLed mid-run.
 */

jest.setTimeout(240_000);

const THREAD = "held";

describe("a zombie holder", () => {
  let fx: Fixture | undefined;
  let parent: ChildProcess | undefined;
  afterEach(async () => {
    // The zombie goes once its parent is gone (its new parent reaps it).
    parent?.kill("SIGKILL");
    parent?.stdout?.destroy();
    parent = undefined;
    await fx?.close();
    fx = undefined;
  });

  (process.platform === "linux" ? test : test.skip)(
    "does not hold the thread: the next run continues it at once, with its saved step, and --undo takes that step back",
    async () => {
      const write: ScriptStep = { toolCalls: [{ name: "write_file", args: { filePath: "a.txt", content: "one\n" } }] };
      fx = await openFixture("sqlite", (_request, index) =>
        index === 0 ? write : index === 1 ? { silent: true } : { content: `answer ${index}` },
      );
      const log = path.join(fx.workspace, "..", "holder.log");
      const cli = ["node", "--import", TSX_LOADER, path.join(PROJECT_ROOT, "src", "cli.ts")]
        .concat(["--workspace", fx.workspace, "--approval", "full-auto", "--thread", THREAD, "FIRST"])
        .map(shellQuote)
        .join(" ");
      parent = spawn("sh", ["-c", `${cli} >${shellQuote(log)} 2>&1 & echo $!; exec sleep 600`], {
        env: fx.env(),
        stdio: ["ignore", "pipe", "ignore"],
      });
      let out = "";
      parent.stdout!.on("data", (d: Buffer) => (out += d.toString()));
      const holder = Number(await waitFor(() => /^(\d+)\n/.exec(out)?.[1], 30_000));
      // The write step is saved and the next model request waits for an answer that never comes.
      await waitFor(() => fx!.server.requests.length === 2, RUN_STATE_DEADLINE_MS, 50).catch((err: Error) => {
        throw new Error(`${err.message}; holder output:\n${existsSync(log) ? readFileSync(log, "utf8") : ""}`);
      });
      process.kill(holder, "SIGKILL");
      await waitFor(() => procStat(holder)?.state === "Z", 30_000);
      // What the old check read as a live holder: the holder file naming it, its pid still in /proc.
      const holderFile = path.join(fx.stateFolder, "locks", `${THREAD}.holder.json`);
      expect(JSON.parse(readFileSync(holderFile, "utf8")).pid).toBe(holder);

      const r2 = await fx.run(["--thread", THREAD, "SECOND"]);
      expect(r2.stderr).toBe("");
      expect(r2.code).toBe(0);
      expect(r2.stdout).toContain("answer 2");
      const sent = fx.server.requests.at(-1)!.messages;
      expectValidConversation(sent);
      expect(userTexts(sent)).toEqual(["FIRST", "SECOND"]);
      expect(toolResults(sent)).toEqual([expect.stringMatching(/^Created a\.txt/)]);
      expect(procStat(holder)?.state).toBe("Z");

      // Undo tells the same truth: the second turn changed nothing, the first made a.txt.
      const undoSecond = await fx.run(["--thread", THREAD, "--undo"]);
      expect(undoSecond.code).toBe(0);
      const undoFirst = await fx.run(["--thread", THREAD, "--undo"]);
      expect(undoFirst.code).toBe(0);
      expect(undoFirst.stdout).toContain("removed    a.txt");
      expect(existsSync(path.join(fx.workspace, "a.txt"))).toBe(false);
    },
  );
});
