import { readFileSync, writeFileSync, mkdirSync } from "node:fs";
import path from "node:path";
import { createTools, type Toolset } from "../../src/tools/index.js";
import { applyEdit, type MatchStrategy } from "../../src/workspace/text-edit.js";
import { findPlaceholder } from "../../src/workspace/placeholders.js";
import { makeTempDir } from "../helpers/tmp.js";

/**
 * The edit table: what models really send to edit_file, and what must come out. Each row is a
 * file, an oldString/newString pair and either the exact new file with the strategy that matched,
 * or the refusal (and then the file is unchanged). Rows marked "must not apply" are recoveries
 * that would be ambiguous or would change text the model did not ask to change.
 */
type Row =
  | {
      name: string;
      file: string;
      old: string;
      new: string;
      all?: boolean;
      text: string;
      strategy: MatchStrategy;
      count?: number;
    }
  | {
      name: string;
      file: string;
      old: string;
      new: string;
      all?: boolean;
      fail: "not_found" | "ambiguous" | "no_change" | "empty_old" | "inconsistent_indentation";
      hint?: RegExp;
    };

const rows: Row[] = [
  // --- exact core ---------------------------------------------------------------------------------
  { name: "exact: one match", file: "a\nb\nc\n", old: "b", new: "B", text: "a\nB\nc\n", strategy: "exact" },
  {
    name: "exact: multi-line",
    file: "one\ntwo\nthree\n",
    old: "one\ntwo",
    new: "1\n2",
    text: "1\n2\nthree\n",
    strategy: "exact",
  },
  { name: "exact: ambiguous without replaceAll", file: "x\nx\n", old: "x", new: "y", fail: "ambiguous" },
  {
    name: "exact: replaceAll",
    file: "x = x + 1\n",
    old: "x",
    new: "y",
    all: true,
    text: "y = y + 1\n",
    strategy: "exact",
    count: 2,
  },
  {
    name: "exact: $& and $1 in newString are literal",
    file: "price\n",
    old: "price",
    new: "$&$1$$",
    text: "$&$1$$\n",
    strategy: "exact",
  },
  {
    name: "exact: delete with empty newString",
    file: "keep\ndrop\nkeep2\n",
    old: "drop\n",
    new: "",
    text: "keep\nkeep2\n",
    strategy: "exact",
  },
  { name: "exact: no change refused", file: "a\n", old: "a", new: "a", fail: "no_change" },
  { name: "exact: blank oldString refused", file: "a\n", old: " \n", new: "b", fail: "empty_old" },
  { name: "exact: keeps the BOM", file: "\uFEFFa\nb\n", old: "b", new: "c", text: "\uFEFFa\nc\n", strategy: "exact" },
  { name: "exact: keeps no final newline", file: "a\nb", old: "b", new: "c", text: "a\nc", strategy: "exact" },
  {
    name: "exact: keeps the final newline when the last line is deleted",
    file: "a\nb\n",
    old: "\nb\n",
    new: "",
    text: "a\n",
    strategy: "exact",
  },
  {
    name: "exact: new lines in a CRLF file get CRLF",
    file: "a\r\nb\r\n",
    old: "b",
    new: "b\nc",
    text: "a\r\nb\r\nc\r\n",
    strategy: "exact",
  },
  {
    name: "exact: mixed endings change only the matched text",
    file: "a\r\nb\nc\r\n",
    old: "b\nc",
    new: "B\nC",
    text: "a\r\nB\r\nC\r\n",
    strategy: "exact",
  },
  {
    name: "exact: wins over a recovery that would also match",
    file: "const x = 5;\nconst  x = 5;\n",
    old: "const  x = 5;",
    new: "const y = 5;",
    text: "const x = 5;\nconst y = 5;\n",
    strategy: "exact",
  },
  {
    name: "exact: literal backslash-n in the file is matched as it is",
    file: 'print("a\\nb")\n',
    old: 'print("a\\nb")',
    new: 'print("c\\nd")',
    text: 'print("c\\nd")\n',
    strategy: "exact",
  },

  // --- line endings and trailing whitespace -----------------------------------------------------
  {
    name: "line endings: LF oldString in a CRLF file",
    file: "a\r\nb\r\nc\r\n",
    old: "a\nb",
    new: "x\ny",
    text: "x\r\ny\r\nc\r\n",
    strategy: "line-endings",
  },
  {
    name: "line endings: CRLF oldString in an LF file",
    file: "a\nb\nc\n",
    old: "a\r\nb",
    new: "x",
    text: "x\nc\n",
    strategy: "line-endings",
  },
  {
    name: "trailing whitespace: the file has trailing spaces",
    file: "if x:   \n    go()\n",
    old: "if x:\n    go()",
    new: "if y:\n    go()",
    text: "if y:\n    go()\n",
    strategy: "trailing-whitespace",
  },
  {
    name: "trailing whitespace: oldString has trailing spaces",
    file: "a\nb\n",
    old: "a  \nb",
    new: "c\nd",
    text: "c\nd\n",
    strategy: "trailing-whitespace",
  },
  { name: "trailing whitespace: ambiguous", file: "a \nb\na\t\nb\n", old: "a\nb", new: "x", fail: "ambiguous" },

  // --- indentation: relative rebase ---------------------------------------------------------------
  {
    name: "indentation (issue 17): newString already at the file's indentation is not indented again",
    file: "  // c\n\n  function oldFunc() {}",
    old: "\nfunction oldFunc() {}",
    new: "\n  function newFunc() {}",
    text: "  // c\n\n  function newFunc() {}",
    strategy: "indentation",
  },
  {
    name: "indentation: model wrote at column 0, file is nested",
    file: "class A {\n    run() {\n        go();\n    }\n}\n",
    old: "run() {\n    go();\n}",
    new: "run() {\n    stop();\n    go();\n}",
    text: "class A {\n    run() {\n        stop();\n        go();\n    }\n}\n",
    strategy: "indentation",
  },
  {
    name: "indentation: model over-indented, new text moved left",
    file: "def f():\n    return 1\n",
    old: "        def f():\n            return 1",
    new: "        def f():\n            x = 1\n            return x",
    text: "def f():\n    x = 1\n    return x\n",
    strategy: "indentation",
  },
  {
    name: "first line copied without its indentation, the rest with it: an exact match from mid-line",
    file: "class A:\n    def f(self):\n        return 1\n",
    old: "def f(self):\n        return 1",
    new: "def f(self):\n        return 2",
    text: "class A:\n    def f(self):\n        return 2\n",
    strategy: "exact",
  },
  {
    name: "indentation: each of oldString's indentations maps to the file's (method body one level deeper)",
    file: "class A:\n    def f(self):\n        return 1\n",
    old: "def f(self):\n    return 1",
    new: "def f(self):\n    if x:\n        return 2\n    return 1",
    text: "class A:\n    def f(self):\n        if x:\n            return 2\n        return 1\n",
    strategy: "indentation",
  },
  {
    name: "indentation: tabs in the file, spaces from the model",
    file: "func main() {\n\tif ok {\n\t\trun()\n\t}\n}\n",
    old: "    if ok {\n        run()\n    }",
    new: "    if ok {\n        run()\n        stop()\n    }",
    text: "func main() {\n\tif ok {\n\t\trun()\n\t\tstop()\n\t}\n}\n",
    strategy: "indentation",
  },
  {
    name: "indentation: a line deeper than any in oldString keeps its extra depth",
    file: "  if (a) {\n    b();\n  }\n",
    old: "if (a) {\n  b();\n}",
    new: "if (a) {\n  if (c) {\n    b();\n  }\n}",
    text: "  if (a) {\n    if (c) {\n      b();\n    }\n  }\n",
    strategy: "indentation",
  },
  {
    name: "indentation: inconsistent indentation is refused, not guessed",
    file: "  a();\n      b();\n",
    old: "a();\nb();",
    new: "a();\nc();",
    fail: "inconsistent_indentation",
  },
  {
    name: "indentation: two places at different depths, replaceAll rebases each",
    file: "x();\n  x();\n",
    old: "    x();",
    new: "    y();\n    z();",
    all: true,
    text: "y();\nz();\n  y();\n  z();\n",
    strategy: "indentation",
    count: 2,
  },
  {
    name: "indentation: ambiguous without replaceAll",
    file: "  go();\n    go();\n",
    old: "go();",
    new: "stop();",
    fail: "ambiguous",
  },
  {
    name: "indentation: blank lines in newString stay blank",
    file: "  a();\n  b();\n",
    old: "a();\nb();",
    new: "a();\n\nb();",
    text: "  a();\n\n  b();\n",
    strategy: "indentation",
  },

  // --- indentation rebased, as opencode's IndentationFlexible and Gemini CLI's flexible strategy do --
  {
    name: "rebase: tabs in the file, spaces from the model; a deeper new line gets whole tabs, not tabs plus spaces",
    file: "func main() {\n\tif ok {\n\t\trun()\n\t}\n}\n",
    old: "    if ok {\n        run()\n    }",
    new: "    if ok {\n        for {\n            run()\n        }\n    }",
    text: "func main() {\n\tif ok {\n\t\tfor {\n\t\t\trun()\n\t\t}\n\t}\n}\n",
    strategy: "indentation",
  },
  {
    name: "rebase: spaces in the file, tabs from the model",
    file: "class A:\n    def f(self):\n        return 1\n",
    old: "\tdef f(self):\n\t\treturn 1",
    new: "\tdef f(self):\n\t\tif x:\n\t\t\treturn 2\n\t\treturn 1",
    text: "class A:\n    def f(self):\n        if x:\n            return 2\n        return 1\n",
    strategy: "indentation",
  },
  {
    name: "rebase: two-space file, four-space model, one level deeper",
    file: "root:\n  child:\n    leaf: 1\n",
    old: "    child:\n        leaf: 1",
    new: "    child:\n        leaf: 2\n        other:\n            deep: 3",
    text: "root:\n  child:\n    leaf: 2\n    other:\n      deep: 3\n",
    strategy: "indentation",
  },
  {
    name: "rebase: a consistent offset, and a new line shallower than oldString's first (relative depth kept)",
    file: "class A {\n    m() {\n        a();\n    }\n}\n",
    old: "        m() {\n            a();\n        }",
    new: "        m() {\n            a();\n        }\n    }\n    n() {",
    text: "class A {\n    m() {\n        a();\n    }\n}\nn() {\n}\n",
    strategy: "indentation",
  },
  {
    name: "rebase: indentation and inner spacing both differ, the block is re-indented whole",
    file: "def f():\n    x  =  1\n    y = 2\n    return x\n",
    old: "x = 1\ny = 2",
    new: "x = 10\nif x:\n    y = 2",
    text: "def f():\n    x = 10\n    if x:\n        y = 2\n    return x\n",
    strategy: "indentation-and-spacing",
  },
  {
    name: "rebase: tabs against spaces and inner spacing at once",
    file: "func f() {\n\tif a  &&  b {\n\t\tgo()\n\t}\n}\n",
    old: "    if a && b {\n        go()\n    }",
    new: "    if a && b {\n        go()\n        stop()\n    }",
    text: "func f() {\n\tif a && b {\n\t\tgo()\n\t\tstop()\n\t}\n}\n",
    strategy: "indentation-and-spacing",
  },
  {
    name: "rebase refused: one indentation of oldString stands for two of the file's; the closest lines are quoted",
    file: "if a:\n    b()\n        c()\n",
    old: "if a:\n  b()\n  c()",
    new: "if a:\n  b()\n  d()",
    fail: "inconsistent_indentation",
    hint: /^The closest lines, as the file has them:\n {5}1\tif a:\n {5}2\t {4}b\(\)\n {5}3\t {8}c\(\)$/,
  },
  {
    name: "rebase refused: inner spacing and indentation ignored, two places match; they are quoted",
    file: "  x  =  1\n    x   = 1\n",
    old: "x = 1",
    new: "x = 2",
    fail: "ambiguous",
    hint: /^The places start with:\n {5}1\t {2}x {2}= {2}1\n {5}2\t {4}x {3}= 1$/,
  },

  // --- over-escaped oldString -----------------------------------------------------------------------
  {
    name: "escapes: \\n for newlines",
    file: "alpha\nbeta\n",
    old: "alpha\\nbeta",
    new: "alpha\\ngamma",
    text: "alpha\ngamma\n",
    strategy: "unescaped",
  },
  {
    name: "escapes: \\' for quotes",
    file: "const s = 'it';\n",
    old: "const s = \\'it\\';",
    new: "const s = \\'that\\';",
    text: "const s = 'that';\n",
    strategy: "unescaped",
  },
  {
    name: "escapes: \\${ in a template literal",
    file: "const a = `${x}`;\n",
    old: "const a = \\`\\${x}\\`;",
    new: "const a = `${y}`;",
    text: "const a = `${y}`;\n",
    strategy: "unescaped",
  },
  {
    name: "escapes: doubled backslashes",
    file: "path = 'C:\\Users'\n",
    old: "path = 'C:\\\\Users'",
    new: "path = 'D:\\\\Users'",
    text: "path = 'D:\\Users'\n",
    strategy: "unescaped",
  },
  {
    name: 'escapes: \\" for double quotes',
    file: 'say("hi")\n',
    old: 'say(\\"hi\\")',
    new: 'say(\\"bye\\")',
    text: 'say("bye")\n',
    strategy: "unescaped",
  },
  {
    name: "escapes: \\n in a CRLF file",
    file: "a\r\nb\r\n",
    old: "a\\nb",
    new: "c\\nd",
    text: "c\r\nd\r\n",
    strategy: "unescaped",
  },
  {
    name: "escapes: only the kinds undone in oldString are undone in newString",
    file: "it's\n",
    old: "it\\'s",
    new: "it\\'s \\n ok",
    text: "it's \\n ok\n",
    strategy: "unescaped",
  },
  { name: "escapes must not apply: two places", file: "a\nb\na\nb\n", old: "a\\nb", new: "c", fail: "ambiguous" },
  { name: "escapes must not apply: still not in the file", file: "a\nb\n", old: "a\\nc", new: "x", fail: "not_found" },

  // --- spacing inside lines -------------------------------------------------------------------------
  {
    name: "inner spacing: extra spaces in the file",
    file: "const   x =  5;\n",
    old: "const x = 5;",
    new: "const x = 6;",
    text: "const x = 6;\n",
    strategy: "inner-whitespace",
  },
  {
    name: "inner spacing: extra spaces in oldString",
    file: "let y = 1;\n",
    old: "let  y  = 1;",
    new: "let y = 2;",
    text: "let y = 2;\n",
    strategy: "inner-whitespace",
  },
  {
    name: "inner spacing: a tab inside the line",
    file: "a\t= 1\nb = 2\n",
    old: "a = 1",
    new: "a = 3",
    text: "a = 3\nb = 2\n",
    strategy: "inner-whitespace",
  },
  {
    name: "inner spacing: a fragment keeps the rest of the line",
    file: "  call(a,   b);  // keep\n",
    old: "call(a, b);",
    new: "call(b, a);",
    text: "  call(b, a);  // keep\n",
    strategy: "inner-whitespace",
  },
  {
    name: "inner spacing: multi-line with the file's indentation",
    file: "    if (a  &&  b) {\n        go();\n    }\n",
    old: "    if (a && b) {\n        go();",
    new: "    if (a || b) {\n        go();",
    text: "    if (a || b) {\n        go();\n    }\n",
    strategy: "inner-whitespace",
  },
  {
    name: "inner spacing must not apply: two places",
    file: "x  = 1;\nx =  1;\n",
    old: "x = 1;",
    new: "x = 2;",
    fail: "ambiguous",
  },
  {
    name: "inner spacing must not apply: a missing space between tokens is a different text",
    file: "a = b+c;\n",
    old: "a = b + c;",
    new: "a = c;",
    fail: "not_found",
  },
  {
    name: "inner spacing must not apply: different words",
    file: "const  x = 5;\n",
    old: "let x = 5;",
    new: "let x = 6;",
    fail: "not_found",
  },

  // --- Unicode punctuation ----------------------------------------------------------------------------
  {
    name: "unicode: en dash in the file",
    file: "pages 10\u201320\n",
    old: "pages 10-20",
    new: "pages 10-30",
    text: "pages 10-30\n",
    strategy: "unicode-punctuation",
  },
  {
    name: "unicode: em dash in the file",
    file: "wait \u2014 no\n",
    old: "wait - no",
    new: "wait - yes",
    text: "wait - yes\n",
    strategy: "unicode-punctuation",
  },
  {
    name: "unicode: non-breaking hyphen",
    file: "e\u2011mail\n",
    old: "e-mail",
    new: "email",
    text: "email\n",
    strategy: "unicode-punctuation",
  },
  {
    name: "unicode: non-breaking space",
    file: "10\u00A0kg\n",
    old: "10 kg",
    new: "20 kg",
    text: "20 kg\n",
    strategy: "unicode-punctuation",
  },
  {
    name: "unicode: curly double quotes",
    file: "say \u201Chi\u201D\n",
    old: 'say "hi"',
    new: 'say "bye"',
    text: 'say "bye"\n',
    strategy: "unicode-punctuation",
  },
  {
    name: "unicode: curly apostrophe",
    file: "don\u2019t stop\n",
    old: "don't stop",
    new: "do stop",
    text: "do stop\n",
    strategy: "unicode-punctuation",
  },
  {
    name: "unicode: ellipsis character",
    file: "Loading\u2026\n",
    old: "Loading...",
    new: "Loading",
    text: "Loading\n",
    strategy: "unicode-punctuation",
  },
  {
    name: "unicode: the model typed Unicode, the file has ASCII",
    file: "a - b\n",
    old: "a \u2013 b",
    new: "a + b",
    text: "a + b\n",
    strategy: "unicode-punctuation",
  },
  {
    name: "unicode: text outside the match keeps its Unicode",
    file: "\u201Cx\u201D \u2014 y\nz \u2014 w\n",
    old: "z - w",
    new: "z = w",
    text: "\u201Cx\u201D \u2014 y\nz = w\n",
    strategy: "unicode-punctuation",
  },
  {
    name: "unicode must not apply: a match starting inside an ellipsis character",
    file: "wait\u2026 go\n",
    old: ".. go",
    new: " stop",
    fail: "not_found",
  },
  { name: "unicode must not apply: two places", file: "a\u2013b\na\u2014b\n", old: "a-b", new: "c", fail: "ambiguous" },
  {
    name: "unicode must not apply: other letters differ too",
    file: "caf\u00E9 \u2013 bar\n",
    old: "cafe - bar",
    new: "x",
    fail: "not_found",
  },

  // --- beyond the recoveries: refused, with the closest place -------------------------------------
  {
    name: "typo: refused, points at the closest lines",
    file: "function add(a, b) {\n  return a + b;\n}\n",
    old: "function add(a, b) {\n  retrun a + b;\n}",
    new: "x",
    fail: "not_found",
    hint: /closest text is at lines 1-3/,
  },
  {
    name: "different middle: refused",
    file: "start();\nmiddle();\nend();\n",
    old: "start();\nother();\nend();",
    new: "x",
    fail: "not_found",
    hint: /closest text is at lines 1-3/,
  },
  {
    name: "line numbers copied from read_file: refused with a hint",
    file: "const a = 1;\n",
    old: "     1\tconst a = 1;",
    new: "const a = 2;",
    fail: "not_found",
    hint: /line numbers read_file shows/,
  },
  { name: "nothing alike: refused without a region", file: "alpha\n", old: "zzzz qqqq", new: "x", fail: "not_found" },
];

