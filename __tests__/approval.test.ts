import { alwaysKey, classifyCall, editReason } from "../src/agent/approval.js";
import { makeTempDir } from "./helpers/tmp.js";

const cmd = (command: string) => ({ name: "execute_command", args: { command } });
const write = { name: "write_file", args: { filePath: "a", content: "b" } };
const edit = { name: "edit_file", args: { filePath: "a", oldString: "x", newString: "y" } };

test.each([
  ["suggest", write, true],
  ["auto-edit", write, false],
  ["full-auto", write, false],
  ["suggest", edit, true],
  ["auto-edit", edit, false],
  ["suggest", { name: "read_file", args: { filePath: "a" } }, false],
  ["suggest", { name: "list_directory", args: { directoryPath: "." } }, false],
] as const)("%s: %j asks=%s", (mode, call, asks) => {
  expect(editReason(call, mode, []) !== null).toBe(asks);
});

test("always is remembered per tool for edits and per command prefix for commands", () => {
  expect(alwaysKey(cmd("npm test"))).toBe("execute_command:npm test");
  expect(alwaysKey(cmd("git log -5 src"))).toBe("execute_command:git log -5");
  expect(alwaysKey(write)).toBe("write_file");
  expect(editReason(write, "suggest", ["write_file"])).toBeNull();
});

test.each([
  ["suggest", "ls", "run"],
  ["auto-edit", "ls", "run"],
  ["full-auto", "ls", "run"],
  ["suggest", "touch a", "ask"],
  ["auto-edit", "touch a", "ask"],
  ["full-auto", "touch a", "run"],
  ["full-auto", "rm -rf ~", "ask"],
  ["full-auto", "sudo apt install x", "ask"],
] as const)("%s: command %s → %s", async (mode, command, action) => {
  const tmp = makeTempDir();
  try {
    expect((await classifyCall(cmd(command), mode, [], { workspace: tmp.dir, home: "/home/nobody" })).action).toBe(action);
  } finally {
    tmp.cleanup();
  }
});

test("an always answer covers a safe program's later commands, never a dangerous one", async () => {
  const tmp = makeTempDir();
  try {
    const ctx = { workspace: tmp.dir, home: "/home/nobody" };
    expect((await classifyCall(cmd("npm run build"), "auto-edit", ["execute_command:npm run build"], ctx)).action).toBe("run");
    expect((await classifyCall(cmd("npm run deploy"), "auto-edit", ["execute_command:npm run build"], ctx)).action).toBe("ask");
    const dangerous = await classifyCall(cmd("rm -rf /"), "auto-edit", ["execute_command:rm", "execute_command:rm -rf"], ctx);
    expect(dangerous.action).toBe("ask");
    expect(dangerous.alwaysAsks).toBe(true);
  } finally {
    tmp.cleanup();
  }
});
