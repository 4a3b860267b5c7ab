import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { jest } from "@jest/globals";
import { baseEnv, runCli } from "./helpers/cli.js";
import { startOpenAIServer, type OpenAIServer, type ScriptStep } from "./helpers/openai-server.js";
import { makeTempDir } from "./helpers/tmp.js";

/**
 * No edit is ever lost, and write_file never overwrites unseen content (issue 28 items 1 and 3),
 * through the real CLI, both engines, and the scripted OpenAI-compatible server: the files
 * afterwards, and the exact tool results the model is sent.
 */

jest.setTimeout(180_000);

let tmp: ReturnType<typeof makeTempDir>;
let server: OpenAIServer | undefined;
beforeEach(() => {
  tmp = makeTempDir();
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  tmp.cleanup();
});

const file = (name: string) => readFileSync(path.join(tmp.dir, name), "utf8");

/** Runs the CLI on `script`; returns the tool results of each request, as the model got them. */
async function run(engine: string, script: ScriptStep[], env: NodeJS.ProcessEnv = {}) {
  server = await startOpenAIServer([...script, { content: "Done." }]);
  const r = await runCli(
    ["--workspace", tmp.dir, "--engine", engine, "--approval", "full-auto", "--sandbox", "off", "--json", "edit"],
    {
      env: baseEnv({ OPENAI_BASE_URL: server.url, OPENAI_API_KEY: "sk-test", ...env }),
      timeoutMs: 150_000,
    },
  );
  expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
  // The results sent with the request after each step, in call order.
  return server.requests.slice(1).map((req) => {
    const last = req.messages.map((m) => m.role).lastIndexOf("assistant");
    return req.messages.slice(last + 1).map((m) => String(m.content));
  });
}

const read = (filePath: string) => ({ name: "read_file", args: { filePath } });
const edit = (filePath: string, oldString: string, newString: string) => ({
  name: "edit_file",
  args: { filePath, oldString, newString },
});
const patch = (filePath: string, from: string, to: string) => ({
  name: "apply_patch",
  args: { input: `*** Begin Patch\n*** Update File: ${filePath}\n@@\n-${from}\n+${to}\n*** End Patch` },
});

const FIVE = "alpha\nbeta\ngamma\ndelta\nepsilon\n";
const READ_FIVE =
  "     1\talpha\n     2\tbeta\n     3\tgamma\n     4\tdelta\n     5\tepsilon\n\n[Lines 1-5 of 5, end of file.]";

/** edit_file's result for replacing line `n` of the five lines with `text`. */
function edited(lines: string[], n: number): string {
  const from = Math.max(1, n - 3);
  const to = Math.min(lines.length, n + 3);
  const shown = lines.slice(from - 1, to).map((l, i) => `${String(from + i).padStart(6)}\t${l}`);
  return `Edited f.txt: replaced 1 occurrence (exact match).\n${shown.join("\n")}`;
}