const placeholderRows: Array<{ name: string; newString: string; oldString?: string; found: string | undefined }> = [
  {
    name: "// ... existing code ...",
    newString: "a();\n// ... existing code ...\nb();",
    found: "// ... existing code ...",
  },
  {
    name: "# rest of the file unchanged",
    newString: "# rest of the file unchanged",
    found: "# rest of the file unchanged",
  },
  {
    name: "/* ... */ comment",
    newString: "/* ...rest of the component remains the same... */",
    found: "/* ...rest of the component remains the same... */",
  },
  {
    name: "{/* */} in JSX",
    newString: "<ul>\n  {/* ... other items ... */}\n</ul>",
    found: "{/* ... other items ... */}",
  },
  {
    name: "<!-- --> in HTML",
    newString: "<body>\n<!-- rest of the page -->\n</body>",
    found: "<!-- rest of the page -->",
  },
  { name: "-- in SQL", newString: "SELECT 1;\n-- ... remaining queries ...", found: "-- ... remaining queries ..." },
  {
    name: "bare line in parentheses (issue 17)",
    newString: "class A {\n  a() {}\n  (rest of methods ...)\n}",
    found: "(rest of methods ...)",
  },
  { name: "bare [...]", newString: "items = [\n  1,\n  [...]\n]", found: "[...]" },
  { name: "bare ... alone", newString: "function f() {\n  ...\n}", found: "..." },
  { name: "bare ..., in a list", newString: "[\n  1,\n  ...,\n]", found: "...," },
  { name: "bare … existing code …", newString: "… existing code …", found: "… existing code …" },
  { name: "// existing code here (no ellipsis)", newString: "// existing code here", found: "// existing code here" },
  {
    name: "// keep existing imports",
    newString: "// keep existing imports\nimport x from 'x';",
    found: "// keep existing imports",
  },
  { name: "# unchanged", newString: "x = 1\n# unchanged", found: "# unchanged" },
  { name: "// ... (bare ellipsis comment)", newString: "// ...", found: "// ..." },
  {
    name: "// other methods omitted for brevity",
    newString: "// other methods omitted for brevity",
    found: "// other methods omitted for brevity",
  },
  {
    name: "trailing comment that elides",
    newString: "return x; // ... rest unchanged",
    found: "return x; // ... rest unchanged",
  },
  {
    name: "// Rest of code remains the same",
    newString: "// Rest of code remains the same",
    found: "// Rest of code remains the same",
  },
  // not placeholders
  {
    name: "spread is code",
    newString: "const merged = { ...existing, ...rest };\n  ...rest,\n  {...props}",
    found: undefined,
  },
  {
    name: "a real comment mentioning existing",
    newString: "// keep the existing order for old clients",
    found: undefined,
  },
  {
    name: "Python ellipsis body",
    newString: "class P(Protocol):\n    def f(self) -> int:\n        ...",
    found: undefined,
  },
  {
    name: "already in oldString",
    newString: "// ... existing code ...\nnew();",
    oldString: "// ... existing code ...",
    found: undefined,
  },
  { name: "a loading message", newString: 'console.log("Loading...");', found: undefined },
  { name: "a call in parentheses", newString: "(function () {})();", found: undefined },
  { name: "a URL with dots", newString: 'fetch("http://example.com/...")', found: undefined },
  { name: "#include", newString: "#include <stdio.h>", found: undefined },
  {
    name: "a long comment with an ellipsis in its prose",
    newString: '/** How deep `sh -c "sh -c ..."` nesting is followed before giving up. */',
    found: undefined,
  },
  {
    name: "an ellipsis line in a doc-comment example",
    newString: "/**\n * const state = {\n *   ...\n * };\n */",
    found: undefined,
  },
  {
    name: "a doc-comment line that does elide",
    newString: "/**\n * rest of the docs unchanged\n */",
    found: "* rest of the docs unchanged",
  },
];

