import { hookMatches, HooksConfigError, parseHooks } from "../../src/security/hooks-config.js";

describe("hooks config", () => {
  test("Claude Code's shape and Gemini CLI's event names are read; other events are reported as not run", () => {
    const { hooks, unsupported } = parseHooks(
      {
        PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "./check.sh", timeout: 5 }] }],
        AfterTool: [{ matcher: "write_file|replace", hooks: [{ name: "fmt", command: "prettier", description: "x" }] }],
        Stop: [{ hooks: [{ command: "notify" }] }],
        enabled: true,
      },
      "config.json",
    );
    expect(hooks).toEqual([
      {
        event: "before",
        matcher: "Bash",
        command: "./check.sh",
        timeoutMs: 5000,
        label: "./check.sh",
        file: "config.json",
      },
      { event: "after", matcher: "write_file|replace", command: "prettier", label: "fmt", file: "config.json" },
    ]);
    expect(unsupported).toEqual(["Stop"]);
  });

  test("matchers are whole-name regular expressions over our names and the other agents' names for the same tool", () => {
    expect(hookMatches({ matcher: "Bash" }, "execute_command")).toBe(true);
    expect(hookMatches({ matcher: "Edit|Write" }, "edit_file")).toBe(true);
    expect(hookMatches({ matcher: "write" }, "write_file")).toBe(false);
    expect(hookMatches({ matcher: "write_.*" }, "write_file")).toBe(true);
    expect(hookMatches({ matcher: "*" }, "anything")).toBe(true);
    expect(hookMatches({ matcher: "fs__.*" }, "fs__read")).toBe(true);
  });

  test("a block not in that shape is an error naming the file and the place", () => {
    expect(() => parseHooks({ PreToolUse: [{ hooks: [] }] }, "c.json")).toThrow(
      new HooksConfigError("c.json: hooks.PreToolUse.0.hooks: Too small: expected array to have >=1 items"),
    );
    expect(() => parseHooks({ PreToolUse: [{ matcher: "[", hooks: [{ command: "x" }] }] }, "c.json")).toThrow(
      /c\.json: hooks\.PreToolUse\[0\]: matcher "\[" is not a valid regular expression/,
    );
    expect(() => parseHooks({ PostToolUse: [{ hooks: [{ command: "x", timeout: 601 }] }] }, "c.json")).toThrow(
      HooksConfigError,
    );
    expect(() => parseHooks([], "c.json")).toThrow(HooksConfigError);
  });
});
