import { createTools } from "../../src/tools/index.js";
import { expect, test } from "@jest/globals";
import { commandHardLinkReason, hardLinkMaker, hardLinkScanReason } from "../../src/agent/link-commands.js";

/** Which command lines make a command step's snapshot scan, because they make hard links the file watcher cannot see. */

test("the hard-link makers, and the look-alikes that are not", () => {
  const cases: [string[], string | undefined][] = [
    [["ln", "a", "../x"], "`ln` (without -s)"],
    [["/bin/ln", "-f", "a", "../x"], "`ln` (without -s)"],
    [["ln", "-t", "sdir", "a"], "`ln` (without -s)"],
    [["ln", "-S.bak", "a", "b"], "`ln` (without -s)"],
    [["ln", "-s", "a", "b"], undefined],
    [["ln", "-sf", "a", "b"], undefined],
    [["ln", "--symbolic", "a", "b"], undefined],
    [["ln", "--sym", "a", "b"], undefined],
    [["ln", "--", "-s", "b"], "`ln` (without -s)"],
    [["link", "a", "b"], "`link`"],
    [["cp", "-al", "a", "b"], "`cp -l`"],
    [["cp", "--link", "a", "b"], "`cp -l`"],
    [["cp", "-a", "a", "b"], undefined],
    [["cp", "-S", "l", "a", "b"], undefined],
    [["rsync", "-a", "--link-dest=../old", "src/", "dst/"], "`rsync --link-dest`"],
    [["rsync", "-aH", "src/", "dst/"], undefined],
    [["echo", "ln", "a", "b"], undefined],
  ];
  expect(cases.map(([argv]) => [argv, hardLinkMaker(argv)])).toEqual(cases);
});

test("seen behind wrappers, only in command calls", async () => {
  const ws = "/nonexistent/ws";
  const reason = (maker: string) => `the command makes hard links (${maker}), which the file watcher cannot see`;
  expect(await commandHardLinkReason(ws, "sh -c 'ln a.txt ../x' && echo hi > ../x")).toBe(reason("`ln` (without -s)"));
  expect(await commandHardLinkReason(ws, "find . -name '*.c' -exec ln {} ../x \\;")).toBe(reason("`ln` (without -s)"));
  expect(await commandHardLinkReason(ws, "echo a | xargs cp -l -t ../x")).toBe(reason("`cp -l`"));
  expect(await commandHardLinkReason(ws, "ln -s a.txt b && cp a.txt c")).toBeUndefined();
  // What the line does not show is not seen: a script, a program's own call.
  expect(await commandHardLinkReason(ws, "sh make-links.sh")).toBeUndefined();
  expect(await commandHardLinkReason(ws, 'python3 -c \'import os; os.link("a", "b")\'')).toBeUndefined();
  const tools = createTools({ workspace: ws });
  expect(
    await hardLinkScanReason(
      ws,
      [
        { name: "write_file", args: { filePath: "ln", content: "ln a b" } },
        { name: "execute_command", args: { command: "env X=1 link a ../b" } },
      ],
      tools,
    ),
  ).toBe(reason("`link`"));
  expect(
    await hardLinkScanReason(ws, [{ name: "execute_command", args: { command: "npm test" } }], tools),
  ).toBeUndefined();
});