describe("edit table: applyEdit", () => {
  test(`has at least 55 rows (${rows.length})`, () => expect(rows.length).toBeGreaterThanOrEqual(55));
  test.each(rows.map((r) => [r.name, r] as const))("%s", (_name, row) => {
    const result = applyEdit(row.file, row.old, row.new, row.all ?? false);
    if ("fail" in row) {
      expect(result.ok).toBe(false);
      if (!result.ok) {
        expect(result.reason).toBe(row.fail);
        if (row.hint) expect(result.hint).toMatch(row.hint);
      }
    } else {
      expect(result).toMatchObject({ ok: true, strategy: row.strategy, count: row.count ?? 1 });
      expect(result.ok && result.text).toBe(row.text);
    }
  });
});

describe("edit table: large files", () => {
  test("a 2 MB file: a recovery and a refusal with the closest lines stay well under the deadline", () => {
    const line = (i: number) => `  const value${i} = compute(${i}, "text \u2013 with \u201Cquotes\u201D");\n`;
    const parts: string[] = [];
    for (let i = 0, size = 0; size < 1.9 * 1024 * 1024; i++) size += (parts[i] = line(i)).length;
    const body = parts.join("");
    const started = Date.now();
    const spaced = applyEdit(body, "const  value5000 =  compute(5000", "const v = compute(5000");
    expect(spaced).toMatchObject({ ok: true, strategy: "inner-whitespace" });
    const missing = applyEdit(
      body,
      parts
        .slice(7, 17)
        .join("")
        .replace(/compute/g, "kompute"),
      "x",
    );
    expect(missing).toMatchObject({ ok: false, reason: "not_found" });
    expect(!missing.ok && missing.hint).toMatch(/^The closest text is at lines 8-17 /);
    // About 0.7 s on an idle machine; the bound only catches a slip back to seconds per edit.
    expect(Date.now() - started).toBeLessThan(15_000);
  });
});

