import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { createTools } from "../../src/tools/index.js";
import { applyEdit, REBASED_TEXT, STRATEGY_TEXT } from "../../src/workspace/text-edit.js";
import { makeTempDir } from "../helpers/tmp.js";

/**
 * A recovery that matched after the indentation of its first line (issue 44): newString's later
 * lines are moved onto that line's indentation when they were written relative to its first
 * line, so no block comes out half-indented; later lines already at the file's depth stay as
 * typed. Exact bytes.
 */

const rows: Array<{ name: string; file: string; old: string; new: string; text: string; rebased: boolean }> = [
  {
    name: "a block after a blank line, oldString's first line without its indentation, newString at column 0",
    file: "\n  function oldFunc() {\n    // some code\n  }\n",
    old: "function  oldFunc() {\n    // some code\n  }",
    new: "function newFunc() {\n  // new code\n}",
    text: "\n  function newFunc() {\n    // new code\n  }\n",
    rebased: true,
  },
  {
    name: "the same, newString's later lines already at the file's depth: as typed",
    file: "\n  function oldFunc() {\n    // some code\n  }\n",
    old: "function  oldFunc() {\n    // some code\n  }",
    new: "function newFunc() {\n    // new code\n  }",
    text: "\n  function newFunc() {\n    // new code\n  }\n",
    rebased: false,
  },
  {
    name: "one line replaced by a block written from column 0, tabs as the base; blank lines stay empty",
    file: "func f() {\n\treturn  g(x)\n}\n",
    old: "return g(x)",
    new: "if x {\n\treturn g(x)\n}\n\nreturn nil",
    text: "func f() {\n\tif x {\n\t\treturn g(x)\n\t}\n\n\treturn nil\n}\n",
    rebased: true,
  },
  {
    name: "unicode punctuation recovery, CRLF file: rebased and the file's line ends kept",
    file: "def f():\r\n    say(\u201chi\u201d)\r\n",
    old: 'say("hi")',
    new: 'if loud:\n    say("HI")\nelse:\n    say("hi")',
    text: 'def f():\r\n    if loud:\r\n        say("HI")\r\n    else:\r\n        say("hi")\r\n',
    rebased: true,
  },
  {
    name: "the file's own lines of the match go below the base: newString is on the file's base, as typed",
    file: "    a =  1\n}\nb = 2\n",
    old: "a = 1\n}",
    new: "a = 2\n}\nc = 3",
    text: "    a = 2\n}\nc = 3\nb = 2\n",
    rebased: false,
  },
  {
    name: "a match that does not start after indentation is never rebased",
    file: "x = call(a,  b,\n  c)\n",
    old: "call(a, b,\n  c)",
    new: "call(a, b,\nc)",
    text: "x = call(a, b,\nc)\n",
    rebased: false,
  },
];

test.each(rows)("$name", (row) => {
  const result = applyEdit(row.file, row.old, row.new);
  if (!result.ok) throw new Error(`refused: ${result.reason}`);
  expect(result.text).toBe(row.text);
  expect(result.rebased === true).toBe(row.rebased);
});

test("edit_file writes the rebased block and tells the model it was re-indented", async () => {
  const tmp = makeTempDir();
  try {
    const file = path.join(tmp.dir, "a.js");
    writeFileSync(file, "\n  function oldFunc() {\n    // some code\n  }\n");
    const tools = createTools({ workspace: tmp.dir });
    const config = { configurable: { thread_id: "t1" } };
    await tools.read_file.invoke({ filePath: "a.js" }, config);
    const result = (await tools.edit_file.invoke(
      {
        filePath: "a.js",
        oldString: "function  oldFunc() {\n    // some code\n  }",
        newString: "function newFunc() {\n  // new code\n}",
      },
      config,
    )) as string;
    expect(readFileSync(file, "utf8")).toBe("\n  function newFunc() {\n    // new code\n  }\n");
    expect(result.split("\n")[0]).toBe(
      `Edited a.js: replaced 1 occurrence (${STRATEGY_TEXT["inner-whitespace"]}${REBASED_TEXT}).`,
    );
  } finally {
    tmp.cleanup();
  }
});

test("a 1 MB oldString typed with \\n matches a CRLF file's lines, which keep their \\r\\n", () => {
  const block = "const x = f(a) + [1];\n".repeat(50_000);
  const file = `// head\r\n${block.replace(/\n/g, "\r\n")}// tail\r\n`;
  const result = applyEdit(file, block, "done();\n");
  if (!result.ok) throw new Error(`refused: ${result.reason}`);
  expect(result.text).toBe("// head\r\ndone();\r\n// tail\r\n");
});
