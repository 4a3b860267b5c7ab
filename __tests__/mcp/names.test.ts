import { refuseAmbiguousNames } from "../../src/mcp/names.js";

/** Issue 25, item 8: names that meet after prefixing are refused (with real servers in app/mcp-names.test.ts). */

test("a_ + c and a + _c both make a___c: both refused, one sentence names them", () => {
  const tools = [
    { name: "a___c", server: "a_", tool: "c" },
    { name: "a___c", server: "a", tool: "_c" },
    { name: "a__d", server: "a", tool: "d" },
  ];
  const { refused, notes } = refuseAmbiguousNames(tools);
  expect([...refused]).toEqual([tools[0], tools[1]]);
  expect(notes).toEqual([
    'MCP tools collide as "a___c": tool "c" of MCP server "a_" and tool "_c" of MCP server "a". Neither is offered; rename one of the servers in its config file so no server name ends with "_" next to a tool name starting with "_".',
  ]);
});

test("names providers refuse are not offered", () => {
  const tools = [
    { name: "s__red\x1b[31m", server: "s", tool: "red\x1b[31m" },
    { name: `s__${"x".repeat(70)}`, server: "s", tool: "x".repeat(70) },
  ];
  const { refused, notes } = refuseAmbiguousNames(tools);
  expect(refused.size).toBe(2);
  expect(notes[0]).toContain("is not 1 to 64 letters, digits, _ or -");
});
