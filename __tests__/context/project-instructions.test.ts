import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { loadProjectInstructions, MAX_INSTRUCTIONS_BYTES } from "../../src/context/project-instructions.js";
import { buildSystemPrompt } from "../../src/context/prompt.js";
import { engineHarness } from "../helpers/engine-harness.js";
import { makeTempDir } from "../helpers/tmp.js";

let tmp: ReturnType<typeof makeTempDir>;
beforeEach(() => (tmp = makeTempDir()));
afterEach(() => tmp.cleanup());

const put = (name: string, text: string) => writeFileSync(path.join(tmp.dir, name), text);

describe("loadProjectInstructions", () => {
  test("reads AGENTS.md, or CLAUDE.md when there is no AGENTS.md, or nothing", () => {
    expect(loadProjectInstructions(tmp.dir)).toBeUndefined();
    put("CLAUDE.md", "Use pnpm.\n");
    expect(loadProjectInstructions(tmp.dir)).toEqual({
      file: "CLAUDE.md",
      text: "Use pnpm.",
      truncated: false,
      bytes: 10,
    });
    put("AGENTS.md", "# Rules\nRun `npm test` before finishing.\n");
    expect(loadProjectInstructions(tmp.dir)).toEqual({
      file: "AGENTS.md",
      text: "# Rules\nRun `npm test` before finishing.",
      truncated: false,
      bytes: 41,
    });
  });

  test("an empty AGENTS.md falls through to CLAUDE.md", () => {
    put("AGENTS.md", "  \n");
    put("CLAUDE.md", "claude rules");
    expect(loadProjectInstructions(tmp.dir)?.file).toBe("CLAUDE.md");
  });

  test("is capped at 32 KiB, cut at a line end", () => {
    const line = `${"r".repeat(99)}\n`; // 100 bytes
    put("AGENTS.md", line.repeat(400)); // 40,000 bytes
    const loaded = loadProjectInstructions(tmp.dir)!;
    expect(loaded.truncated).toBe(true);
    expect(loaded.bytes).toBe(40_000);
    expect(Buffer.byteLength(loaded.text)).toBeLessThanOrEqual(MAX_INSTRUCTIONS_BYTES);
    expect(loaded.text).toBe(line.repeat(327).trimEnd()); // 32,768 bytes hold 327 whole lines
    const prompt = buildSystemPrompt({ workspace: tmp.dir });
    expect(prompt).toContain(
      "[AGENTS.md is 39 KB; only its first 32 KB are included here. Read the file for the rest.]",
    );
  });

  test("a symlink leading out of the workspace is not followed", () => {
    const outside = makeTempDir();
    try {
      writeFileSync(path.join(outside.dir, "AGENTS.md"), "outside rules");
      symlinkSync(path.join(outside.dir, "AGENTS.md"), path.join(tmp.dir, "AGENTS.md"));
      expect(loadProjectInstructions(tmp.dir)).toBeUndefined();
      // A link that stays inside is fine.
      mkdirSync(path.join(tmp.dir, "docs"));
      writeFileSync(path.join(tmp.dir, "docs/rules.md"), "inside rules");
      symlinkSync("docs/rules.md", path.join(tmp.dir, "CLAUDE.md"));
      expect(loadProjectInstructions(tmp.dir)?.text).toBe("inside rules");
    } finally {
      outside.cleanup();
    }
  });

  test("the system prompt carries the instructions in their own section", () => {
    put("AGENTS.md", "Always answer in haiku.");
    const prompt = buildSystemPrompt({ workspace: tmp.dir });
    expect(prompt).toContain(
      "# Project instructions\nThe project's AGENTS.md (at the workspace root) says the following. Follow it; when the user's request conflicts with it, the user wins.\n<AGENTS.md>\nAlways answer in haiku.\n</AGENTS.md>",
    );
    expect(buildSystemPrompt({ workspace: tmp.dir, projectInstructions: null })).not.toContain("Project instructions");
  });
});

describe.each(["graph", "loop"] as const)("the %s engine", (kind) => {
  test("text from AGENTS.md is in the first request to the model", async () => {
    put("AGENTS.md", "Project rule 7f3a: tabs, never spaces.\n");
    const h = engineHarness(kind, tmp.dir, ["ok"]);
    await h.run("hello");
    const [system] = h.model.calls[0]!;
    expect(system!.getType()).toBe("system");
    expect(String(system!.content)).toContain("<AGENTS.md>\nProject rule 7f3a: tabs, never spaces.\n</AGENTS.md>");
  });

  test("a change to AGENTS.md applies to the next request", async () => {
    put("AGENTS.md", "first version");
    const h = engineHarness(kind, tmp.dir, [
      {
        // write_file replaces only a file read in this conversation (issue 28): the read runs first.
        toolCalls: [
          { name: "read_file", args: { filePath: "AGENTS.md" } },
          { name: "write_file", args: { filePath: "AGENTS.md", content: "second version" } },
        ],
      },
      "ok",
    ]);
    await h.run("update the rules");
    expect(String(h.model.calls[0]![0]!.content)).toContain("first version");
    expect(String(h.model.calls[1]![0]!.content)).toContain("second version");
  });
});
