import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { jest } from "@jest/globals";
import path from "node:path";
import { z } from "zod";
import { planModeReason } from "../../src/policy/plan-mode.js";
import { readOnlyTools } from "../../src/policy/effects.js";
import { tool } from "@langchain/core/tools";
import { declared } from "../../src/contracts/tools.js";
import type { ApprovalMode } from "../../src/contracts/modes.js";
import { createTools } from "../../src/tools/index.js";
import { engineHarness, eventsOf, type EngineKind } from "../helpers/engine-harness.js";
import { makeTempDir } from "../helpers/tmp.js";

/**
 * Tools declare their effects (issue 25 item 4): a tool added by ARCHITECTURE's recipe that
 * declares nothing asks in every mode but full-auto and is refused in plan mode; one that
 * declares kind "read" never asks; writes to protected paths ask in every mode, named.
 * Through both engines with the real toolset beside the new tools.
 */

jest.setTimeout(120_000);

let tmp: ReturnType<typeof makeTempDir>;
beforeEach(() => {
  tmp = makeTempDir();
});
afterEach(() => tmp.cleanup());

/** A new tool written by the recipe, declaring no kind and no paths: it appends a line to notes.txt. */
const makeNote = () =>
  tool(
    async ({ text }: { text: string }) => {
      const file = path.join(tmp.dir, "notes.txt");
      writeFileSync(file, (existsSync(file) ? readFileSync(file, "utf8") : "") + `${text}\n`);
      return `Noted: ${text}`;
    },
    {
      name: "make_note",
      description: "Appends a line to notes.txt.",
      schema: z.object({ text: z.string().describe("The line.") }),
    },
  );

/** The same recipe with a declaration: it only reads. */
const countLines = () =>
  declared(
    tool(
      async ({ filePath }: { filePath: string }) =>
        `${readFileSync(path.join(tmp.dir, filePath), "utf8").split("\n").length - 1} lines`,
      {
        name: "count_lines",
        description: "Counts the lines of a file.",
        schema: z.object({ filePath: z.string().describe("The file.") }),
      },
    ),
    { kind: "read", paths: { filePath: "path" } },
  );

const toolset = () => [...createTools({ workspace: tmp.dir }), makeNote(), countLines()];

const ENGINES: EngineKind[] = ["graph", "loop"];

describe.each(ENGINES)("%s engine", (engine) => {
  const run = async (
    mode: ApprovalMode,
    toolCalls: { name: string; args: Record<string, unknown> }[],
    approve = false,
  ) => {
    const harness = engineHarness(engine, tmp.dir, [{ toolCalls }, "done"], { approval: mode }, { tools: toolset() });
    await harness.run("go", { answers: toolCalls.map(() => ({ decision: approve ? "approve" : "deny" }) as const) });
    const results = eventsOf(harness.events, "tool_result").map((r) => r.content);
    return { approvals: harness.approvals, results };
  };

  test.each<ApprovalMode>(["suggest", "auto-edit"])("a tool that declares nothing asks in %s", async (mode) => {
    const { approvals, results } = await run(mode, [{ name: "make_note", args: { text: "one" } }], true);
    expect(approvals.map((a) => [a.tool, a.reason, a.asksEveryTime])).toEqual([
      [
        "make_note",
        `make_note does not declare what it does, so it asks before it runs (approval mode ${mode})`,
        undefined,
      ],
    ]);
    expect(results).toEqual(["Noted: one"]);
    expect(readFileSync(path.join(tmp.dir, "notes.txt"), "utf8")).toBe("one\n");
  });

  test("a tool that declares nothing runs in full-auto without a question", async () => {
    const { approvals, results } = await run("full-auto", [{ name: "make_note", args: { text: "two" } }]);
    expect(approvals).toEqual([]);
    expect(results).toEqual(["Noted: two"]);
  });

  test("plan mode refuses a tool that declares nothing and runs one that declares kind read", async () => {
    writeFileSync(path.join(tmp.dir, "a.txt"), "x\ny\n");
    const { approvals, results } = await run("plan", [
      { name: "make_note", args: { text: "three" } },
      { name: "count_lines", args: { filePath: "a.txt" } },
    ]);
    expect(approvals).toEqual([]);
    expect(results).toEqual([
      `Refused: this make_note call was not run, because ${planModeReason("make_note", readOnlyTools(toolset()))}. Do not try to get around the rule; do something else or ask the user.`,
      "2 lines",
    ]);
    expect(existsSync(path.join(tmp.dir, "notes.txt"))).toBe(false);
  });

  test("a tool that declares kind read runs in suggest without a question", async () => {
    writeFileSync(path.join(tmp.dir, "a.txt"), "x\n");
    const { approvals, results } = await run("suggest", [{ name: "count_lines", args: { filePath: "a.txt" } }]);
    expect(approvals).toEqual([]);
    expect(results).toEqual(["1 lines"]);
  });

  test.each<ApprovalMode>(["auto-edit", "full-auto"])(
    "writes into a nested repository's .git or into .mini-cursor/ ask in %s, and the question names them",
    async (mode) => {
      mkdirSync(path.join(tmp.dir, "sub", ".git"), { recursive: true });
      const { approvals, results } = await run(mode, [
        { name: "write_file", args: { filePath: "sub/.git/config", content: "[core]\n\tfsmonitor = ./evil\n" } },
        { name: "write_file", args: { filePath: ".mini-cursor/x", content: "x\n" } },
        { name: "write_file", args: { filePath: "src/ok.txt", content: "ok\n" } },
      ]);
      expect(approvals.map((a) => [a.args.filePath, a.reason, a.asksEveryTime])).toEqual([
        [
          "sub/.git/config",
          "changes a git repository's own files (sub/.git/config), where git hooks and settings run programs",
          true,
        ],
        [
          ".mini-cursor/x",
          "changes mini-cursor's own files (.mini-cursor/x), where its state and saved answers live",
          true,
        ],
      ]);
      expect(
        results
          .slice(0, 2)
          .every((r) => r.startsWith("This write_file call was not run, because the user declined it.")),
      ).toBe(true);
      expect(results[2]).toBe("Created src/ok.txt (1 line, 3 bytes).");
      expect(existsSync(path.join(tmp.dir, "sub", ".git", "config"))).toBe(false);
      expect(existsSync(path.join(tmp.dir, ".mini-cursor", "x"))).toBe(false);
    },
  );
});

test("the built-in tools plan mode runs are exactly those that declare kind read", () => {
  expect(readOnlyTools(createTools({ workspace: tmp.dir }))).toEqual([
    "read_file",
    "list_directory",
    "find_files",
    "search_files",
    "process_output",
    "write_todos",
  ]);
});
