import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { ToolMessage } from "@langchain/core/messages";
import { classifyCall } from "../../src/policy/approval.js";
import { buildSystemPrompt } from "../../src/context/prompt.js";
import { diffLines } from "../../src/ui/render.js";
import { createAgentTools } from "../../src/app/tools.js";
import { createRuntime } from "../../src/agent/runtime.js";
import { defaultEditTool, loadSettings } from "../../src/settings.js";
import { createTools, offeredToolNames, TOOL_NAMES, type Toolset } from "../../src/tools/index.js";
import { parsePatch } from "../../src/workspace/patch-parse.js";
import { engineHarness, eventsOf } from "../helpers/engine-harness.js";
import { makeTempDir } from "../helpers/tmp.js";

let tmp: ReturnType<typeof makeTempDir>;
let tools: Toolset;
beforeEach(() => {
  tmp = makeTempDir();
  tools = createTools({ workspace: tmp.dir, editTool: "both" });
});
afterEach(() => tmp.cleanup());

const config = { configurable: { thread_id: "t1" } };
const abs = (name: string) => path.join(tmp.dir, name);
const put = (name: string, content: string) => {
  mkdirSync(path.dirname(abs(name)), { recursive: true });
  writeFileSync(abs(name), content);
};
const get = (name: string) => readFileSync(abs(name), "utf8");
const read = (name: string) => tools.read_file.invoke({ filePath: name }, config);
const patch = async (input: string) => (await tools.apply_patch.invoke({ input } as never, config)) as string;
const P = (...lines: string[]) => ["*** Begin Patch", ...lines, "*** End Patch"].join("\n");

interface Row {
  name: string;
  files: Record<string, string>;
  /** Files read first (default: every file given). */
  read?: string[];
  patch: string;
  /** The result exactly, or a pattern. */
  result: string | RegExp;
  /** Files after; files given but not listed here must be unchanged. */
  after?: Record<string, string>;
  absent?: string[];
}

const PY = "class A:\n    def f(self):\n        return 1\n\nclass B:\n    def f(self):\n        return 1\n";