describe("edit table: placeholders", () => {
  test.each(placeholderRows.map((r) => [r.name, r] as const))("%s", (_name, row) => {
    expect(findPlaceholder(row.newString, row.oldString ?? "x")).toBe(row.found);
  });
});

// --- the tool: aliases, creation, edits lists ---------------------------------------------------------

let tmp: ReturnType<typeof makeTempDir>;
let tools: Toolset;
beforeEach(() => {
  tmp = makeTempDir();
  tools = createTools({ workspace: tmp.dir });
});
afterEach(() => tmp.cleanup());

const config = { configurable: { thread_id: "t1" } };
const put = (name: string, content: string) => writeFileSync(path.join(tmp.dir, name), content);
const get = (name: string) => readFileSync(path.join(tmp.dir, name), "utf8");
const call = async (name: keyof Toolset & string, args: Record<string, unknown>) =>
  (await tools[name as "edit_file"].invoke(args as never, config)) as string;

interface ToolRow {
  name: string;
  /** Files before; a read_file of each listed in `read` comes first. */
  files: Record<string, string>;
  read?: string[];
  args: Record<string, unknown>;
  /** The result's first line, exactly, or a pattern. */
  result: string | RegExp;
  /** Files after (unlisted ones unchanged). */
  after?: Record<string, string>;
  /** Files that must not exist after. */
  absent?: string[];
}

