import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { AIMessage } from "@langchain/core/messages";
import { normalizeToolCalls } from "../../src/agent/turn.js";
import { canonicalArguments } from "../../src/tools/aliases.js";
import { createTools, type Toolset } from "../../src/tools/index.js";
import { makeTempDir } from "../helpers/tmp.js";

/**
 * Other agents' tool-call shapes (Codex, opencode, Gemini CLI, Claude Code), sent to our tools:
 * honoured when they map onto what the tool does, refused with what to do instead when they
 * cannot. Our own tables, written from their published schemas.
 */

let tmp: ReturnType<typeof makeTempDir>;
let tools: Toolset;
const call = (name: string, args: object) => (tools as unknown as Record<string, Toolset[number]>)[name]!.invoke(args);

beforeEach(() => {
  tmp = makeTempDir();
  mkdirSync(path.join(tmp.dir, "src"));
  writeFileSync(path.join(tmp.dir, "src", "a.ts"), "one\ntwo\nthree\nfour\n");
  writeFileSync(path.join(tmp.dir, "notes.md"), "One note\n");
  tools = createTools({ workspace: tmp.dir, editTool: "both" });
});
afterEach(() => tmp.cleanup());

test("Codex: shell argv with workdir and timeout_ms, read_file with file_path, grep_files with include", async () => {
  expect(await call("execute_command", { command: ["bash", "-lc", "pwd"], workdir: "src", timeout_ms: 5000 })).toBe(
    `Exit code: 0\n${path.join(tmp.dir, "src")}`,
  );
  expect(await call("execute_command", { cmd: "echo hi", workdir: "src", justification: "check" })).toBe(
    "Exit code: 0\nhi",
  );
  expect(await call("execute_command", { command: ["printf", "%s|", "a b"] })).toBe("Exit code: 0\na b|");
  expect(await call("read_file", { file_path: "src/a.ts", offset: 2, limit: 1, mode: "slice" })).toBe(
    "     2\ttwo\n\n[Lines 2-2 of 4. Continue with offset 3.]",
  );
  expect(await call("search_files", { pattern: "one", include: "*.ts", path: "src" })).toBe(
    "src/a.ts:1: one\n\n[1 matching line in 1 file under src.]",
  );
  expect(await call("list_directory", { dir_path: "src" })).toBe("Directory src (1 entry):\nfile  a.ts  19 B");
});

test("opencode: bash with workdir and timeout, glob with path, grep with include, multiedit", async () => {
  expect(await call("execute_command", { command: "pwd", workdir: "src", timeout: 5000, description: "where" })).toBe(
    `Exit code: 0\n${path.join(tmp.dir, "src")}`,
  );
  expect(await call("find_files", { pattern: "*.ts", path: "src" })).toBe(
    "src/a.ts\n\n[1 file, most recently modified first.]",
  );
  await call("read_file", { filePath: "src/a.ts" });
  expect(
    await call("edit_file", {
      filePath: "src/a.ts",
      edits: [{ filePath: "src/a.ts", oldString: "one", newString: "1" }],
    }),
  ).toMatch(/^Edited src\/a\.ts/);
  expect(readFileSync(path.join(tmp.dir, "src", "a.ts"), "utf8")).toBe("1\ntwo\nthree\nfour\n");
  expect(
    await call("write_todos", { todos: [{ id: "1", content: "Fix it", status: "pending", priority: "high" }] }),
  ).toMatch(/1 pending/);
});