const rows: Row[] = [
  {
    name: "one hunk, exact context",
    files: { "a.py": "def f():\n    x = 1\n    return x\n" },
    patch: P("*** Update File: a.py", "@@", " def f():", "-    x = 1", "+    x = 2", "     return x"),
    result: "Applied the patch to 1 file:\nM a.py (1 hunk)",
    after: { "a.py": "def f():\n    x = 2\n    return x\n" },
  },
  {
    name: "an @@ anchor picks the second of two identical blocks",
    files: { "a.py": PY },
    patch: P("*** Update File: a.py", "@@ class B:", "     def f(self):", "-        return 1", "+        return 2"),
    result: "Applied the patch to 1 file:\nM a.py (1 hunk)",
    after: { "a.py": PY.replace(/return 1\n$/, "return 2\n") },
  },
  {
    name: "two nested anchors (class, then method)",
    files: { "a.py": "class A:\n    def f(self):\n        pass\n    def g(self):\n        pass\n" },
    patch: P("*** Update File: a.py", "@@ class A:", "@@     def g(self):", "-        pass", "+        return 3"),
    result: "Applied the patch to 1 file:\nM a.py (1 hunk)",
    after: { "a.py": "class A:\n    def f(self):\n        pass\n    def g(self):\n        return 3\n" },
  },
  {
    name: "identical blocks without an anchor: refused, nothing written",
    files: { "a.py": PY },
    patch: P("*** Update File: a.py", "@@", "     def f(self):", "-        return 1", "+        return 2"),
    result:
      'Error: hunk 1 of a.py (patch line 3): its context and removed lines occur 2 times (at lines 2, 6). Add an "@@" line naming the enclosing function or class, or more context lines, so it matches one place. Nothing was written.',
  },
  {
    name: "context with drifted indentation matches; added lines take the file's indentation",
    files: { "a.ts": "class A {\n    run() {\n        go();\n    }\n}\n" },
    patch: P("*** Update File: a.ts", "@@", "   run() {", "     go();", "+    stop();", "   }"),
    result:
      "Applied the patch to 1 file:\nM a.ts (1 hunk; hunk 1 matched ignoring indentation; added lines re-indented to the file's)",
    after: { "a.ts": "class A {\n    run() {\n        go();\n        stop();\n    }\n}\n" },
  },
  {
    name: "context with trailing spaces the file does not have",
    files: { "a.txt": "one\ntwo\nthree\n" },
    patch: P("*** Update File: a.txt", "@@", " one  ", "-two", "+2", " three "),
    result: "Applied the patch to 1 file:\nM a.txt (1 hunk; hunk 1 matched ignoring trailing whitespace)",
    after: { "a.txt": "one\n2\nthree\n" },
  },
  {
    name: "context with Unicode punctuation and inner spacing typed differently",
    files: { "a.md": "Pages 10\u201320 \u2014  see \u201Cintro\u201D.\nend\n" },
    patch: P("*** Update File: a.md", "@@", '-Pages 10-20 - see "intro".', "+Pages 10-30.", " end"),
    result:
      "Applied the patch to 1 file:\nM a.md (1 hunk; hunk 1 matched ignoring indentation, spacing inside lines and Unicode punctuation)",
    after: { "a.md": "Pages 10-30.\nend\n" },
  },
  {
    name: "several hunks in one file, in order",
    files: { "a.js": "a();\nb();\nc();\nd();\ne();\nf();\ng();\n" },
    patch: P(
      "*** Update File: a.js",
      "@@",
      " a();",
      "-b();",
      "+B();",
      " c();",
      "@@",
      " e();",
      "-f();",
      "+F();",
      " g();",
    ),
    result: "Applied the patch to 1 file:\nM a.js (2 hunks)",
    after: { "a.js": "a();\nB();\nc();\nd();\ne();\nF();\ng();\n" },
  },
  {
    name: "hunks out of order do not apply (each searches after the previous)",
    files: { "a.js": "a();\nb();\nc();\nd();\n" },
    patch: P("*** Update File: a.js", "@@", "-d();", "+D();", "@@", "-a();", "+A();"),
    result:
      /^Error: hunk 2 of a\.js \(patch line 6\): its context and removed lines were not found after line 4\..* Nothing was written\.$/,
  },
  {
    name: "add, update and delete across files",
    files: { "src/a.ts": "export const a = 1;\n", "old.txt": "bye\n" },
    patch: P(
      "*** Add File: src/b.ts",
      "+export const b = 2;",
      "+",
      "*** Update File: src/a.ts",
      "@@",
      "-export const a = 1;",
      "+export const a = 10;",
      "*** Delete File: old.txt",
    ),
    result: "Applied the patch to 3 files:\nA src/b.ts (2 lines)\nM src/a.ts (1 hunk)\nD old.txt",
    after: { "src/a.ts": "export const a = 10;\n", "src/b.ts": "export const b = 2;\n\n" },
    absent: ["old.txt"],
  },
  {
    name: 'a bare blank line after an added file\'s lines is a separator; a blank "+" line is content',
    files: {},
    patch: P("*** Add File: a.txt", "+one", "+", "", "*** Add File: b.txt", "+two", ""),
    result: "Applied the patch to 2 files:\nA a.txt (2 lines)\nA b.txt (1 line)",
    after: { "a.txt": "one\n\n", "b.txt": "two\n" },
  },
  {
    name: "add creates missing folders and ends with a newline",
    files: {},
    patch: P("*** Add File: deep/er/n.txt", "+one", "+two"),
    result: "Applied the patch to 1 file:\nA deep/er/n.txt (2 lines)",
    after: { "deep/er/n.txt": "one\ntwo\n" },
  },
  {
    name: "move with a change",
    files: { "a.js": "x = 1;\n" },
    patch: P("*** Update File: a.js", "*** Move to: lib/b.js", "@@", "-x = 1;", "+x = 2;"),
    result: "Applied the patch to 1 file:\nR a.js -> lib/b.js (1 hunk)",
    after: { "lib/b.js": "x = 2;\n" },
    absent: ["a.js"],
  },
  {
    name: "a pure rename",
    files: { "a.js": "x = 1;\n" },
    patch: P("*** Update File: a.js", "*** Move to: b.js"),
    result: "Applied the patch to 1 file:\nR a.js -> b.js",
    after: { "b.js": "x = 1;\n" },
    absent: ["a.js"],
  },
  {
    name: "move onto an existing file: refused",
    files: { "a.js": "x = 1;\n", "b.js": "keep\n" },
    patch: P("*** Update File: a.js", "*** Move to: b.js", "@@", "-x = 1;", "+x = 2;"),
    result: "Error: cannot move a.js to b.js: it already exists (patch line 2). Nothing was written.",
  },
  {
    name: "a hunk that does not apply in the second file: the first is not written either",
    files: { "a.txt": "a\n", "b.txt": "b\n" },
    patch: P(
      "*** Update File: a.txt",
      "@@",
      "-a",
      "+A",
      "*** Add File: c.txt",
      "+c",
      "*** Update File: b.txt",
      "@@",
      "-zzz",
      "+Z",
    ),
    result:
      /^Error: hunk 1 of b\.txt \(patch line 9\): its context and removed lines were not found\. .*Nothing was written\.$/,
    absent: ["c.txt"],
  },
  {
    name: "add onto an existing file: refused",
    files: { "a.txt": "content\n" },
    patch: P("*** Add File: a.txt", "+new"),
    result:
      'Error: a.txt already exists (patch line 2). Use "*** Update File: a.txt" to change it. Nothing was written.',
  },
  {
    name: "update of a missing file: refused",
    files: {},
    patch: P("*** Update File: nope.txt", "@@", "-a", "+b"),
    result:
      'Error: nope.txt does not exist (patch line 2). Use "*** Add File: nope.txt" to create it. Nothing was written.',
  },
  {
    name: "delete of a missing file: refused",
    files: {},
    patch: P("*** Delete File: nope.txt"),
    result: "Error: nope.txt does not exist, so it cannot be deleted (patch line 2). Nothing was written.",
  },
  {
    name: "CRLF file: context matches, new lines get CRLF",
    files: { "w.txt": "one\r\ntwo\r\nthree\r\n" },
    patch: P("*** Update File: w.txt", "@@", " one", "-two", "+2", "+2.5", " three"),
    result: "Applied the patch to 1 file:\nM w.txt (1 hunk)",
    after: { "w.txt": "one\r\n2\r\n2.5\r\nthree\r\n" },
  },
  {
    name: "a patch written with CRLF itself",
    files: { "a.txt": "one\ntwo\n" },
    patch: P("*** Update File: a.txt", "@@", "-two", "+2").replace(/\n/g, "\r\n"),
    result: "Applied the patch to 1 file:\nM a.txt (1 hunk)",
    after: { "a.txt": "one\n2\n" },
  },
  {
    name: "no final newline stays so; BOM stays",
    files: { "b.txt": "\uFEFFa\nb" },
    patch: P("*** Update File: b.txt", "@@", " a", "-b", "+c"),
    result: "Applied the patch to 1 file:\nM b.txt (1 hunk)",
    after: { "b.txt": "\uFEFFa\nc" },
  },
  {
    name: "*** End of File anchors an addition at the end",
    files: { "a.txt": "x\ny\nx\n" },
    patch: P("*** Update File: a.txt", "@@", " x", "+z", "*** End of File"),
    result: "Applied the patch to 1 file:\nM a.txt (1 hunk)",
    after: { "a.txt": "x\ny\nx\nz\n" },
  },
  {
    name: "an addition only, after an anchor",
    files: { "a.py": "import os\n\ndef f():\n    pass\n" },
    patch: P("*** Update File: a.py", "@@ import os", "+import sys"),
    result: "Applied the patch to 1 file:\nM a.py (1 hunk)",
    after: { "a.py": "import os\nimport sys\n\ndef f():\n    pass\n" },
  },
  {
    name: "additions without context or anchor go at the end, and the result says so",
    files: { "a.txt": "a\n" },
    patch: P("*** Update File: a.txt", "@@", "+b"),
    result:
      "Applied the patch to 1 file:\nM a.txt (1 hunk; hunk 1 matched nothing (no context or @@ line): its lines were added at the end of the file)",
    after: { "a.txt": "a\nb\n" },
  },
  {
    name: "context indented inconsistently with the file: refused rather than guessing the added lines' indentation",
    files: { "a.py": "if a:\n    b()\n        c()\n" },
    patch: P("*** Update File: a.py", "@@", " if a:", "  b()", "  c()", "+  d()"),
    result:
      /^Error: hunk 1 of a\.py \(patch line 3\): its context matches only when indentation is ignored, and it is indented differently from the file in inconsistent ways/,
  },
  {
    name: "a unified-diff header (@@ -1,2 +1,2 @@) is not an anchor",
    files: { "a.txt": "a\nb\n" },
    patch: P("*** Update File: a.txt", "@@ -1,2 +1,2 @@", " a", "-b", "+c"),
    result: "Applied the patch to 1 file:\nM a.txt (1 hunk)",
    after: { "a.txt": "a\nc\n" },
  },
  {
    name: "a blank separator line after a hunk is tolerated",
    files: { "a.txt": "a\nb\n" },
    patch: P("*** Update File: a.txt", "@@", " a", "-b", "+c", "", "*** Add File: n.txt", "+n"),
    result: "Applied the patch to 2 files:\nM a.txt (1 hunk)\nA n.txt (1 line)",
    after: { "a.txt": "a\nc\n", "n.txt": "n\n" },
  },
  {
    name: "a heredoc around the patch is accepted",
    files: { "a.txt": "a\n" },
    patch: `apply_patch <<'EOF'\n${P("*** Update File: a.txt", "@@", "-a", "+b")}\nEOF\n`,
    result: "Applied the patch to 1 file:\nM a.txt (1 hunk)",
    after: { "a.txt": "b\n" },
  },
  {
    name: "placeholder text in added lines: refused",
    files: { "a.ts": "a();\nb();\nc();\n" },
    patch: P("*** Update File: a.ts", "@@", " a();", "-b();", "-c();", "+// ... existing code ..."),
    result:
      'Error: a "+" line for a.ts is placeholder text ("// ... existing code ..."); it would replace the code it stands for. Write the real lines. Nothing was written.',
  },
  {
    name: "delete and add the same path: the file is replaced",
    files: { "a.txt": "old\n" },
    patch: P("*** Delete File: a.txt", "*** Add File: a.txt", "+new"),
    result: "Applied the patch to 1 file:\nD a.txt\nA a.txt (1 line)",
    after: { "a.txt": "new\n" },
  },
  {
    name: "a binary file: refused",
    files: { "img.png": "\x89PNG\r\n" },
    read: [],
    patch: P("*** Update File: img.png", "@@", "-x", "+y"),
    result: "Error: img.png is a binary file (PNG image); apply_patch changes text only. Nothing was written.",
  },
  {
    name: "a path through a file: refused before anything is written",
    files: { "a.txt": "a\n" },
    patch: P("*** Update File: a.txt", "@@", "-a", "+b", "*** Add File: a.txt/inner.txt", "+x"),
    result: '"a.txt/inner.txt" goes through a file as if it were a directory.',
  },
  // what Codex's and opencode's parsers take
  {
    name: "context in NFD matches a file in NFC (and the other way round); the file's own spelling stays",
    files: { "n.txt": "caf\u00E9 au lait\nnai\u0308ve\nend\n" },
    patch: P("*** Update File: n.txt", "@@", " cafe\u0301 au lait", "-na\u00EFve", "+naive", " end"),
    result: "Applied the patch to 1 file:\nM n.txt (1 hunk; hunk 1 matched after Unicode normalisation (NFC/NFD))",
    after: { "n.txt": "caf\u00E9 au lait\nnaive\nend\n" },
  },
  {
    name: "an @@ anchor in another Unicode normal form is found",
    files: { "n.py": "def r\u00E9sum\u00E9():\n    return 1\n" },
    patch: P("*** Update File: n.py", "@@ def re\u0301sume\u0301():", "-    return 1", "+    return 2"),
    result: "Applied the patch to 1 file:\nM n.py (1 hunk)",
    after: { "n.py": "def r\u00E9sum\u00E9():\n    return 2\n" },
  },
  {
    name: "a blank line after *** End of File, then another hunk's file",
    files: { "a.txt": "a\nb\n", "c.txt": "c\n" },
    patch: P(
      "*** Update File: a.txt",
      "@@",
      " a",
      "-b",
      "+B",
      "*** End of File",
      "",
      "*** Update File: c.txt",
      "@@",
      "-c",
      "+C",
    ),
    result: "Applied the patch to 2 files:\nM a.txt (1 hunk)\nM c.txt (1 hunk)",
    after: { "a.txt": "a\nB\n", "c.txt": "C\n" },
  },
  {
    name: "blank lines between hunks of one file",
    files: { "a.txt": "a\nb\nc\nd\n" },
    patch: P("*** Update File: a.txt", "@@", "-a", "+A", "", "", "@@", "-d", "+D", "*** End of File", "", ""),
    result: "Applied the patch to 1 file:\nM a.txt (2 hunks)",
    after: { "a.txt": "A\nb\nc\nD\n" },
  },
  {
    name: "a rename whose only hunk is context: the context must be there, the text moves unchanged",
    files: { "old.py": "import os\n\nx = 1\n" },
    patch: P("*** Update File: old.py", "*** Move to: new.py", "@@", " import os"),
    result: "Applied the patch to 1 file:\nR old.py -> new.py (1 hunk)",
    after: { "new.py": "import os\n\nx = 1\n" },
    absent: ["old.py"],
  },
  {
    name: "a rename whose context is not in the file: refused",
    files: { "old.py": "import os\n" },
    patch: P("*** Update File: old.py", "*** Move to: new.py", "@@", " import sys"),
    result: /^Error: hunk 1 of old\.py \(patch line 4\): its context and removed lines were not found\./,
    absent: ["new.py"],
  },
  {
    name: "a hunk of context only, without a move, changes nothing: refused",
    files: { "a.txt": "a\n" },
    patch: P("*** Update File: a.txt", "@@", " a"),
    result: "Error: the hunks for a.txt change nothing (patch line 2). Nothing was written.",
  },
  {
    name: "an indented *** Update File: header",
    files: { "foo.txt": "old\n" },
    patch: P("  *** Update File: foo.txt", "@@", "-old", "+new"),
    result: "Applied the patch to 1 file:\nM foo.txt (1 hunk)",
    after: { "foo.txt": "new\n" },
  },
  {
    name: "headers indented alike throughout; padded Begin/End markers",
    files: { "a.txt": "a\n", "b.txt": "b\n" },
    patch: [
      " *** Begin Patch ",
      "  *** Update File: a.txt",
      "@@",
      "-a",
      "+A",
      "  *** Delete File: b.txt",
      "  *** Add File: c.txt",
      "+c",
      " *** End Patch",
    ].join("\n"),
    result: "Applied the patch to 3 files:\nM a.txt (1 hunk)\nD b.txt\nA c.txt (1 line)",
    after: { "a.txt": "A\n", "c.txt": "c\n" },
    absent: ["b.txt"],
  },
  {
    name: "inside a hunk, a context line that reads like a header is context (a file that documents patches)",
    files: { "doc.md": "Example:\n*** Update File: x.py\nend\n" },
    patch: P("*** Update File: doc.md", "@@", " Example:", " *** Update File: x.py", "-end", "+fin"),
    result: "Applied the patch to 1 file:\nM doc.md (1 hunk)",
    after: { "doc.md": "Example:\n*** Update File: x.py\nfin\n" },
  },
  {
    name: "a patch wrapped in cat <<'EOF'",
    files: {},
    patch: `cat <<'EOF'\n${P("*** Add File: h.txt", "+heredoc")}\nEOF`,
    result: "Applied the patch to 1 file:\nA h.txt (1 line)",
    after: { "h.txt": "heredoc\n" },
  },
  {
    name: 'a bare <<EOF heredoc, and apply_patch <<"PATCH"',
    files: { "a.txt": "a\n" },
    patch: `<<EOF\n${P("*** Update File: a.txt", "@@", "-a", "+b")}\nEOF\n`,
    result: "Applied the patch to 1 file:\nM a.txt (1 hunk)",
    after: { "a.txt": "b\n" },
  },
  {
    name: 'apply_patch <<"PATCH" with another delimiter',
    files: { "a.txt": "a\n" },
    patch: `apply_patch <<"PATCH"\n${P("*** Update File: a.txt", "@@", "-a", "+b")}\nPATCH`,
    result: "Applied the patch to 1 file:\nM a.txt (1 hunk)",
    after: { "a.txt": "b\n" },
  },
  // line endings, line by line
  {
    name: "mixed endings: a replaced CRLF line stays CRLF in a mostly-LF file, a replaced LF line stays LF",
    files: { "m.txt": "one\ntwo\r\nthree\nfour\nfive\n" },
    patch: P("*** Update File: m.txt", "@@", " one", "-two", "+2", " three", "-four", "+4", " five"),
    result: "Applied the patch to 1 file:\nM m.txt (1 hunk)",
    after: { "m.txt": "one\n2\r\nthree\n4\nfive\n" },
  },
  {
    name: "mixed endings: two lines for one CRLF line both take CRLF; an insertion takes the line before's",
    files: { "m.txt": "a\r\nb\r\nc\nd\n" },
    patch: P("*** Update File: m.txt", "@@", " a", "-b", "+b1", "+b2", " c", "+c2", " d"),
    result: "Applied the patch to 1 file:\nM m.txt (1 hunk)",
    after: { "m.txt": "a\r\nb1\r\nb2\r\nc\nc2\nd\n" },
  },
  {
    name: "a lone \\r ends a line (old Mac line endings), and new lines get it too",
    files: { "mac.txt": "one\rtwo\rthree\r" },
    patch: P("*** Update File: mac.txt", "@@", " one", "-two", "+2", "+2.5", " three"),
    result: "Applied the patch to 1 file:\nM mac.txt (1 hunk)",
    after: { "mac.txt": "one\r2\r2.5\rthree\r" },
  },
  {
    name: "a replaced last line without a newline stays without one (we keep it; Codex adds one)",
    files: { "t.txt": "a\r\nb" },
    patch: P("*** Update File: t.txt", "@@", " a", "-b", "+c", "+d"),
    result: "Applied the patch to 1 file:\nM t.txt (1 hunk)",
    after: { "t.txt": "a\r\nc\r\nd" },
  },
  // confinement
  {
    name: "update outside the workspace: refused",
    files: {},
    patch: P("*** Update File: ../outside.txt", "@@", "-a", "+b"),
    result:
      'Refused: "../outside.txt" is outside the workspace. Use a path inside the workspace (relative paths are resolved against its root).',
  },
  {
    name: "add at an absolute path elsewhere: refused, and the other ops are not written",
    files: { "a.txt": "a\n" },
    patch: P("*** Update File: a.txt", "@@", "-a", "+b", "*** Add File: /tmp/mini-cursor-apply-patch-escape.txt", "+x"),
    result: /^Refused: "\/tmp\/mini-cursor-apply-patch-escape\.txt" is outside the workspace\./,
  },
  {
    name: "move to outside the workspace: refused",
    files: { "a.txt": "a\n" },
    patch: P("*** Update File: a.txt", "*** Move to: ../../escaped.txt"),
    result: /^Refused: "\.\.\/\.\.\/escaped\.txt" is outside the workspace\./,
  },
  // read-before-edit
  {
    name: "update of a file not read in this conversation: refused",
    files: { "a.txt": "a\n" },
    read: [],
    patch: P("*** Update File: a.txt", "@@", "-a", "+b"),
    result:
      "Error: a.txt has not been read in this conversation since mini-cursor started (what was read before a restart is not remembered). Read it with read_file first, then edit it. Nothing was written.",
  },
  {
    name: "delete of a file not read: refused",
    files: { "a.txt": "a\n" },
    read: [],
    patch: P("*** Delete File: a.txt"),
    result:
      "Error: a.txt has not been read in this conversation since mini-cursor started (what was read before a restart is not remembered). Read it with read_file first, then edit it. Nothing was written.",
  },
  // malformed patches
  {
    name: "no Begin Patch",
    files: {},
    patch: "*** Update File: a.txt\n@@\n-a\n+b\n*** End Patch",
    result: 'Error: the patch could not be read: The patch must start with "*** Begin Patch". Nothing was changed.',
  },
  {
    name: "a hunk line without a prefix",
    files: { "a.txt": "a\n" },
    patch: P("*** Update File: a.txt", "@@", "-a", "b"),
    result:
      'Error: the patch could not be read: line 5: a hunk line starts with " " (context), "-" (remove) or "+" (add); got "b". Start each change with "@@". Nothing was changed.',
  },
  {
    name: "an update with no hunks",
    files: { "a.txt": "a\n" },
    patch: P("*** Update File: a.txt"),
    result: 'Error: the patch could not be read: line 2: "*** Update File: a.txt" has no hunks. Nothing was changed.',
  },
];

