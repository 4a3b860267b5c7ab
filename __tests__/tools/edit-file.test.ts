import { chmodSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { ToolMessage } from "@langchain/core/messages";
import { createTools, type Toolset } from "../../src/tools/index.js";
import { applyEdit, detectEol, findPlaceholder } from "../../src/workspace/text-edit.js";
import { engineHarness, eventsOf } from "../helpers/engine-harness.js";
import { makeTempDir } from "../helpers/tmp.js";

let tmp: ReturnType<typeof makeTempDir>;
let tools: Toolset;
beforeEach(() => {
  tmp = makeTempDir();
  tools = createTools({ workspace: tmp.dir });
});
afterEach(() => tmp.cleanup());

const thread = (id = "t1") => ({ configurable: { thread_id: id } });
const file = (name: string) => path.join(tmp.dir, name);
const put = (name: string, content: string | Buffer) => writeFileSync(file(name), content);
const get = (name: string) => readFileSync(file(name), "utf8");

async function read(name: string, threadId = "t1"): Promise<string> {
  return (await tools.read_file.invoke({ filePath: name }, thread(threadId))) as string;
}

async function edit(args: Record<string, unknown>, threadId = "t1"): Promise<string> {
  return (await tools.edit_file.invoke(args as never, thread(threadId))) as string;
}

describe("edit_file", () => {
  test("refuses a file that was not read in this thread, and leaves it alone", async () => {
    put("a.ts", "const a = 1;\n");
    const result = await edit({ filePath: "a.ts", oldString: "const a = 1;", newString: "const a = 2;" });
    expect(result).toBe(
      "Error: a.ts has not been read in this conversation since mini-cursor started (what was read before a restart is not remembered). Read it with read_file first, then edit it.",
    );
    expect(get("a.ts")).toBe("const a = 1;\n");
  });

  test("a read in another thread does not count", async () => {
    put("a.ts", "const a = 1;\n");
    await read("a.ts", "other");
    expect(await edit({ filePath: "a.ts", oldString: "const a = 1;", newString: "const a = 2;" })).toMatch(
      /has not been read/,
    );
  });

  test("after a read, replaces the one match, says how it matched and shows the changed lines", async () => {
    put("a.ts", "line 1\nline 2\nconst a = 1;\nline 4\nline 5\nline 6\nline 7\nline 8\n");
    await read("a.ts");
    const result = await edit({ filePath: "a.ts", oldString: "const a = 1;", newString: "const a = 2;\nconst b = 3;" });
    expect(get("a.ts")).toBe("line 1\nline 2\nconst a = 2;\nconst b = 3;\nline 4\nline 5\nline 6\nline 7\nline 8\n");
    expect(result).toBe(
      [
        "Edited a.ts: replaced 1 occurrence (exact match).",
        "     1\tline 1",
        "     2\tline 2",
        "     3\tconst a = 2;",
        "     4\tconst b = 3;",
        "     5\tline 4",
        "     6\tline 5",
        "     7\tline 6",
      ].join("\n"),
    );
  });

  test("an ambiguous oldString is refused with the number of matches and their lines", async () => {
    put("a.ts", "x = 1;\ny = 2;\nx = 1;\nx = 1;\n");
    await read("a.ts");
    const result = await edit({ filePath: "a.ts", oldString: "x = 1;", newString: "x = 9;" });
    expect(result).toBe(
      "Error: oldString matches 3 places in a.ts (lines 1, 3, 4). Include more surrounding lines to make it unique, or set replaceAll: true to replace every one.",
    );
    expect(get("a.ts")).toBe("x = 1;\ny = 2;\nx = 1;\nx = 1;\n");
  });

  test("replaceAll replaces every match", async () => {
    put("a.ts", "foo(); foo();\nbar(foo);\n");
    await read("a.ts");
    const result = await edit({ filePath: "a.ts", oldString: "foo", newString: "baz", replaceAll: true });
    expect(result.split("\n")[0]).toBe("Edited a.ts: replaced 3 occurrences (exact match).");
    expect(get("a.ts")).toBe("baz(); baz();\nbar(baz);\n");
  });

  test("an edit written with \\n applies to a CRLF file and keeps its CRLF endings", async () => {
    put("win.txt", "alpha\r\nbeta\r\ngamma\r\n");
    await read("win.txt");
    const result = await edit({ filePath: "win.txt", oldString: "alpha\nbeta", newString: "one\ntwo\nthree" });
    expect(result.split("\n")[0]).toBe(
      "Edited win.txt: replaced 1 occurrence (matched after normalising line endings).",
    );
    expect(readFileSync(file("win.txt")).toString("latin1")).toBe("one\r\ntwo\r\nthree\r\ngamma\r\n");
  });

  test("new lines added inside a CRLF file get CRLF even on an exact match", async () => {
    put("win.txt", "a = 1\r\nb = 2\r\n");
    await read("win.txt");
    await edit({ filePath: "win.txt", oldString: "b = 2", newString: "b = 2\nc = 3" });
    expect(readFileSync(file("win.txt")).toString("latin1")).toBe("a = 1\r\nb = 2\r\nc = 3\r\n");
  });

  test("keeps a BOM and the final newline", async () => {
    put("bom.txt", "\uFEFFfirst\nlast\n");
    await read("bom.txt");
    await edit({ filePath: "bom.txt", oldString: "last\n", newString: "changed" });
    const bytes = readFileSync(file("bom.txt"));
    expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    expect(bytes.toString("utf8")).toBe("\uFEFFfirst\nchanged\n");
  });

  test("tolerates trailing whitespace the model left out", async () => {
    put("a.py", "def f():   \n    return 1\n");
    await read("a.py");
    const result = await edit({
      filePath: "a.py",
      oldString: "def f():\n    return 1",
      newString: "def f():\n    return 2",
    });
    expect(result.split("\n")[0]).toBe("Edited a.py: replaced 1 occurrence (matched ignoring trailing whitespace).");
    expect(get("a.py")).toBe("def f():\n    return 2\n");
  });

  test("tolerates wrong indentation and re-indents the new text to the file's", async () => {
    put("a.ts", "class A {\n    run() {\n        go();\n    }\n}\n");
    await read("a.ts");
    const result = await edit({
      filePath: "a.ts",
      oldString: "run() {\n    go();\n}",
      newString: "run() {\n    stop();\n    go();\n}",
    });
    expect(result.split("\n")[0]).toBe(
      "Edited a.ts: replaced 1 occurrence (matched ignoring indentation; the new text was re-indented to the file's).",
    );
    expect(get("a.ts")).toBe("class A {\n    run() {\n        stop();\n        go();\n    }\n}\n");
  });

  test("says when nothing matches, and points at the closest lines with their numbers", async () => {
    put("a.ts", "function a() {\n  return 1;\n}\n");
    await read("a.ts");
    const result = await edit({ filePath: "a.ts", oldString: "function a() {\n  return 2;\n}", newString: "x" });
    expect(result).toBe(
      [
        "Error: oldString was not found in a.ts (tried an exact match, then ignoring line endings, trailing whitespace, indentation, extra escaping, Unicode punctuation and spacing inside lines). The closest text is at lines 1-3 (89% alike):",
        "     1\tfunction a() {",
        "     2\t  return 1;",
        "     3\t}",
        "Copy oldString from there exactly (without the line numbers), or read the file again.",
      ].join("\n"),
    );
  });

  test("spots line numbers copied from read_file", async () => {
    put("a.ts", "const a = 1;\n");
    await read("a.ts");
    const result = await edit({ filePath: "a.ts", oldString: "     1\tconst a = 1;", newString: "const a = 2;" });
    expect(result).toMatch(/include the line numbers read_file shows/);
  });

  test("refuses a blank oldString and a no-op edit", async () => {
    put("a.ts", "x\n");
    await read("a.ts");
    expect(await edit({ filePath: "a.ts", oldString: "  \n", newString: "y" })).toMatch(/^Error: oldString is empty/);
    expect(await edit({ filePath: "a.ts", oldString: "x", newString: "x" })).toMatch(
      /^Error: newString is the same as oldString/,
    );
    expect(get("a.ts")).toBe("x\n");
  });

  test("flags placeholder text instead of deleting the code it stands for", async () => {
    put("a.ts", "function a() {\n  one();\n  two();\n}\n");
    await read("a.ts");
    const result = await edit({
      filePath: "a.ts",
      oldString: "function a() {\n  one();\n  two();\n}",
      newString: "function a() {\n  zero();\n  // ... existing code ...\n}",
    });
    expect(result).toBe(
      'Error: newString contains placeholder text ("// ... existing code ...") that is not in oldString. edit_file writes newString literally, so the code it stands for would be deleted. Put the real text in newString, or make oldString smaller so newString needs no placeholder.',
    );
    expect(get("a.ts")).toBe("function a() {\n  one();\n  two();\n}\n");
  });

  test("a file changed since it was read must be read again", async () => {
    put("a.ts", "const a = 1;\n");
    await read("a.ts");
    put("a.ts", "const a = 1; // formatted\n");
    expect(await edit({ filePath: "a.ts", oldString: "const a = 1;", newString: "const a = 2;" })).toBe(
      "Error: a.ts has changed since you last read it (a command, a formatter or the user changed it). Read it again with read_file, then edit it.",
    );
    await read("a.ts");
    expect(await edit({ filePath: "a.ts", oldString: "const a = 1;", newString: "const a = 2;" })).toMatch(
      /^Edited a\.ts/,
    );
    expect(get("a.ts")).toBe("const a = 2; // formatted\n");
  });

  test("edits in a row need no read in between, and a file write_file wrote counts as read", async () => {
    await tools.write_file.invoke({ filePath: "new.ts", content: "let a = 1;\nlet b = 2;\n" }, thread());
    expect(await edit({ filePath: "new.ts", oldString: "let a = 1;", newString: "let a = 10;" })).toMatch(/^Edited/);
    expect(await edit({ filePath: "new.ts", oldString: "let b = 2;", newString: "let b = 20;" })).toMatch(/^Edited/);
    expect(get("new.ts")).toBe("let a = 10;\nlet b = 20;\n");
  });

  test("keeps the file's mode, refuses paths outside the workspace and missing files", async () => {
    put("run.sh", "echo hi\n");
    chmodSync(file("run.sh"), 0o755);
    await read("run.sh");
    await edit({ filePath: "run.sh", oldString: "echo hi", newString: "echo bye" });
    expect(statSync(file("run.sh")).mode & 0o777).toBe(0o755);
    expect(await edit({ filePath: "../outside.txt", oldString: "a", newString: "b" })).toMatch(
      /^Refused: "..\/outside.txt" is outside the workspace/,
    );
    expect(await edit({ filePath: "missing.ts", oldString: "a", newString: "b" })).toBe(
      "Error: missing.ts does not exist. To create it, pass an empty oldString with the whole content as newString (or use write_file).",
    );
  });

  test("attaches a unified diff for the trace; the model gets the short text", async () => {
    put("a.ts", "one\ntwo\nthree\n");
    await read("a.ts");
    const message = (await tools.edit_file.invoke(
      {
        id: "call_1",
        name: "edit_file",
        type: "tool_call",
        args: { filePath: "a.ts", oldString: "two", newString: "2" },
      },
      thread(),
    )) as ToolMessage;
    expect(ToolMessage.isInstance(message)).toBe(true);
    expect(message.content).toMatch(/^Edited a\.ts: replaced 1 occurrence/);
    expect(message.artifact).toEqual({
      diff: ["--- a/a.ts", "+++ b/a.ts", "@@ -1,3 +1,3 @@", " one", "-two", "+2", " three"].join("\n"),
    });
  });

  test("previews show the diff an edit or a write would make, or why the edit would be refused", async () => {
    put("a.ts", "one\ntwo\n");
    const preview = tools.previews.edit_file!;
    expect(await preview({ filePath: "a.ts", oldString: "two", newString: "2" }, "t1")).toBe(
      "(this edit would be refused: a.ts has not been read in this conversation since mini-cursor started (what was read before a restart is not remembered). Read it with read_file first, then edit it.)",
    );
    await read("a.ts");
    expect(await preview({ filePath: "a.ts", oldString: "two", newString: "2" }, "t1")).toContain("-two\n+2");
    expect(get("a.ts")).toBe("one\ntwo\n");
    const writePreview = tools.previews.write_file!;
    expect(await writePreview({ filePath: "b.ts", content: "hello\n" })).toBe(
      ["--- a/b.ts", "+++ b/b.ts", "@@ -0,0 +1,1 @@", "+hello"].join("\n"),
    );
  });
});

describe("applyEdit and findPlaceholder", () => {
  test("detectEol picks the line ending most lines use", () => {
    expect(detectEol("a\r\nb\r\nc\n")).toBe("\r\n");
    expect(detectEol("a\nb\r\n")).toBe("\n");
    expect(detectEol("no newline")).toBe("\n");
  });

  test("a mixed file changes only the matched text", () => {
    const result = applyEdit("a\r\nb\nc\r\n", "b\nc", "B\nC");
    expect(result).toMatchObject({ ok: true, strategy: "exact" });
    expect(result.ok && result.text).toBe("a\r\nB\r\nC\r\n");
  });

  test("deleting the last lines keeps a final newline", () => {
    const result = applyEdit("keep\ndrop\n", "\ndrop\n", "");
    expect(result.ok && result.text).toBe("keep\n");
  });

  test("placeholders are found in comments and bare ellipsis lines, not in code", () => {
    expect(findPlaceholder("a();\n// ... existing code ...\nb();", "a();")).toBe("// ... existing code ...");
    expect(findPlaceholder("# rest of the file unchanged", "x")).toBe("# rest of the file unchanged");
    expect(findPlaceholder("/* ...rest of the component remains the same... */", "x")).toBe(
      "/* ...rest of the component remains the same... */",
    );
    expect(findPlaceholder("{/* ... other items ... */}", "x")).toBe("{/* ... other items ... */}");
    expect(findPlaceholder("... previous code ...", "x")).toBe("... previous code ...");
    expect(findPlaceholder("const merged = { ...existing, ...rest };\n  ...rest,", "x")).toBeUndefined();
    expect(findPlaceholder("// keep the existing order for old clients", "x")).toBeUndefined();
    // Already in the file: not the model's placeholder.
    expect(findPlaceholder("// ... existing code ...\nnew();", "// ... existing code ...")).toBeUndefined();
  });
});

describe.each(["graph", "loop"] as const)("edit_file in the %s engine", (kind) => {
  test("the approval prompt gets the diff, and the trace gets it with the result", async () => {
    put("app.ts", "export const port = 3000;\n");
    const h = engineHarness(
      kind,
      tmp.dir,
      [
        { toolCalls: [{ name: "read_file", args: { filePath: "app.ts" } }] },
        { toolCalls: [{ name: "edit_file", args: { filePath: "app.ts", oldString: "3000", newString: "8080" } }] },
        "Changed the port.",
      ],
      { approval: "suggest" },
    );
    const summary = await h.run("use port 8080", { answers: [{ decision: "approve" }] });
    expect(summary.reason).toBe("done");
    expect(get("app.ts")).toBe("export const port = 8080;\n");
    expect(h.approvals).toHaveLength(1);
    expect(h.approvals[0]!.preview).toBe(
      [
        "--- a/app.ts",
        "+++ b/app.ts",
        "@@ -1,1 +1,1 @@",
        "-export const port = 3000;",
        "+export const port = 8080;",
      ].join("\n"),
    );
    const result = eventsOf(h.events, "tool_result").find((e) => e.name === "edit_file")!;
    expect(result.content).toBe(
      "Edited app.ts: replaced 1 occurrence (exact match).\n     1\texport const port = 8080;",
    );
    expect(result.diff).toBe(h.approvals[0]!.preview);
  });
});