const toolRows: ToolRow[] = [
  {
    name: "Claude-style snake_case arguments",
    files: { "a.ts": "let a = 1;\n" },
    read: ["a.ts"],
    args: { file_path: "a.ts", old_string: "let a = 1;", new_string: "let a = 2;" },
    result: "Edited a.ts: replaced 1 occurrence (exact match).",
    after: { "a.ts": "let a = 2;\n" },
  },
  {
    name: "replace_all and path",
    files: { "a.ts": "x x x\n" },
    read: ["a.ts"],
    args: { path: "a.ts", old_string: "x", new_string: "y", replace_all: true },
    result: "Edited a.ts: replaced 3 occurrences (exact match).",
    after: { "a.ts": "y y y\n" },
  },
  {
    name: "Anthropic text-editor names (old_str, new_str)",
    files: { "a.ts": "one\n" },
    read: ["a.ts"],
    args: { path: "a.ts", old_str: "one", new_str: "two" },
    result: "Edited a.ts: replaced 1 occurrence (exact match).",
    after: { "a.ts": "two\n" },
  },
  {
    name: "an empty oldString creates a missing file (and its folder)",
    files: {},
    args: { filePath: "src/new.ts", oldString: "", newString: "export const a = 1;\n" },
    result: "Created src/new.ts (1 line, 20 bytes) from newString.",
    after: { "src/new.ts": "export const a = 1;\n" },
  },
  {
    name: "an empty oldString fills an empty file without a read",
    files: { "empty.txt": "" },
    args: { filePath: "empty.txt", oldString: "", newString: "hello\n" },
    result: "Filled the empty file empty.txt (1 line, 6 bytes) from newString.",
    after: { "empty.txt": "hello\n" },
  },
  {
    name: "an empty oldString on a file with content is refused",
    files: { "a.txt": "content\n" },
    read: ["a.txt"],
    args: { filePath: "a.txt", oldString: "", newString: "other" },
    result: /^Error: oldString is empty, but a\.txt has content\./,
    after: { "a.txt": "content\n" },
  },
  {
    name: "a placeholder in a created file is refused",
    files: {},
    args: { filePath: "n.ts", oldString: "", newString: "a();\n// ... rest of the code ...\n" },
    result: /^Error: newString contains placeholder text \("\/\/ \.\.\. rest of the code \.\.\."\)/,
    absent: ["n.ts"],
  },
  {
    name: "edits: applied in order, each to the result of the previous",
    files: { "a.ts": "let a = 1;\nlet b = 2;\n" },
    read: ["a.ts"],
    args: {
      filePath: "a.ts",
      edits: [
        { oldString: "let a = 1;", newString: "let a = 10;" },
        { oldString: "let a = 10;\nlet b = 2;", newString: "let a = 10;\nlet b = 20;" },
      ],
    },
    result: "Edited a.ts: applied 2 edits (1: exact match; 2: exact match).",
    after: { "a.ts": "let a = 10;\nlet b = 20;\n" },
  },
  {
    name: "edits: one that fails means none is written",
    files: { "a.ts": "let a = 1;\nlet b = 2;\n" },
    read: ["a.ts"],
    args: {
      filePath: "a.ts",
      edits: [
        { oldString: "let a = 1;", newString: "let a = 10;" },
        { oldString: "let c = 3;", newString: "let c = 30;" },
      ],
    },
    result: /^Error: edits\[1\] failed, so none of the 2 edits was applied: oldString was not found in a\.ts/,
    after: { "a.ts": "let a = 1;\nlet b = 2;\n" },
  },
  {
    name: "edits: snake_case inside the list",
    files: { "a.ts": "a\nb\n" },
    read: ["a.ts"],
    args: {
      file_path: "a.ts",
      edits: [
        { old_string: "a", new_string: "A" },
        { old_string: "b", new_string: "B", replace_all: true },
      ],
    },
    result: "Edited a.ts: applied 2 edits (1: exact match; 2: exact match).",
    after: { "a.ts": "A\nB\n" },
  },
  {
    name: "edits: a placeholder in any edit refuses the call",
    files: { "a.ts": "a\nb\n" },
    read: ["a.ts"],
    args: {
      filePath: "a.ts",
      edits: [
        { oldString: "a", newString: "A" },
        { oldString: "b", newString: "# ... existing code ..." },
      ],
    },
    result:
      'Error: edits[1]: newString contains placeholder text ("# ... existing code ...") that is not in oldString. edit_file writes newString literally, so the code it stands for would be deleted. Put the real text in newString, or make oldString smaller so newString needs no placeholder.',
    after: { "a.ts": "a\nb\n" },
  },
  {
    name: "edits with empty oldString/newString and replaceAll filled in by the model: the fields are ignored",
    files: { "a.ts": "a\n" },
    read: ["a.ts"],
    args: {
      filePath: "a.ts",
      oldString: "",
      newString: "",
      replaceAll: false,
      edits: [{ oldString: "a", newString: "b" }],
    },
    result: "Edited a.ts: applied 1 edit (1: exact match).",
    after: { "a.ts": "b\n" },
  },
  {
    name: "edits and oldString together are refused",
    files: { "a.ts": "a\n" },
    read: ["a.ts"],
    args: { filePath: "a.ts", oldString: "a", newString: "b", edits: [{ oldString: "a", newString: "c" }] },
    result: "Error: pass either oldString/newString or edits, not both.",
    after: { "a.ts": "a\n" },
  },
  {
    name: "neither oldString nor edits is refused",
    files: { "a.ts": "a\n" },
    read: ["a.ts"],
    args: { filePath: "a.ts", newString: "b" },
    result: "Error: edit_file needs oldString and newString (or an edits list).",
  },
  {
    name: "a recovery says how it matched",
    files: { "a.ts": "const   x =  5;\n" },
    read: ["a.ts"],
    args: { filePath: "a.ts", oldString: "const x = 5;", newString: "const x = 6;" },
    result: "Edited a.ts: replaced 1 occurrence (matched ignoring the amount of spacing inside lines).",
    after: { "a.ts": "const x = 6;\n" },
  },
  {
    name: "an ambiguous recovery is refused, even with replaceAll",
    files: { "a.ts": "x  = 1;\nx =  1;\n" },
    read: ["a.ts"],
    args: { filePath: "a.ts", oldString: "x = 1;", newString: "x = 2;", replaceAll: true },
    result:
      "Error: oldString matches 2 places in a.ts when ignoring the amount of spacing inside lines (lines 1, 2). Copy oldString exactly from the file, with enough surrounding lines to make it unique.",
    after: { "a.ts": "x  = 1;\nx =  1;\n" },
  },
];

