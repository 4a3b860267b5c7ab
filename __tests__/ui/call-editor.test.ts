import { chmodSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { ApprovalRequest } from "../../src/contracts/events.js";
import { editableText, editInEditor, readEdit } from "../../src/ui/call-editor.js";
import { formatQuestion, parseApprovalAnswer } from "../../src/ui/approval-prompt.js";
import { makeTempDir } from "../helpers/tmp.js";

/** [e]dit at the terminal's approval question (issue 32, item 4): what the person edits and how it is read back. */

const command: ApprovalRequest = {
  toolCallId: "c1",
  tool: "execute_command",
  args: { command: "ls -la", workingDirectory: "src" },
  reason: "runs a shell command (approval mode suggest)",
};
const write: ApprovalRequest = {
  toolCallId: "c2",
  tool: "write_file",
  args: { filePath: "a.txt", content: "one\ntwo\n" },
  reason: "changes a.txt",
};

test("e / edit asks to edit; the question offers it", () => {
  expect(parseApprovalAnswer("e")).toBe("edit");
  expect(parseApprovalAnswer(" EDIT ")).toBe("edit");
  expect(parseApprovalAnswer("edit it please")).toEqual({ decision: "deny", feedback: "edit it please" });
  expect(formatQuestion(command).prompt).toBe(
    "  [y]es / [n]o / [e]dit / [a]lways this session (execute_command) / or type feedback: ",
  );
  const again = formatQuestion({
    ...command,
    args: { command: "rm -rf /tmp/x" },
    edited: true,
    asksEveryTime: true,
    reason: "dangerous",
    editError: "not JSON",
  });
  expect(again.text).toBe(
    "\n? Allow execute_command, as you edited it:\n  │ rm -rf /tmp/x\n  (dangerous)\n  Your edit was not used: not JSON\n  This call asks every time; it cannot be allowed for later.\n",
  );
  expect(again.prompt).toBe("  [y]es / [n]o / [e]dit / or type feedback: ");
});

test("a command is edited as its text, other calls as JSON (one line on the prompt line); a rejected edit is the draft", () => {
  expect(editableText(command, true)).toEqual({ kind: "command", text: "ls -la" });
  expect(editableText(write, true)).toEqual({ kind: "json", text: '{"filePath":"a.txt","content":"one\\ntwo\\n"}' });
  expect(editableText(write, false)).toEqual({
    kind: "json",
    text: '{\n  "filePath": "a.txt",\n  "content": "one\\ntwo\\n"\n}\n',
  });
  expect(editableText({ ...write, editDraft: { filePath: "b.txt" } }, true).text).toBe('{"filePath":"b.txt"}');
});

test("read back: changed arguments, or why the question is asked again", () => {
  expect(readEdit(command, "command", "ls -l\n")).toEqual({ args: { command: "ls -l", workingDirectory: "src" } });
  expect(readEdit(command, "command", "  ls -la  \n")).toEqual({ again: "No change made." });
  expect(readEdit(command, "command", " \n")).toEqual({ again: "The edit was empty: nothing changed." });
  expect(readEdit(write, "json", '{"filePath":"a.txt","content":"three\\n"}')).toEqual({
    args: { filePath: "a.txt", content: "three\n" },
  });
  expect(readEdit(write, "json", '{"content":"one\\ntwo\\n","filePath":"a.txt"}')).toEqual({
    again: "No change made.",
  });
  expect(readEdit(write, "json", '{"filePath": "a.txt",')).toEqual({
    again: `The edit is not valid JSON (${jsonError('{"filePath": "a.txt",')}); nothing ran.`,
  });
  expect(readEdit(write, "json", '["a.txt"]')).toEqual({
    again: "The edit must be a JSON object of write_file's arguments; nothing ran.",
  });
});

function jsonError(text: string): string {
  try {
    JSON.parse(text);
    return "";
  } catch (err) {
    return (err as Error).message;
  }
}

describe("editInEditor", () => {
  const tmp = makeTempDir();
  afterAll(() => tmp.cleanup());
  const script = (name: string, body: string) => {
    const file = path.join(tmp.dir, name);
    writeFileSync(file, `#!/bin/sh\n${body}\n`);
    chmodSync(file, 0o755);
    return file;
  };

  test("runs the editor on a private file and returns what it saved", async () => {
    const editor = script("ed.sh", `[ "$(stat -c %a "$1")" = 600 ] || exit 9\nsed -i 's/ls -la/ls -1/' "$1"`);
    expect(await editInEditor(editor, { kind: "command", text: "ls -la" })).toEqual({ text: "ls -1\n" });
    // An editor named with its flags, as $EDITOR often is.
    expect(
      await editInEditor(`${script("flags.sh", 'printf "%s" "$1" > "$2"')} -x`, { kind: "json", text: "{}" }),
    ).toEqual({
      text: "-x",
    });
  });

  test("an editor that fails is no edit", async () => {
    expect(await editInEditor(script("fail.sh", "exit 3"), { kind: "command", text: "ls" })).toEqual({
      again: `The editor (${path.join(tmp.dir, "fail.sh")}) ended with status 3; the edit was not used.`,
    });
  });
});