describe("apply_patch table", () => {
  test.each(rows.map((r) => [r.name, r] as const))("%s", async (_name, row) => {
    for (const [name, content] of Object.entries(row.files)) put(name, content);
    for (const name of row.read ?? Object.keys(row.files)) await read(name);
    const result = await patch(row.patch);
    if (typeof row.result === "string") expect(result).toBe(row.result);
    else expect(result).toMatch(row.result);
    const ok = result.startsWith("Applied");
    for (const [name, content] of Object.entries(ok ? { ...row.files, ...row.after } : row.files)) {
      if (ok && row.absent?.includes(name)) continue;
      expect(get(name)).toBe(content);
    }
    for (const name of row.absent ?? []) expect(existsSync(abs(name))).toBe(false);
    expect(existsSync("/tmp/mini-cursor-apply-patch-escape.txt")).toBe(false);
  });
});

describe("apply_patch", () => {
  test("a symlink leading out of the workspace is refused", async () => {
    const outside = makeTempDir();
    try {
      writeFileSync(path.join(outside.dir, "secret.txt"), "s\n");
      symlinkSync(outside.dir, abs("link"));
      const result = await patch(P("*** Update File: link/secret.txt", "@@", "-s", "+t"));
      expect(result).toMatch(/^Refused: "link\/secret\.txt" is outside the workspace/);
      expect(readFileSync(path.join(outside.dir, "secret.txt"), "utf8")).toBe("s\n");
    } finally {
      outside.cleanup();
    }
  });

  test("a file changed since it was read must be read again", async () => {
    put("a.txt", "a\n");
    await read("a.txt");
    put("a.txt", "a\nmore\n");
    expect(await patch(P("*** Update File: a.txt", "@@", "-a", "+b"))).toBe(
      "Error: a.txt has changed since you last read it (a command, a formatter or the user changed it). Read it again with read_file, then edit it. Nothing was written.",
    );
    expect(get("a.txt")).toBe("a\nmore\n");
  });

  test("files it wrote count as read: a second patch needs no read", async () => {
    expect(await patch(P("*** Add File: n.txt", "+one"))).toBe("Applied the patch to 1 file:\nA n.txt (1 line)");
    expect(await patch(P("*** Update File: n.txt", "@@", "-one", "+two"))).toBe(
      "Applied the patch to 1 file:\nM n.txt (1 hunk)",
    );
    expect(get("n.txt")).toBe("two\n");
  });

  test("`patch` is accepted for `input`; the trace gets the diff of every file", async () => {
    put("a.txt", "one\ntwo\n");
    await read("a.txt");
    const message = (await tools.apply_patch.invoke(
      {
        id: "call_1",
        name: "apply_patch",
        type: "tool_call",
        args: { patch: P("*** Update File: a.txt", "@@", " one", "-two", "+2", "*** Add File: b.txt", "+b") },
      },
      config,
    )) as ToolMessage;
    expect(message.content).toBe("Applied the patch to 2 files:\nM a.txt (1 hunk)\nA b.txt (1 line)");
    expect(message.artifact).toEqual({
      diff: [
        "--- a/a.txt",
        "+++ b/a.txt",
        "@@ -1,2 +1,2 @@",
        " one",
        "-two",
        "+2",
        "--- a/b.txt",
        "+++ b/b.txt",
        "@@ -0,0 +1,1 @@",
        "+b",
      ].join("\n"),
    });
  });

  test("the trace and the approval prompt name each file of a several-file diff", () => {
    const two = [
      "--- a/a.txt",
      "+++ b/a.txt",
      "@@ -1,1 +1,1 @@",
      "-one",
      "+++ added",
      "--- a/b.txt",
      "+++ b/b.txt",
      "@@ -0,0 +1,1 @@",
      "+b",
    ].join("\n");
    expect(diffLines(two)).toEqual([
      "a.txt:",
      "@@ -1,1 +1,1 @@",
      "-one",
      "+++ added",
      "b.txt:",
      "@@ -0,0 +1,1 @@",
      "+b",
    ]);
    expect(diffLines(["--- a/a.txt", "+++ b/a.txt", "@@ -1,1 +1,1 @@", "-one", "+1"].join("\n"))).toEqual([
      "@@ -1,1 +1,1 @@",
      "-one",
      "+1",
    ]);
  });

  test("the preview is the diff, or why the patch would be refused, and writes nothing", async () => {
    put("a.txt", "one\n");
    const preview = tools.previews.apply_patch!;
    const input = P("*** Update File: a.txt", "@@", "-one", "+1");
    expect(await preview({ input }, "t1")).toBe(
      "(this patch would be refused: a.txt has not been read in this conversation since mini-cursor started (what was read before a restart is not remembered). Read it with read_file first, then edit it. Nothing was written.)",
    );
    await read("a.txt");
    expect(await preview({ input }, "t1")).toBe(
      ["--- a/a.txt", "+++ b/a.txt", "@@ -1,1 +1,1 @@", "-one", "+1"].join("\n"),
    );
    expect(get("a.txt")).toBe("one\n");
  });

  test("the parser names each operation with its patch line", () => {
    expect(
      parsePatch(
        P(
          "*** Add File: a",
          "+x",
          "*** Delete File: b",
          "*** Update File: c",
          "*** Move to: d",
          "@@ fn()",
          " k",
          "-o",
          "+n",
          "*** End of File",
        ),
      ),
    ).toEqual([
      { kind: "add", path: "a", lines: ["x"], patchLine: 2 },
      { kind: "delete", path: "b", patchLine: 4 },
      {
        kind: "update",
        path: "c",
        moveTo: "d",
        patchLine: 5,
        hunks: [
          {
            anchors: ["fn()"],
            lines: [
              { kind: " ", text: "k" },
              { kind: "-", text: "o" },
              { kind: "+", text: "n" },
            ],
            endOfFile: true,
            patchLine: 7,
          },
        ],
      },
    ]);
    // A hunk of context only parses (a rename may carry one); a hunk with no lines does not.
    expect(parsePatch(P("*** Update File: c", "@@", " only context"))).toEqual([
      {
        kind: "update",
        path: "c",
        hunks: [{ anchors: [], lines: [{ kind: " ", text: "only context" }], endOfFile: false, patchLine: 3 }],
        patchLine: 2,
      },
    ]);
    expect(() => parsePatch(P("*** Update File: c", "@@ anchor only"))).toThrow(
      'line 3: the hunk in "c" has no lines.',
    );
    expect(() => parsePatch("*** Begin Patch\n*** Add File: a\n+x")).toThrow(
      'The patch must end with "*** End Patch".',
    );
  });
});

