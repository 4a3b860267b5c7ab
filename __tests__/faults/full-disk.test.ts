import { afterEach, describe, expect, jest, test } from "@jest/globals";
import { spawnSync } from "node:child_process";
import { appendFileSync, existsSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import path from "node:path";
import type { ScriptStep } from "../helpers/openai-server.js";
import { bannerThread, expectValidConversation, openFixture, toolResults, userTexts, type Fixture } from "./harness.js";

/**
 * A full disk during a step is named as a full disk, with the file it could not write and the
 * folder to look at, never as the model provider and never as `df -h .`; once space is freed the
 * thread goes on, telling the model what ran, and --undo takes back what did. The disks are small
 * tmpfs mounts, so these run as root only.
 */

jest.setTimeout(300_000);

const asRoot = process.getuid?.() === 0;
if (!asRoot) process.stderr.write("full-disk tests skipped: mounting a small tmpfs needs root.\n");

/** Fills the file system `folder` is on, with one file there (returned, to remove). */
function fill(folder: string): string {
  const filler = path.join(folder, "filler");
  const block = Buffer.alloc(16 * 1024);
  try {
    for (;;) appendFileSync(filler, block);
  } catch {
    // full
  }
  // What the last block left: a few bytes at a time.
  try {
    for (;;) appendFileSync(filler, "x");
  } catch {
    // full to the byte
  }
  return filler;
}

const said = (r: { stdout: string; stderr: string }) => r.stdout + r.stderr;

describe("a full disk", () => {
  let fx: Fixture | undefined;
  const mounts: string[] = [];
  afterEach(async () => {
    for (const dir of mounts.splice(0).reverse()) spawnSync("umount", ["-l", dir]);
    await fx?.close();
    fx = undefined;
  });

  const mount = (dir: string, size: string) => {
    mkdirSync(dir, { recursive: true });
    expect(spawnSync("mount", ["-t", "tmpfs", "-o", `size=${size},mode=700`, "tmpfs", dir]).status).toBe(0);
    mounts.push(dir);
  };

  (asRoot ? test : test.skip)(
    "where the tool journal is written: named as the journal's disk, the calls not run, and the next run says so",
    async () => {
      const write: ScriptStep = { toolCalls: [{ name: "write_file", args: { filePath: "a.txt", content: "one\n" } }] };
      fx = await openFixture("sqlite", (_request, index) => {
        if (index === 0) return { content: "first" };
        if (index === 1) return write;
        return { content: `answer ${index}` };
      });
      const r1 = await fx.run(["FIRST"]);
      expect(r1.code).toBe(0);
      const thread = bannerThread(r1.stdout);
      // Only the journal's folder is on the small disk, and it is full: the checkpoints still save.
      const journal = path.join(fx.stateFolder, "journal");
      mount(journal, "64k");
      const filler = fill(journal);

      const r2 = await fx.run(["--thread", thread, "SECOND"]);
      expect(r2.code).toBe(1);
      expect(r2.stdout).toContain(
        `✗ The disk is full: mini-cursor cannot save to ${path.join(journal, `${thread}.json`)} (ENOSPC). ` +
          `The thread is kept up to its last saved step; the step in flight was not saved. Free some space where ${journal} lives (df -h ${journal}) and run again to continue the thread.`,
      );
      expect(said(r2)).not.toMatch(/model provider|df -h \.|Could not reach/);
      expect(existsSync(path.join(fx.workspace, "a.txt"))).toBe(false);
      // No half-written temporary file is left.
      expect(readdirSync(journal).sort()).toEqual(["filler"]);

      rmSync(filler);
      const r3 = await fx.run(["--thread", thread, "THIRD"]);
      expect(r3.stderr).toBe("");
      expect(r3.code).toBe(0);
      const sent = fx.server.requests.at(-1)!.messages;
      expectValidConversation(sent);
      expect(userTexts(sent)).toEqual(["FIRST", "SECOND", "THIRD"]);
      // The call never started: the model is told so, not that it ran.
      expect(toolResults(sent)).toEqual([expect.stringMatching(/not run|never started|did not start/i)]);
      expect(existsSync(path.join(fx.workspace, "a.txt"))).toBe(false);

      // --undo: the third turn, then the second (nothing of it on disk), then the first.
      for (let i = 0; i < 3; i++) expect((await fx.run(["--thread", thread, "--undo"])).code).toBe(0);
      expect((await fx.run(["--thread", thread, "--undo"])).code).toBe(1);
    },
  );

  (asRoot ? test : test.skip)(
    "where the whole state home is: every sentence names a file in the state folder and its folder, and the thread goes on",
    async () => {
      let stateHome = "";
      let filler = "";
      const write: ScriptStep = { toolCalls: [{ name: "write_file", args: { filePath: "a.txt", content: "one\n" } }] };
      fx = await openFixture("sqlite", (_request, index) => {
        if (index === 0) return write;
        if (index === 1) filler = fill(stateHome);
        return { content: `answer ${index}` };
      });
      stateHome = path.dirname(path.dirname(fx.stateFolder));
      mount(stateHome, "1m");
      const r1 = await fx.run(["FIRST"]);
      expect(r1.code).toBe(1);
      const thread = bannerThread(r1.stdout);
      const sentences = said(r1).match(/The disk is full: mini-cursor cannot save to \S+ \([A-Z_]+\)\.[^\n]*/g) ?? [];
      expect(sentences.length).toBeGreaterThan(0);
      for (const sentence of sentences) {
        const file = /cannot save to (\S+) \(/.exec(sentence)![1]!;
        expect(file.startsWith(`${fx.stateFolder}/`)).toBe(true);
        expect(sentence).toContain(`Free some space where ${path.dirname(file)} lives (df -h ${path.dirname(file)})`);
      }
      expect(said(r1)).not.toMatch(/model provider|df -h \.|Could not reach/);

      rmSync(filler);
      const r2 = await fx.run(["--thread", thread, "SECOND"]);
      expect(r2.stderr).toBe("");
      expect(r2.code).toBe(0);
      const sent = fx.server.requests.at(-1)!.messages;
      expectValidConversation(sent);
      expect(userTexts(sent)).toEqual(["FIRST", "SECOND"]);
      expect(toolResults(sent)).toEqual([expect.stringMatching(/^Created a\.txt/)]);
      // --undo: the second turn, then the first (a.txt goes).
      expect((await fx.run(["--thread", thread, "--undo"])).code).toBe(0);
      const undo = await fx.run(["--thread", thread, "--undo"]);
      expect(undo.code).toBe(0);
      expect(undo.stdout).toContain("removed    a.txt");
      expect(existsSync(path.join(fx.workspace, "a.txt"))).toBe(false);
    },
  );
});