describe.each(["graph", "loop"])("%s engine", (engine) => {
  test("two edit_file calls to one file in one turn: both are kept, each result shows its own change", async () => {
    writeFileSync(path.join(tmp.dir, "f.txt"), FIVE);
    const results = await run(engine, [
      { toolCalls: [read("f.txt")] },
      { toolCalls: [edit("f.txt", "alpha", "ALPHA"), edit("f.txt", "epsilon", "EPSILON")] },
    ]);
    expect(file("f.txt")).toBe("ALPHA\nbeta\ngamma\ndelta\nEPSILON\n");
    expect(results).toEqual([
      [READ_FIVE],
      [
        edited(["ALPHA", "beta", "gamma", "delta", "epsilon"], 1),
        edited(["ALPHA", "beta", "gamma", "delta", "EPSILON"], 5),
      ],
    ]);
  });

  test("three edit_file calls to one file in one turn run in the model's order", async () => {
    writeFileSync(path.join(tmp.dir, "f.txt"), FIVE);
    const results = await run(engine, [
      { toolCalls: [read("f.txt")] },
      {
        toolCalls: [
          edit("f.txt", "beta", "BETA"),
          // Matches only after the first edit: it must run second.
          edit("f.txt", "BETA\ngamma", "BETA\nGAMMA"),
          edit("f.txt", "delta", "DELTA"),
        ],
      },
    ]);
    expect(file("f.txt")).toBe("alpha\nBETA\nGAMMA\nDELTA\nepsilon\n");
    expect(results[1]).toEqual([
      edited(["alpha", "BETA", "gamma", "delta", "epsilon"], 2),
      edited(["alpha", "BETA", "GAMMA", "delta", "epsilon"], 2),
      edited(["alpha", "BETA", "GAMMA", "DELTA", "epsilon"], 4),
    ]);
  });

  test("apply_patch and edit_file on one file in one turn: all three changes are kept", async () => {
    writeFileSync(path.join(tmp.dir, "f.txt"), FIVE);
    const results = await run(
      engine,
      [
        { toolCalls: [read("f.txt")] },
        {
          toolCalls: [
            patch("f.txt", "alpha", "ALPHA"),
            patch("f.txt", "gamma", "GAMMA"),
            edit("f.txt", "epsilon", "EPSILON"),
          ],
        },
      ],
      { MINI_CURSOR_EDIT_TOOL: "both" },
    );
    expect(file("f.txt")).toBe("ALPHA\nbeta\nGAMMA\ndelta\nEPSILON\n");
    expect(results[1]).toEqual([
      "Applied the patch to 1 file:\nM f.txt (1 hunk)",
      "Applied the patch to 1 file:\nM f.txt (1 hunk)",
      edited(["ALPHA", "beta", "GAMMA", "delta", "EPSILON"], 5),
    ]);
  });

  test("a thread continued in a new process reads a file again before write_file replaces it", async () => {
    writeFileSync(path.join(tmp.dir, "notes.txt"), "v1\n");
    const turn = async (script: ScriptStep[]) => {
      server = await startOpenAIServer([...script, { content: "Done." }]);
      const args = ["--workspace", tmp.dir, "--engine", engine, "--approval", "full-auto", "--sandbox", "off"];
      const r = await runCli([...args, "--thread", "restart", "--json", "go"], {
        env: baseEnv({ OPENAI_BASE_URL: server.url, OPENAI_API_KEY: "sk-test" }),
        timeoutMs: 150_000,
      });
      expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
      const results = server.requests.slice(1).map((req) => {
        const last = req.messages.map((m) => m.role).lastIndexOf("assistant");
        return req.messages.slice(last + 1).map((m) => String(m.content));
      });
      await server.close();
      server = undefined;
      return results;
    };
    expect(await turn([{ toolCalls: [read("notes.txt")] }])).toEqual([
      ["     1\tv1\n\n[Lines 1-1 of 1, end of file.]"],
    ]);
    // A new process: what the first one read is not remembered, and the refusal says to read it first.
    const write = { name: "write_file", args: { filePath: "notes.txt", content: "v2\n" } };
    expect(await turn([{ toolCalls: [write] }, { toolCalls: [read("notes.txt")] }, { toolCalls: [write] }])).toEqual([
      [
        "Error: notes.txt already exists and has not been read in this conversation since mini-cursor started (what was read before a restart is not remembered), so write_file would replace content you have not seen. Read it with read_file first; to change part of it, use edit_file.",
      ],
      ["     1\tv1\n\n[Lines 1-1 of 1, end of file.]"],
      ["Replaced notes.txt (1 line, 3 bytes)."],
    ]);
    expect(file("notes.txt")).toBe("v2\n");
  });

  test("write_file refuses a file the model never read, and one that changed since it was read", async () => {
    writeFileSync(path.join(tmp.dir, "unread.txt"), "the user's notes\n");
    writeFileSync(path.join(tmp.dir, "seen.txt"), "v1\n");
    const results = await run(engine, [
      {
        toolCalls: [
          { name: "write_file", args: { filePath: "unread.txt", content: "overwritten\n" } },
          read("seen.txt"),
        ],
      },
      {
        toolCalls: [
          // Runs first (a command runs alone), so the write after it sees a changed file.
          { name: "execute_command", args: { command: "printf 'v2 by a formatter\\n' > seen.txt" } },
          { name: "write_file", args: { filePath: "seen.txt", content: "v3\n" } },
        ],
      },
    ]);
    expect(file("unread.txt")).toBe("the user's notes\n");
    expect(file("seen.txt")).toBe("v2 by a formatter\n");
    expect(results[0]).toEqual([
      "Error: unread.txt already exists and has not been read in this conversation since mini-cursor started (what was read before a restart is not remembered), so write_file would replace content you have not seen. Read it with read_file first; to change part of it, use edit_file.",
      "     1\tv1\n\n[Lines 1-1 of 1, end of file.]",
    ]);
    expect(results[1]![1]).toBe(
      "Error: seen.txt has changed since you last read or wrote it (a command, a formatter or the user changed it), so write_file would overwrite those changes. Read it again with read_file first; to change part of it, use edit_file.",
    );
  });
});