describe("which edit tools are offered", () => {
  test("the setting's default follows the model family", () => {
    for (const model of ["gpt-4.1", "gpt-4.1-mini", "gpt-5", "gpt-5.1-codex", "o3", "o4-mini", "openai/gpt-5-mini"])
      expect([model, defaultEditTool(model)]).toEqual([model, "both"]);
    for (const model of ["gpt-4o-mini", "gpt-4o", "claude-sonnet-4", "o1", "llama3.1", "qwen2.5-coder"])
      expect([model, defaultEditTool(model)]).toEqual([model, "edit_file"]);
    expect(loadSettings({}, { MINI_CURSOR_DOTENV: "off", MINI_CURSOR_MODEL: "gpt-5" }).editTool).toBe("both");
    // The default model (DEFAULT_MODEL, a GPT-5 model) is trained on apply_patch.
    expect(loadSettings({}, { MINI_CURSOR_DOTENV: "off" }).editTool).toBe("both");
    expect(
      loadSettings({ model: "gpt-5" }, { MINI_CURSOR_DOTENV: "off", MINI_CURSOR_EDIT_TOOL: "apply_patch" }).editTool,
    ).toBe("apply_patch");
    expect(() => loadSettings({}, { MINI_CURSOR_DOTENV: "off", MINI_CURSOR_EDIT_TOOL: "sed" })).toThrow(
      "MINI_CURSOR_EDIT_TOOL=sed is not valid: use one of edit_file, apply_patch, both.",
    );
  });

  test("the toolset binds the offered ones; the prompt describes them", () => {
    expect(offeredToolNames()).toEqual([...TOOL_NAMES]);
    expect(createTools({ workspace: tmp.dir }).map((t) => t.name)).toEqual([...TOOL_NAMES]);
    expect(createTools({ workspace: tmp.dir, editTool: "apply_patch" }).map((t) => t.name)).toEqual([
      "read_file",
      "write_file",
      "apply_patch",
      "list_directory",
      "find_files",
      "search_files",
      "execute_command",
      "process_output",
      "stop_process",
      "write_todos",
    ]);
    expect(
      createTools({ workspace: tmp.dir, editTool: "both" })
        .map((t) => t.name)
        .slice(0, 4),
    ).toEqual(["read_file", "write_file", "apply_patch", "edit_file"]);
    const prompt = (names: string[]) =>
      buildSystemPrompt({ workspace: "/w", projectInstructions: null, date: new Date(0), platform: "p", tools: names });
    const prefers = (text: string) => `- Changing part of an existing file: ${text}. write_file only for`;
    expect(prompt(offeredToolNames("apply_patch"))).toContain(prefers("use apply_patch"));
    expect(prompt(offeredToolNames("edit_file"))).toContain(prefers("use edit_file"));
    expect(prompt(offeredToolNames("edit_file"))).not.toMatch(/apply_patch/);
    expect(prompt(offeredToolNames("both"))).toContain(
      prefers("prefer apply_patch (your model family knows its format), or edit_file for one small replacement"),
    );
  });

  test("the toolset the CLI and Studio build, and the runtime's prompt, follow the settings", () => {
    const gpt = loadSettings({ model: "gpt-5", workspace: tmp.dir, sandbox: "off" }, { MINI_CURSOR_DOTENV: "off" });
    const { tools: offered } = createAgentTools(gpt);
    expect(offered.map((t) => t.name).slice(0, 4)).toEqual(["read_file", "write_file", "apply_patch", "edit_file"]);
    expect(createRuntime(gpt, { tools: offered }).systemPrompt()).toContain("prefer apply_patch");
    const other = loadSettings(
      { model: "gpt-4o-mini", workspace: tmp.dir, sandbox: "off" },
      { MINI_CURSOR_DOTENV: "off" },
    );
    const runtime = createRuntime(other);
    expect(runtime.tools.map((t) => t.name)).toEqual([...TOOL_NAMES]);
    expect(runtime.systemPrompt()).not.toMatch(/apply_patch/);
  });

  test("apply_patch asks like a file edit, and always asks when it touches the command rules", async () => {
    const ctx = { workspace: tmp.dir, home: "/nonexistent-home" };
    const call = (input: string) => ({ name: "apply_patch", args: { input } });
    expect(await classifyCall(call(P("*** Add File: a.txt", "+a")), "suggest", [], ctx)).toEqual({
      action: "ask",
      reason: "changes a.txt (approval mode suggest)",
      alwaysAsks: false,
      alwaysKeys: ["apply_patch"],
    });
    expect((await classifyCall(call(P("*** Add File: a.txt", "+a")), "auto-edit", [], ctx)).action).toBe("run");
    expect(
      await classifyCall(call(P("*** Add File: mini-cursor.config.json", "+{}")), "full-auto", [], ctx),
    ).toMatchObject({ action: "ask", alwaysAsks: true });
    expect(
      await classifyCall(
        { name: "edit_file", args: { file_path: "mini-cursor.config.json", old_string: "a", new_string: "b" } },
        "full-auto",
        [],
        ctx,
      ),
    ).toMatchObject({ action: "ask", alwaysAsks: true });
  });
});

