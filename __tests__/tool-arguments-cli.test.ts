import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { baseEnv, runCli } from "./helpers/cli.js";
import { startOpenAIServer, type OpenAIServer, type ScriptToolCall } from "./helpers/openai-server.js";
import { makeTempDir } from "./helpers/tmp.js";

/**
 * Other agents' argument names, through the real CLI and ChatOpenAI against the scripted server:
 * each is honoured (the command runs where `workdir` says, the search stays under `path`), an
 * argument no tool takes is refused with the names that are valid, and the JSON schema the
 * model is shown states no bound it does not mean.
 */

let tmp: ReturnType<typeof makeTempDir>;
let workspace: string;
let server: OpenAIServer | undefined;

beforeEach(() => {
  tmp = makeTempDir();
  workspace = path.join(tmp.dir, "ws");
  mkdirSync(path.join(workspace, "src"), { recursive: true });
  writeFileSync(path.join(workspace, "notes.md"), "needle in the root\n");
  writeFileSync(path.join(workspace, "src", "guide.md"), "needle in src\n");
  writeFileSync(path.join(workspace, "src", "code.ts"), "// needle in code\n");
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  tmp.cleanup();
});

/** Runs one turn of `calls`, then a final answer; returns each call's result as the model read it. */
async function resultsOf(engine: string, calls: ScriptToolCall[]): Promise<Map<string, string>> {
  const ids = calls.map((c, i) => ({ ...c, id: c.id ?? `call_${i}` }));
  server = await startOpenAIServer([{ toolCalls: ids }, { content: "Done." }]);
  const r = await runCli(["--workspace", workspace, "--engine", engine, "--approval", "full-auto", "go"], {
    env: baseEnv({ OPENAI_BASE_URL: server.url, OPENAI_API_KEY: "test", MINI_CURSOR_MAX_RETRIES: "1" }),
  });
  expect(r.stderr).not.toMatch(/Error:.*crash|TypeError/);
  expect(r.code).toBe(0);
  const tools = server.requests[1]!.messages.filter((m) => m.role === "tool");
  return new Map(tools.map((m) => [m.tool_call_id!, String(m.content)]));
}

describe.each(["graph", "loop"])("--engine %s", (engine) => {
  test("workdir, cwd, timeout and timeout_ms are honoured by execute_command", async () => {
    const results = await resultsOf(engine, [
      { id: "workdir", name: "execute_command", args: { command: "pwd", workdir: "src" } },
      { id: "cwd", name: "execute_command", args: { command: "pwd", cwd: "src" } },
      { id: "timeout", name: "execute_command", args: { command: "sleep 30", timeout: 500 } },
      { id: "timeout_ms", name: "execute_command", args: { cmd: ["bash", "-lc", "sleep 30"], timeout_ms: 500 } },
    ]);
    expect(results.get("workdir")).toBe(`Exit code: 0\n${path.join(workspace, "src")}`);
    expect(results.get("cwd")).toBe(`Exit code: 0\n${path.join(workspace, "src")}`);
    for (const id of ["timeout", "timeout_ms"]) {
      expect(results.get(id)).toBe(
        "Timed out after 0.5 s; process group stopped.\nExit code: 143 (killed by SIGTERM)\n(no output)",
      );
    }
  });

  test("find_files searches only path, search_files only what include names, and an unknown key is refused", async () => {
    const results = await resultsOf(engine, [
      { id: "find", name: "find_files", args: { pattern: "*.md", path: "src" } },
      { id: "include", name: "search_files", args: { pattern: "needle", include: "*.md" } },
      { id: "unknown", name: "write_file", args: { filePath: "x.txt", content: "x", mode: "0600" } },
    ]);
    expect(results.get("find")).toBe("src/guide.md\n\n[1 file, most recently modified first.]");
    expect(results.get("include")).toBe(
      "notes.md:1: needle in the root\nsrc/guide.md:1: needle in src\n\n[2 matching lines in 2 files under the workspace.]",
    );
    expect(results.get("unknown")).toBe(
      'Error: write_file does not take "mode".\nIts arguments are: filePath, content.\nThe call was not run: call it again with valid arguments.',
    );
    expect(() => readFileSync(path.join(workspace, "x.txt"))).toThrow(/ENOENT/);
  });
});

test("the schema the model is shown states real bounds only, and refuses what it does not list", async () => {
  await resultsOf("graph", [{ id: "noop", name: "list_directory", args: {} }]);
  const tools = server!.requests[0]!.tools!;
  const text = JSON.stringify(tools);
  expect(text).not.toContain("9007199254740991");
  const params = (name: string) =>
    tools.find((t) => t.function.name === name)!.function.parameters as {
      properties: Record<string, { minimum?: number; maximum?: number; type?: string }>;
      additionalProperties?: boolean;
    };
  expect(params("read_file").properties.offset).toMatchObject({ type: "integer", minimum: 1 });
  expect(params("read_file").properties.limit).toMatchObject({ type: "integer", minimum: 1 });
  expect(params("search_files").properties.contextLines).toMatchObject({ type: "integer", minimum: 0 });
  expect(params("process_output").properties.tail).toMatchObject({ type: "integer", minimum: 1 });
  expect(Object.keys(params("find_files").properties)).toEqual(["pattern", "path"]);
  for (const tool of tools)
    expect((tool.function.parameters as { additionalProperties?: boolean }).additionalProperties).toBe(false);
});

describe.each(["graph", "loop"])("--engine %s, --approval suggest", (engine) => {
  test("a call that cannot run is refused before any question: an unknown key, a missing argument, an unknown tool", async () => {
    server = await startOpenAIServer([
      {
        toolCalls: [
          { id: "unknown", name: "execute_command", args: { command: "touch ran.txt", shell: "zsh" } },
          { id: "missing", name: "write_file", args: { filePath: "x.txt" } },
          { id: "nosuch", name: "delete_file", args: { filePath: "notes.md" } },
        ],
      },
      { content: "Done." },
    ]);
    const r = await runCli(["--workspace", workspace, "--engine", engine, "--approval", "suggest", "--json", "go"], {
      env: baseEnv({ OPENAI_BASE_URL: server.url, OPENAI_API_KEY: "test", MINI_CURSOR_MAX_RETRIES: "1" }),
    });
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
    const events = r.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { type: string });
    expect(events.filter((e) => e.type === "approval")).toEqual([]);
    const tools = server.requests[1]!.messages.filter((m) => m.role === "tool");
    expect(new Map(tools.map((m) => [m.tool_call_id!, String(m.content)]))).toEqual(
      new Map([
        [
          "unknown",
          'Error: execute_command does not take "shell".\nIts arguments are: command, workingDirectory, timeoutMs.\nThe call was not run: call it again with valid arguments.',
        ],
        [
          "missing",
          "Error: write_file got invalid arguments:\n- content: required, and missing.\nThe call was not run: call it again with valid arguments.",
        ],
        [
          "nosuch",
          'Error: there is no tool named "delete_file". Available tools: read_file, write_file, apply_patch, edit_file, list_directory, find_files, search_files, execute_command, process_output, stop_process, write_todos, task.',
        ],
      ]),
    );
    expect(() => readFileSync(path.join(workspace, "ran.txt"))).toThrow(/ENOENT/);
    expect(() => readFileSync(path.join(workspace, "x.txt"))).toThrow(/ENOENT/);
  });
});
