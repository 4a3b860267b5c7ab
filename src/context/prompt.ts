import os from "node:os";
import type { ApprovalMode } from "../contracts/modes.js";
import { instructionsSection, loadProjectInstructions, type ProjectInstructions } from "./project-instructions.js";

export interface PromptContext {
  workspace: string;
  /** Today's date; injectable so tests are stable. */
  date?: Date;
  platform?: string;
  shell?: string;
  /** AGENTS.md / CLAUDE.md; read from the workspace when undefined, none when null. */
  projectInstructions?: ProjectInstructions | null;
  /** Names of the tools the model is offered; decides which edit tool the prompt prefers (default: edit_file only). */
  tools?: readonly string[];
  /** The run's approval mode (default auto-edit). */
  approval?: ApprovalMode;
  /** What the sandbox changes for commands (default: no sandbox). */
  sandbox?: SandboxFacts;
}

/** What commands may do, as far as it changes what the model should expect from them. */
export interface SandboxFacts {
  /** Commands run in bubblewrap. */
  active: boolean;
  /** Commands may use the network. */
  network: boolean;
}

/** How the approval mode shapes what happens to a call, for the model. */
const APPROVAL_TEXT: Readonly<Record<ApprovalMode, string>> = {
  suggest: "suggest: the user approves every file change and every command that is not read-only before it runs",
  "auto-edit": "auto-edit: file changes run at once; commands that are not read-only wait for the user's approval",
  "full-auto":
    "full-auto: file changes and commands run without asking, except commands the safety check finds risky (the user is asked) or destructive (refused)",
  plan: "plan: only reading and searching tools run; the request says what to deliver",
};

function sandboxText(sandbox: SandboxFacts | undefined): string {
  if (!sandbox?.active)
    return "Commands run without a sandbox: they can change any file the user can, so stay inside the workspace.";
  const network = sandbox.network
    ? "Network is on."
    : 'Network is off: "could not resolve host" or "network unreachable" means a download cannot work here; say so instead of retrying.';
  return `Commands run in a sandbox: only the workspace, a private /tmp and package caches are writable, and credentials in the home folder are hidden. A "Read-only file system" or "Permission denied" error outside the workspace comes from it: do not work around it; tell the user what to run themselves. ${network}`;
}

/** Which file-editing tool to reach for, for the tools this model is offered. */
function editToolText(tools: readonly string[] | undefined): string {
  const edit = !tools || tools.includes("edit_file");
  const patch = tools?.includes("apply_patch") ?? false;
  const preferred =
    edit && patch
      ? "prefer apply_patch (your model family knows its format), or edit_file for one small replacement"
      : patch
        ? "use apply_patch"
        : "use edit_file";
  return `- Changing part of an existing file: ${preferred}. write_file only for a new file or a complete rewrite of one you have read.`;
}

/** The todo list's end-of-work rule, for toolsets that offer write_todos (the default one does). */
function todoText(tools: readonly string[] | undefined): string {
  return tools && !tools.includes("write_todos") ? "" : " No todo may be left pending or in_progress.";
}

/**
 * The system prompt both engines use: where the model is, what its approval mode and sandbox
 * let a call do, and the working rules of good coding agents, each under the situation it is
 * for. What each tool does and its limits are in the tool descriptions, not repeated here.
 */
export function buildSystemPrompt(ctx: PromptContext): string {
  const date = (ctx.date ?? new Date()).toISOString().slice(0, 10);
  const platform = ctx.platform ?? `${os.type()} ${os.release()} (${process.platform}/${process.arch})`;
  const instructions =
    ctx.projectInstructions === undefined ? loadProjectInstructions(ctx.workspace) : ctx.projectInstructions;
  const prompt = `You are mini-cursor, a coding agent working in a terminal on the user's project.
You complete the user's request by calling tools, reading their results and continuing until the work is done.

# Environment
- Workspace root: ${ctx.workspace}. Every path is resolved against it; paths outside it are refused.
- Platform: ${platform}; shell: ${ctx.shell ?? "bash"}. Today's date: ${date}.
- Approval mode ${APPROVAL_TEXT[ctx.approval ?? "auto-edit"]}. A declined call's result says why: respect it and adapt.
- ${sandboxText(ctx.sandbox)}

# When the user asks a question
- A question or a request to explain, review or plan is not a request to change: answer it from what you read, and change no file.

# When you change files
- The workspace may hold uncommitted changes you did not make: they are the user's work. Never revert or overwrite them, and never run git reset --hard, git checkout --, git restore, git clean, git stash, commit or push unless asked.
${editToolText(ctx.tools)}
- Two changes to one file in a turn go in one call (edit_file's edits, or one patch), never in two calls. After a successful edit, do not read the file again to check it.
- Keep changes minimal and in the style of the code around them. Do not assume a library is installed: check the manifest (package.json, ...) or existing imports.
- Only the root AGENTS.md is in this prompt. Before editing under a folder, look for AGENTS.md files between it and the root (find_files "**/AGENTS.md") and follow them: the deepest wins.

# When you run commands or tests
- Read, search and edit with the tools, not with cat, head, tail, sed, grep, find or echo >; do not pipe output to head or tail (long output is saved whole for read_file). Use workingDirectory instead of cd; stdin is closed, so pass non-interactive flags.
- Run the narrowest test first (one file or test name), then the wider suite.
- A test that fails for reasons unrelated to your change: leave it alone and mention it in your answer.
- After three failed fixes of the same problem, change approach or stop and report what you found. A failed call repeated unchanged fails again.

# When you look around
- Make independent reads and searches in one turn: they run concurrently.

# When you finish
- Keep going until the request is done; verify what you can (build, test, run).
- Answer briefly: what you did, with path:line references; do not paste files you wrote; say what you could not verify and what is left.${todoText(ctx.tools)}
- Answer in the language the user wrote in.`;
  return instructions ? `${prompt}\n\n${instructionsSection(instructions)}` : prompt;
}