describe.each(["graph", "loop"] as const)("apply_patch in the %s engine", (kind) => {
  test("the model is offered apply_patch; the approval prompt shows the diff; the trace gets it", async () => {
    put("app.ts", "export const port = 3000;\n");
    const input = P("*** Update File: app.ts", "@@", "-export const port = 3000;", "+export const port = 8080;");
    const h = engineHarness(
      kind,
      tmp.dir,
      [
        { toolCalls: [{ name: "read_file", args: { filePath: "app.ts" } }] },
        { toolCalls: [{ name: "apply_patch", args: { input } }] },
        "Changed the port.",
      ],
      { approval: "suggest" },
      { tools: createTools({ workspace: tmp.dir, editTool: "apply_patch" }) },
    );
    const summary = await h.run("use port 8080", { answers: [{ decision: "approve" }] });
    expect(summary.reason).toBe("done");
    expect(h.model.boundToolNames).toContain("apply_patch");
    expect(h.model.boundToolNames).not.toContain("edit_file");
    expect(get("app.ts")).toBe("export const port = 8080;\n");
    expect(h.approvals).toHaveLength(1);
    const diff = [
      "--- a/app.ts",
      "+++ b/app.ts",
      "@@ -1,1 +1,1 @@",
      "-export const port = 3000;",
      "+export const port = 8080;",
    ].join("\n");
    expect(h.approvals[0]!.preview).toBe(diff);
    const result = eventsOf(h.events, "tool_result").find((e) => e.name === "apply_patch")!;
    expect(result.content).toBe("Applied the patch to 1 file:\nM app.ts (1 hunk)");
    expect(result.diff).toBe(diff);
  });
});
