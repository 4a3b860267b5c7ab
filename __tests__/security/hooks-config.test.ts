import { claudeToolName, hookMatches, HooksConfigError, parseHooks } from "../../src/security/hooks-config.js";

describe("hooks config", () => {
  test("Claude Code's shape and Gemini CLI's event names are read; Claude Code's session events too", () => {
    const { hooks, unsupported } = parseHooks(
      {
        PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "./check.sh", timeout: 5 }] }],
        AfterTool: [{ matcher: "write_file|replace", hooks: [{ name: "fmt", command: "prettier", description: "x" }] }],
        Stop: [{ hooks: [{ command: "notify" }] }],
        BeforeAgent: [{ hooks: [{ command: "ctx" }] }],
        enabled: true,
      },
      "config.json",
    );
    expect(hooks).toEqual([
      {
        event: "PreToolUse",
        matcher: "Bash",
        command: "./check.sh",
        timeoutMs: 5000,
        label: "./check.sh",
        file: "config.json",
      },
      { event: "PostToolUse", matcher: "write_file|replace", command: "prettier", label: "fmt", file: "config.json" },
      { event: "Stop", matcher: "*", command: "notify", label: "notify", file: "config.json" },
      { event: "UserPromptSubmit", matcher: "*", command: "ctx", label: "ctx", file: "config.json" },
    ]);
    expect(unsupported).toEqual([]);
  });

  test("unknown fields, hook types, events and Gemini CLI's millisecond timeouts are skipped and named once", () => {
    const { hooks, unsupported } = parseHooks(
      {
        PreToolUse: [
          {
            matcher: "Bash",
            sequential: true,
            hooks: [
              { type: "command", command: "a", statusMessage: "checking", if: "x", async: true, timeout: 5000 },
              { type: "prompt", prompt: "Is this safe?" },
              { type: "http", url: "https://example.com" },
              { command: "b", statusMessage: "again" },
            ],
          },
        ],
        PermissionRequest: [{ hooks: [{ command: "c" }] }],
      },
      "s.json",
    );
    expect(hooks.map((h) => [h.command, h.timeoutMs])).toEqual([
      ["a", undefined],
      ["b", undefined],
    ]);
    expect(unsupported).toEqual([
      "field sequential",
      "field statusMessage",
      "field if",
      "field async",
      "timeout 5000 (seconds here, at most 600; the default applies)",
      "field prompt",
      'type "prompt" hooks',
      "field url",
      'type "http" hooks',
      "event PermissionRequest",
    ]);
  });

  test("matchers are whole-name regular expressions over our names and the other agents' names for the same tool", () => {
    expect(hookMatches({ matcher: "Bash" }, "execute_command")).toBe(true);
    expect(hookMatches({ matcher: "execute_command" }, "execute_command")).toBe(true);
    expect(hookMatches({ matcher: "Edit|Write" }, "edit_file")).toBe(true);
    expect(hookMatches({ matcher: "Edit" }, "apply_patch")).toBe(true);
    expect(hookMatches({ matcher: "Task" }, "task")).toBe(true);
    expect(hookMatches({ matcher: "write" }, "write_file")).toBe(false);
    expect(hookMatches({ matcher: "write_.*" }, "write_file")).toBe(true);
    expect(hookMatches({ matcher: "*" }, "anything")).toBe(true);
    expect(hookMatches({ matcher: "fs__.*" }, "fs__read")).toBe(true);
    expect(hookMatches({ matcher: "mcp__fs__.*" }, "fs__read")).toBe(true);
  });

  test("Claude Code's tool names", () => {
    expect(
      ["execute_command", "read_file", "write_file", "edit_file", "apply_patch", "find_files", "search_files"].map(
        claudeToolName,
      ),
    ).toEqual(["Bash", "Read", "Write", "Edit", "Edit", "Glob", "Grep"]);
    expect(["list_directory", "task", "write_todos", "srv__tool", "other"].map(claudeToolName)).toEqual([
      "LS",
      "Task",
      "TodoWrite",
      "mcp__srv__tool",
      "other",
    ]);
  });

  test("a block not in that shape is an error naming the file and the place", () => {
    // An empty list is a placeholder that runs nothing, as in Claude Code.
    expect(parseHooks({ PreToolUse: [{ hooks: [] }] }, "c.json")).toEqual({ hooks: [], unsupported: [] });
    expect(() => parseHooks({ PreToolUse: [{ hooks: {} }] }, "c.json")).toThrow(
      new HooksConfigError("c.json: hooks.PreToolUse.0.hooks: Invalid input: expected array, received object"),
    );
    expect(() => parseHooks({ PreToolUse: [{ matcher: "[", hooks: [{ command: "x" }] }] }, "c.json")).toThrow(
      /c\.json: hooks\.PreToolUse\[0\]: matcher "\[" is not a valid regular expression/,
    );
    expect(() => parseHooks({ PostToolUse: [{ hooks: [{ type: "command" }] }] }, "c.json")).toThrow(
      new HooksConfigError("c.json: hooks.PostToolUse.0.hooks.0.command: a command hook needs a command"),
    );
    expect(() => parseHooks([], "c.json")).toThrow(HooksConfigError);
  });
});