test("Gemini CLI: dir_path, start_line/end_line, include_pattern, allow_multiple, todo descriptions", async () => {
  expect(await call("read_file", { file_path: "src/a.ts", start_line: 2, end_line: 3 })).toBe(
    "     2\ttwo\n     3\tthree\n\n[Lines 2-3 of 4. Continue with offset 4.]",
  );
  expect(await call("find_files", { pattern: "*.md", dir_path: ".", case_sensitive: true })).toBe(
    "notes.md\n\n[1 file, most recently modified first.]",
  );
  expect(await call("search_files", { pattern: "o(n", fixed_strings: true, include_pattern: "*.md" })).toMatch(
    /^No matches for \/o\\\(n\/i/,
  );
  expect(await call("execute_command", { command: "pwd", dir_path: "src", is_background: false })).toBe(
    `Exit code: 0\n${path.join(tmp.dir, "src")}`,
  );
  writeFileSync(path.join(tmp.dir, "b.txt"), "x x\n");
  await call("read_file", { file_path: "b.txt" });
  expect(
    await call("edit_file", {
      file_path: "b.txt",
      old_string: "x",
      new_string: "y",
      allow_multiple: true,
      instruction: "all x",
    }),
  ).toMatch(/^Edited b\.txt/);
  expect(readFileSync(path.join(tmp.dir, "b.txt"), "utf8")).toBe("y y\n");
  expect(await call("write_todos", { todos: [{ description: "Plan", status: "in_progress" }] })).toMatch(
    /1 in progress/,
  );
});

test("Claude Code: Read, Edit with replace_all, Glob, Grep with -i, -C, type, Bash with timeout", async () => {
  expect(await call("read_file", { file_path: "src/a.ts", offset: 4, limit: 1 })).toBe(
    "     4\tfour\n\n[Lines 4-4 of 4, end of file.]",
  );
  expect(
    await call("edit_file", { file_path: "src/a.ts", old_string: "o", new_string: "0", replace_all: true }),
  ).toMatch(/^Edited src\/a\.ts/);
  expect(readFileSync(path.join(tmp.dir, "src", "a.ts"), "utf8")).toBe("0ne\ntw0\nthree\nf0ur\n");
  expect(await call("find_files", { pattern: "**/*.ts", path: "src" })).toBe(
    "src/a.ts\n\n[1 file, most recently modified first.]",
  );
  expect(await call("search_files", { pattern: "THREE", "-i": true, "-n": true, "-C": 1, type: "ts" })).toBe(
    "src/a.ts-2- tw0\nsrc/a.ts:3: three\nsrc/a.ts-4- f0ur\n\n[1 matching line in 1 file under the workspace.]",
  );
  expect(await call("search_files", { pattern: "THREE", "-i": false, glob: "*.ts" })).toMatch(/^No matches/);
  expect(await call("execute_command", { command: "sleep 30", timeout: 300, description: "wait" })).toMatch(
    /^Timed out after 0\.3 s/,
  );
});

test("peer arguments that cannot be honoured are refused with what to do instead", async () => {
  expect(await call("execute_command", { command: "ls", run_in_background: true })).toBe(
    'Error: execute_command does not take "run_in_background".\n- run_in_background: there is no background flag: a dev server goes to the background by itself when it prints its URL or says it is ready; other commands run to the end (set timeoutMs for long ones).\nIts arguments are: command, workingDirectory, timeoutMs.\nThe call was not run: call it again with valid arguments.',
  );
  expect(await call("search_files", { pattern: "x", multiline: true, head_limit: 5 })).toBe(
    'Error: search_files does not take "multiline", "head_limit".\n- multiline: search_files matches one line at a time: search for one line of the text.\n- head_limit: search_files shows at most 100 matches and says how many there were: narrow the search with path or glob.\nIts arguments are: pattern, path, glob, caseSensitive, contextLines.\nThe call was not run: call it again with valid arguments.',
  );
  expect(await call("edit_file", { filePath: "src/a.ts", edits: [{ oldString: "a", newString: "b", count: 2 }] })).toBe(
    'Error: edit_file does not take "count" in edits[0].\nEach item of edits takes: oldString, newString, replaceAll.\nThe call was not run: call it again with valid arguments.',
  );
  expect(readFileSync(path.join(tmp.dir, "src", "a.ts"), "utf8")).toBe("one\ntwo\nthree\nfour\n");
});

test("the engines hand approval and the tool the call under our names", () => {
  expect(canonicalArguments("execute_command", { cmd: ["bash", "-c", "rm -rf build"], cwd: "src" })).toEqual({
    command: "rm -rf build",
    workingDirectory: "src",
  });
  expect(canonicalArguments("mcp__srv__run", { cmd: "x" })).toEqual({ cmd: "x" });
  const message = normalizeToolCalls(
    new AIMessage({
      content: "",
      tool_calls: [{ id: "c1", name: "execute_command", args: { cmd: "make", workdir: "src", timeout: 10 } }],
    }),
  );
  expect(message.tool_calls).toEqual([
    {
      id: "c1",
      name: "execute_command",
      args: { command: "make", workingDirectory: "src", timeoutMs: 10 },
    },
  ]);
});
