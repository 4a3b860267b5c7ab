import {
  expandCommandBody,
  expandTemplate,
  fillShellOutputs,
  parseCommandTemplate,
  shellMark,
} from "../../src/context/command-template.js";
import { shellSplit } from "../../src/shell-quote.js";
import { parseAgentFile } from "../../src/context/agent-files.js";

describe("custom command templates", () => {
  test("front matter gives the description and argument hint; the body is the rest", () => {
    expect(
      parseCommandTemplate('---\ndescription: "Review a file"\nargument-hint: <file>\nmodel: x\n---\nReview $1.\n'),
    ).toEqual({ description: "Review a file", argumentHint: "<file>", body: "Review $1.", ignored: ["model"] });
    expect(parseCommandTemplate("\uFEFFJust a prompt.\r\n")).toEqual({ body: "Just a prompt." });
    // A `---` further down is Markdown, not front matter.
    expect(parseCommandTemplate("Intro\n---\ndescription: no\n---\n").description).toBeUndefined();
  });

  test("YAML's block scalars (> and |, as Claude Code's files write long values) are read whole, in agent files too", () => {
    const front =
      "---\ndescription: >-\n  Reviews a file\n  for style.\n\nargument-hint: |\n  <file>\ntools:\n  - Read\n---\nBody\n";
    expect(parseCommandTemplate(front)).toEqual({
      description: "Reviews a file for style.",
      argumentHint: "<file>",
      body: "Body",
    });
    expect(parseAgentFile(front)?.fields).toEqual({
      description: "Reviews a file for style.",
      "argument-hint": "<file>",
      tools: ["Read"],
    });
  });

  test("$ARGUMENTS is everything typed, $1…$9 its words split as a shell splits them", () => {
    expect(expandTemplate("Fix $1 in $2 ($ARGUMENTS)", `"a b" 'c d' e`)).toBe(`Fix a b in c d ("a b" 'c d' e)`);
    expect(expandTemplate("{{args}}!", "hi there")).toBe("hi there!");
    // Missing words are empty; $10 is $1 followed by 0.
    expect(expandTemplate("[$3] $10", "x")).toBe("[] x0");
    // Arguments are put in once: a $1 typed as an argument stays as typed.
    expect(expandTemplate("Say $1", "'$2 and $ARGUMENTS'")).toBe("Say $2 and $ARGUMENTS");
  });

  test("a template without placeholders gets the arguments after a blank line", () => {
    expect(expandTemplate("Write the release notes.", "for 1.2")).toBe("Write the release notes.\n\nfor 1.2");
    expect(expandTemplate("Write the release notes.", "  ")).toBe("Write the release notes.");
  });

  test("shellSplit: quotes group, backslashes escape, nothing is expanded", () => {
    expect(shellSplit(`a "b c" 'd e' f\\ g "h\\"i" $HOME \`x\``)).toEqual([
      "a",
      "b c",
      "d e",
      "f g",
      'h"i',
      "$HOME",
      "`x`",
    ]);
    expect(shellSplit(`'' "" x`)).toEqual(["", "", "x"]);
    expect(shellSplit(`"unclosed rest`)).toEqual(["unclosed rest"]);
  });

  test("!`cmd` is taken out of the body with a mark where its output goes; arguments are put in it, never made into one", () => {
    const body = "Status: !`git status --short $1`\nLog: !`git log -3`\nAsked: $ARGUMENTS";
    const out = expandCommandBody(body, "src '!`rm -rf ~`'");
    expect(out.shell).toEqual(["git status --short src", "git log -3"]);
    expect(out.text).toBe(`Status: ${shellMark(0)}\nLog: ${shellMark(1)}\nAsked: src '!\`rm -rf ~\`'`);
    // Outputs go in once: a mark inside an output is not filled again.
    expect(fillShellOutputs(out.text, [`M a.ts ${shellMark(1)}`, "abc"])).toBe(
      `Status: M a.ts ${shellMark(1)}\nLog: abc\nAsked: src '!\`rm -rf ~\`'`,
    );
    // NUL in a file or in what is typed cannot forge a mark.
    expect(expandCommandBody(`a ${shellMark(0)}`, `b ${shellMark(0)}`)).toEqual({ text: "a 0\n\nb 0", shell: [] });
    // Only `!` right before a backquoted span on one line is a command.
    expect(expandCommandBody("Use `npm test` and !`a\nb`.", "").shell).toEqual([]);
  });

  test("allowed-tools and model are named as not honoured; description and argument-hint are read", () => {
    expect(
      parseCommandTemplate("---\nallowed-tools: Bash(git add:*)\nmodel: opus\ndescription: d\n---\nx").ignored,
    ).toEqual(["allowed-tools", "model"]);
    expect(parseCommandTemplate("---\ndisable-model-invocation: true\n---\nx").ignored).toBeUndefined();
  });
});
