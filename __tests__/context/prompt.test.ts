import { convertToOpenAITool } from "@langchain/core/utils/function_calling";
import { buildSystemPrompt, type PromptContext } from "../../src/context/prompt.js";
import { estimateTextTokens } from "../../src/models/tokens.js";
import { createTools, offeredToolNames } from "../../src/tools/index.js";

/**
 * What the model is told (issue 28): the guidance good coding agents give their models, each
 * piece under the situation it covers; the approval mode and sandbox facts of the run; the edit
 * tool to prefer; and a size that stays within 10% of what it was before the guidance came.
 */

/** System prompt and tool schemas, by the project's estimate, before the guidance (edit_file toolset). */
const TOKENS_BEFORE_GUIDANCE = 4372;
/** The first request may grow by at most this share for the guidance. */
const MAX_GROWTH = 0.1;

const base: PromptContext = {
  workspace: "/home/user/project",
  projectInstructions: null,
  date: new Date(0),
  platform: "Linux 6.8 (linux/x64)",
  approval: "auto-edit",
  sandbox: { active: true, network: true },
  tools: offeredToolNames("edit_file"),
};

function firstRequestTokens(ctx: PromptContext, editTool: "edit_file" | "both"): { prompt: number; total: number } {
  const tools = createTools({ workspace: "/tmp", editTool });
  const prompt = estimateTextTokens(buildSystemPrompt(ctx));
  const schemas = estimateTextTokens(JSON.stringify(tools.map((t) => convertToOpenAITool(t))));
  return { prompt, total: prompt + schemas };
}

test("the prompt's size is pinned, and the first request stays within 10% of its size before the guidance", () => {
  // The prompt is pinned exactly; the tool descriptions change with the tools, so the total is bounded.
  expect(firstRequestTokens(base, "edit_file").prompt).toBe(749);
  expect(firstRequestTokens(base, "edit_file").total).toBeLessThanOrEqual(TOKENS_BEFORE_GUIDANCE * (1 + MAX_GROWTH));
  const both = firstRequestTokens({ ...base, tools: offeredToolNames("both") }, "both");
  expect(both.total).toBeLessThanOrEqual(4939 * (1 + MAX_GROWTH));
});

test("the guidance is in sections named after the situation each covers, and the tools are not described twice", () => {
  const prompt = buildSystemPrompt(base);
  expect(prompt.match(/^# .*$/gm)).toEqual([
    "# Environment",
    "# When the user asks a question",
    "# When you change files",
    "# When you run commands or tests",
    "# When you look around",
    "# When you finish",
  ]);
  const section = (heading: string) => prompt.split(`# ${heading}\n`)[1]!.split("\n\n")[0]!;
  expect(section("When the user asks a question")).toContain("answer it from what you read, and change no file");
  const change = section("When you change files");
  expect(change).toContain("uncommitted changes you did not make: they are the user's work. Never revert");
  expect(change).toContain(
    "git reset --hard, git checkout --, git restore, git clean, git stash, commit or push unless asked",
  );
  expect(change).toContain("Two changes to one file in a turn go in one call");
  expect(change).toContain("do not read the file again");
  expect(change).toContain("Keep changes minimal and in the style of the code around them. Do not assume a library");
  expect(change).toContain("Only the root AGENTS.md is in this prompt.");
  const commands = section("When you run commands or tests");
  expect(commands).toContain("not with cat, head, tail, sed, grep, find or echo >; do not pipe output to head or tail");
  expect(commands).toContain("Run the narrowest test first");
  expect(commands).toContain("unrelated to your change: leave it alone and mention it");
  expect(commands).toContain("After three failed fixes of the same problem, change approach or stop and report");
  expect(section("When you look around")).toContain("independent reads and searches in one turn");
  const finish = section("When you finish");
  expect(finish).toContain("path:line references; do not paste files you wrote; say what you could not verify");
  expect(finish).toContain("No todo may be left pending or in_progress.");
  expect(prompt).not.toContain("# Tools");
  expect(prompt).not.toContain("- read_file:");
});

test("it states the approval mode of the run and what the sandbox changes for commands", () => {
  const env = (ctx: Partial<PromptContext>) =>
    buildSystemPrompt({ ...base, ...ctx })
      .split("# Environment\n")[1]!
      .split("\n\n")[0]!;
  expect(env({ approval: "suggest" })).toContain(
    "- Approval mode suggest: the user approves every file change and every command that is not read-only before it runs.",
  );
  expect(env({ approval: "full-auto" })).toContain(
    "- Approval mode full-auto: file changes and commands run without asking",
  );
  expect(env({ approval: "plan" })).toContain("- Approval mode plan: only reading and searching tools run");
  expect(env({})).toContain(
    '- Commands run in a sandbox: only the workspace, a private /tmp and package caches are writable, and credentials in the home folder are hidden. A "Read-only file system" or "Permission denied" error outside the workspace comes from it',
  );
  expect(env({})).toContain("Network is on.");
  expect(env({ sandbox: { active: true, network: false } })).toContain(
    'Network is off: "could not resolve host" or "network unreachable" means a download cannot work here',
  );
  expect(env({ sandbox: { active: false, network: true } })).toContain(
    "- Commands run without a sandbox: they can change any file the user can",
  );
});

test("it names the edit tool to prefer for the tools this model is offered", () => {
  const line = (names: string[]) =>
    buildSystemPrompt({ ...base, tools: names })
      .split("\n")
      .find((l) => l.startsWith("- Changing part of an existing file:"));
  expect(line(offeredToolNames("edit_file"))).toBe(
    "- Changing part of an existing file: use edit_file. write_file only for a new file or a complete rewrite of one you have read.",
  );
  expect(line(offeredToolNames("both"))).toBe(
    "- Changing part of an existing file: prefer apply_patch (your model family knows its format), or edit_file for one small replacement. write_file only for a new file or a complete rewrite of one you have read.",
  );
  expect(line(offeredToolNames("apply_patch"))).toContain(": use apply_patch.");
});