describe("edit table: the edit_file tool", () => {
  test.each(toolRows.map((r) => [r.name, r] as const))("%s", async (_name, row) => {
    for (const [name, content] of Object.entries(row.files)) put(name, content);
    for (const name of row.read ?? []) await call("read_file", { filePath: name });
    const result = await call("edit_file", row.args);
    if (typeof row.result === "string") expect(result.split("\n")[0]).toBe(row.result);
    else expect(result).toMatch(row.result);
    for (const [name, content] of Object.entries({ ...row.files, ...row.after })) expect(get(name)).toBe(content);
    for (const name of row.absent ?? []) expect(() => get(name)).toThrow(/ENOENT/);
  });

  test("the other file tools take the same aliases", async () => {
    mkdirSync(path.join(tmp.dir, "dir"));
    expect(await call("write_file", { file_path: "dir/w.txt", content: "one\n" })).toBe(
      "Created dir/w.txt (1 line, 4 bytes).",
    );
    expect(await call("write_file", { path: "dir/w.txt", content: "two\n" })).toBe(
      "Replaced dir/w.txt (1 line, 4 bytes).",
    );
    expect(await call("read_file", { file_path: "dir/w.txt" })).toBe("     1\ttwo\n\n[Lines 1-1 of 1, end of file.]");
    expect(await call("read_file", { path: "dir/w.txt", offset: 1 })).toBe(
      "     1\ttwo\n\n[Lines 1-1 of 1, end of file.]",
    );
    expect(await call("list_directory", { directory_path: "dir" })).toBe(
      await call("list_directory", { directoryPath: "dir" }),
    );
    expect(await call("list_directory", { path: "dir" })).toMatch(/w\.txt/);
  });

  test("the approval preview reads aliased arguments the way the tool does", async () => {
    put("a.ts", "one\n");
    await call("read_file", { filePath: "a.ts" });
    const previewToolCall = (_tools: Toolset, call: { name: string; args: Record<string, unknown> }, c: string) =>
      tools.previews[call.name]!(call.args, c);
    const diff = ["--- a/a.ts", "+++ b/a.ts", "@@ -1,1 +1,1 @@", "-one", "+two"].join("\n");
    expect(
      await previewToolCall(
        tools,
        { name: "edit_file", args: { file_path: "a.ts", old_string: "one", new_string: "two" } },
        "t1",
      ),
    ).toBe(diff);
    expect(await previewToolCall(tools, { name: "write_file", args: { path: "a.ts", content: "two\n" } }, "t1")).toBe(
      diff,
    );
    expect(get("a.ts")).toBe("one\n");
  });

  test("the schema the model sees names each field once, in camelCase", async () => {
    const { toJsonSchema } = await import("@langchain/core/utils/json_schema");
    const schema = toJsonSchema(tools.edit_file.schema as never) as {
      properties: Record<string, unknown>;
      required: string[];
    };
    expect(Object.keys(schema.properties)).toEqual(["filePath", "oldString", "newString", "replaceAll", "edits"]);
    expect(schema.required).toEqual(["filePath"]);
  });
});
