import { completeSlash } from "../../src/ui/repl.js";

const commands = [
  { name: "/help", summary: "this list" },
  { name: "/frontend:component", summary: "Scaffold a UI component [project]" },
  { name: "/frontend:page", summary: "Scaffold a page [project]" },
];

test("Tab completes a slash command's name as far as the matches agree, then lists them with descriptions", () => {
  const listed: string[] = [];
  const tab = (line: string) => completeSlash(line, commands, (text) => listed.push(text));
  expect(tab("/he")).toEqual([["/help "], "/he"]);
  expect(tab("/f")).toEqual([["/frontend:"], "/f"]);
  expect(listed).toEqual([]);
  expect(tab("/frontend:")).toEqual([[], "/frontend:"]);
  expect(listed).toEqual([
    "  /frontend:component  Scaffold a UI component [project]\n  /frontend:page       Scaffold a page [project]",
  ]);
  // Not a command's beginning: nothing (a request, a command with arguments, no match).
  expect([tab("fix /he"), tab("/help me"), tab("/zz")]).toEqual([
    [[], "fix /he"],
    [[], "/help me"],
    [[], "/zz"],
  ]);
  expect(listed).toHaveLength(1);
});
