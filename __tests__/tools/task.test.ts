import {
  BUILT_IN_SUBAGENTS,
  findSubagentType,
  taskCallNotes,
  taskSchema,
  type SubagentType,
} from "../../src/tools/task.js";

const custom = (name: string): SubagentType => ({ name, description: "d", instructions: "", source: "user" });
const found = (types: readonly SubagentType[], name: unknown) => {
  const r = findSubagentType(types, name);
  return "type" in r ? r.type.name : r.error;
};

test("subagent_type is matched ignoring case and separators, and Claude Code's built-in names reach ours", () => {
  const types = [...BUILT_IN_SUBAGENTS, custom("code-reviewer")];
  expect(
    [
      "Explore",
      "explore",
      "EXPLORE",
      "general-purpose",
      "General Purpose",
      "general_purpose",
      "Plan",
      "Code Reviewer",
    ].map((n) => found(types, n)),
  ).toEqual(["explore", "explore", "explore", "general", "general", "general", "explore", "code-reviewer"]);
});

test("an unknown name, or one two types share once separators are ignored, lists the names available", () => {
  expect(found(BUILT_IN_SUBAGENTS, "statusline-setup")).toBe(
    'Error: there is no subagent_type "statusline-setup". Available: explore, general. Call task again with one of them.',
  );
  const types = [...BUILT_IN_SUBAGENTS, custom("a-b"), custom("a_b")];
  expect(found(types, "a_b")).toBe("a_b");
  expect(found(types, "A B")).toBe(
    'Error: subagent_type "A B" could be a-b or a_b: give the name exactly. Available: explore, general, a-b, a_b.',
  );
  // A project agent named like Claude's Plan is found by its own name before the mapping.
  expect(found([...BUILT_IN_SUBAGENTS, custom("plan")], "Plan")).toBe("plan");
});

test("model and run_in_background are accepted within limits, and the result's note says they were not used", () => {
  const call = { description: "look", prompt: "p", subagent_type: "Explore" };
  expect(taskSchema.safeParse({ ...call, model: "haiku", run_in_background: true }).success).toBe(true);
  expect(taskSchema.safeParse({ ...call, model: "x".repeat(101) }).success).toBe(false);
  expect(taskSchema.safeParse({ ...call, run_in_background: "yes" }).success).toBe(false);
  expect(taskCallNotes({})).toBeUndefined();
  expect(taskCallNotes({ model: "haiku", run_in_background: true })).toBe(
    '[run_in_background is not supported: the sub-agent ran in the foreground and this is its finished report; model "haiku" was ignored: the sub-agent ran on its type\'s model.]',
  );
});
