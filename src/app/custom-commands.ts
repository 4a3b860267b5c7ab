import { lstatSync } from "node:fs";
import path from "node:path";
import type { ToolMessage } from "@langchain/core/messages";
import {
  expandCommandBody,
  fillShellOutputs,
  IGNORED_FIELDS,
  parseCommandTemplate,
  type CommandTemplate,
} from "../context/command-template.js";
import type { Approver } from "../contracts/events.js";
import { STATE_DIR_NAME } from "../memory/state-dir.js";
import { normalizeResponse } from "../policy/approval-answer.js";
import { reviewToolCalls } from "../policy/review.js";
import { COMMAND_NAME, NAMESPACE_SEPARATOR, readCommandFolder } from "../security/command-files.js";
import { isTrusted, trustFile } from "../security/trust.js";
import type { Settings } from "../settings.js";
import type { Renderer } from "../ui/render.js";
import type { Session } from "./session.js";
import { sanitizeForTerminal } from "../ui/sanitize.js";

const EXECUTE_COMMAND = "execute_command";

/**
 * Custom slash commands: Markdown prompt templates (context/command-template.ts) in the person's
 * folders and the project's. `/name args` sends the template with the arguments put in as the
 * request. The files are read again for each command line, so a new file works at once.
 * - Folders, first wins for a name: the person's own (`<user config>/commands/`,
 *   Settings.userCommands), Claude Code's user folder (`~/.claude/commands/`), the project's
 *   `.mini-cursor/commands/`, then the project's `.claude/commands/`. So a person's file wins over
 *   a project's, and in one place the folder named for mini-cursor wins over Claude Code's. A
 *   built-in command wins over every file. /help says when a file is not used and why.
 * - A subfolder is a namespace: `.claude/commands/frontend/component.md` is `/frontend:component`.
 * - A project's command is the repository's words sent as the person's request: it runs only
 *   once the person trusted that file's current content, in the trust store the rules files
 *   use (security/trust.ts), asked on a terminal at first use; off a terminal it is refused.
 * - `` !`cmd` `` in a body runs before the prompt is sent, as a model's execute_command call would
 *   in the session's approval mode (the same classifier, rules, question and sandbox); its output,
 *   at most MAX_SHELL_OUTPUT_CHARS, takes its place. One declined or refused: the prompt is not sent.
 */

/** The project's commands folder, relative to the workspace. */
export const PROJECT_COMMANDS_DIR = `${STATE_DIR_NAME}/commands`;
/** Claude Code's commands folder: in the project, and under its user folder (Settings.claudeHome). */
export const CLAUDE_COMMANDS_DIR = ".claude/commands";
/** Gemini CLI's commands folder, not read: using one of its names says how to bring it over. */
const GEMINI_COMMANDS_DIR = ".gemini/commands";
/** Lines of a project command shown when asking whether to trust it. */
const PREVIEW_LINES = 12;
/** The most of one `` !`cmd` ``'s result put in a prompt (the command's own result is bounded too). */
export const MAX_SHELL_OUTPUT_CHARS = 10_000;

export interface CustomCommand {
  /** With the slash. */
  name: string;
  source: "user" | "project";
  /** Absolute path (the trust store's key). */
  file: string;
  /** How messages name the file: `.mini-cursor/commands/x.md` or the absolute path of the person's own. */
  shown: string;
  hash: string;
  template: CommandTemplate;
}

export interface CustomCommands {
  commands: CustomCommand[];
  /** Files not used, or not in full (front matter not honoured), one sentence each (for /help). */
  problems: string[];
}

/** The folders read, first wins: the person's two, then the project's two (each checked to be plain folders). */
function commandSources(settings: Pick<Settings, "workspace" | "userCommands" | "claudeHome">) {
  const project = (relative: string) => {
    const dir = path.join(settings.workspace, relative);
    const [top] = relative.split("/");
    return {
      source: "project" as const,
      ...readCommandFolder(dir, relative, [path.join(settings.workspace, top!), dir]),
    };
  };
  const claudeUser = path.join(settings.claudeHome, "commands");
  return [
    { source: "user" as const, ...readCommandFolder(settings.userCommands, settings.userCommands) },
    { source: "user" as const, ...readCommandFolder(claudeUser, claudeUser) },
    project(PROJECT_COMMANDS_DIR),
    project(CLAUDE_COMMANDS_DIR),
  ];
}

/** The custom commands of this workspace; `builtIn` are the names (with the slash) files may not take. */
export function loadCustomCommands(
  settings: Pick<Settings, "workspace" | "userCommands" | "claudeHome">,
  builtIn: readonly string[],
): CustomCommands {
  const problems: string[] = [];
  const commands: CustomCommand[] = [];
  for (const { source, files, problems: found } of commandSources(settings)) {
    problems.push(...found);
    for (const f of files) {
      const name = `/${f.name}`;
      const shown = source === "project" ? path.relative(settings.workspace, f.file) : f.file;
      if (builtIn.includes(name)) {
        problems.push(`${shown} is not used: ${name} is a built-in command, which wins.`);
        continue;
      }
      const taken = commands.find((c) => c.name === name);
      if (taken) {
        const whose = taken.source === "user" && source === "project" ? "your own" : "the";
        problems.push(`${shown} is not used: ${whose} ${name} of ${taken.shown} wins.`);
        continue;
      }
      const template = parseCommandTemplate(f.text);
      if (template.ignored)
        problems.push(
          `${shown}: ${template.ignored.map((k) => `${k} is not honoured (${IGNORED_FIELDS[k]})`).join("; ")}.`,
        );
      commands.push({ name, source, file: f.file, shown, hash: f.hash, template });
    }
  }
  return { commands, problems };
}

/**
 * For a `/name` that is no command: Gemini CLI's file of that name in the project
 * (`.gemini/commands/a/b.toml` for `/a:b`), which mini-cursor does not read, and how to bring it
 * over. Undefined when there is none.
 */
export function geminiCommandHint(workspace: string, name: string): string | undefined {
  const parts = name.replace(/^\//, "").split(NAMESPACE_SEPARATOR);
  if (!parts.every((p) => COMMAND_NAME.test(p))) return undefined;
  const relative = `${GEMINI_COMMANDS_DIR}/${parts.join("/")}.toml`;
  try {
    if (!lstatSync(path.join(workspace, relative)).isFile()) return undefined;
  } catch {
    return undefined;
  }
  const target = `${PROJECT_COMMANDS_DIR}/${parts.join("/")}.md`;
  return `${name} is a Gemini CLI command (${relative}), and mini-cursor does not read Gemini's TOML commands. To use it here, copy the text of its prompt = """…""" into ${target}, with its description = "…" as a front matter line (---, description: …, ---): {{args}} works as it is; change !{cmd} to !\`cmd\` and @{path} to @path. The file is then asked about once, as every project command is.`;
}
/**
 * What a custom command line came to: the request to send, or nothing (refused, said why). With
 * `shell`, the request holds a mark for each command's output (runShellLines fills them).
 */
export type Expansion = { request: string; shell?: string[] } | "refused";

/** Asks a yes/no question; absent off a terminal. */
export type Confirm = (question: string) => Promise<boolean>;

/**
 * `command` with `args` put in, after the trust question for a project's command that is not
 * trusted yet (off a terminal: refused, saying how to trust it).
 */
export async function expandCustomCommand(
  command: CustomCommand,
  args: string,
  context: { trustStore: string; renderer: Pick<Renderer, "note">; confirm?: Confirm },
): Promise<Expansion> {
  const { renderer, confirm } = context;
  if (command.source === "project" && !isTrusted(context.trustStore, command.file, command.hash)) {
    const what = `${command.name} is a project command (${command.shown}): this repository's words, sent to the model as your request.`;
    if (!confirm) {
      renderer.note(
        `${what} It has not been trusted, so it was not run: use it once in mini-cursor on a terminal in this workspace to be asked (asked again when the file changes).`,
      );
      return "refused";
    }
    const preview = command.template.body.split("\n").slice(0, PREVIEW_LINES);
    const more = command.template.body.split("\n").length - preview.length;
    renderer.note(
      sanitizeForTerminal(
        [what, ...preview.map((l) => `  │ ${l}`), ...(more > 0 ? [`  │ … ${more} more lines`] : [])].join("\n"),
      ),
    );
    const yes = await confirm(
      "Trust this file's current content? (remembered outside the repository; asked again if it changes) [y/N] ",
    );
    if (!yes) {
      renderer.note(`Not trusted: ${command.name} was not run.`);
      return "refused";
    }
    trustFile(context.trustStore, command.file, command.hash);
    renderer.note(`Trusted ${command.shown} (saved in ${context.trustStore}).`);
  }
  const ignored = command.template.ignored?.length
    ? ` (its ${command.template.ignored.join(" and ")} ${command.template.ignored.length > 1 ? "are" : "is"} not honoured: /help says why)`
    : "";
  renderer.note(`${command.name}: the prompt of ${command.shown}${args ? ", with your arguments" : ""}${ignored}.`);
  const { text, shell } = expandCommandBody(command.template.body, args);
  return shell.length > 0 ? { request: text, shell } : { request: text };
}

/** What running a command file's `` !`cmd` `` lines needs: the session (its tools, mode, workspace) and who answers. */
export interface ShellLinesContext {
  session: Pick<Session, "settings" | "parts" | "approval">;
  approver: Approver;
  signal: AbortSignal;
  renderer: Pick<Renderer, "note" | "event">;
  /** The command, for the messages. */
  name: string;
}

/** How a command that exited 0 begins its result (tools/execute-command.ts). */
const SUCCESS_LINE = "Exit code: 0\n";

/** A command's result as a prompt holds it: at most MAX_SHELL_OUTPUT_CHARS, saying what was cut. */
function boundedOutput(text: string): string {
  if (text.length <= MAX_SHELL_OUTPUT_CHARS) return text;
  return `${text.slice(0, MAX_SHELL_OUTPUT_CHARS)}\n[… ${text.length - MAX_SHELL_OUTPUT_CHARS} more characters of this output were cut]`;
}

/**
 * Runs an expansion's `` !`cmd` `` commands one by one, each as a model's execute_command call is
 * judged (policy/review.ts: the mode, the classifier, the project rules, the question, an
 * [e]dit judged again) and run (the session's tool: sandbox, environment, redaction), and shown on
 * the trace as a call. The request with their outputs; undefined when one was not run (said why):
 * the prompt is then not sent, since it was written to rely on that output.
 */
export async function runShellLines(
  expansion: { request: string; shell?: string[] },
  context: ShellLinesContext,
): Promise<string | undefined> {
  const { session, renderer } = context;
  const tools = session.parts.tools;
  const outputs: string[] = [];
  for (const [i, command] of (expansion.shell ?? []).entries()) {
    const call = { id: `command-file-${i + 1}`, name: EXECUTE_COMMAND, args: { command }, type: "tool_call" as const };
    renderer.event({ type: "tool_call", step: 0, id: call.id, name: call.name, args: call.args });
    const started = Date.now();
    const review = await reviewToolCalls({
      calls: [call],
      answered: new Set(),
      mode: session.approval,
      always: [],
      workspace: session.settings.workspace,
      tools,
      configFiles: { trustStore: session.settings.trustStore, mcpUserConfig: session.settings.mcp.userConfig },
      ask: async (request) => normalizeResponse(await context.approver(request)),
    });
    const declined = review.declined[0];
    if (declined || context.signal.aborted) {
      const content = declined ? String(declined.content) : "Cancelled before it ran.";
      renderer.event({ ...resultEvent(call, started, content, "error"), notRun: true });
      renderer.note(
        `${context.name} was not sent: its command \`${command}\` did not run (${content.split("\n")[0]}).`,
      );
      return undefined;
    }
    const args = review.edits[call.id] ?? call.args;
    const result = (await tools[EXECUTE_COMMAND].invoke({ ...call, args }, { signal: context.signal })) as ToolMessage;
    const content = typeof result.content === "string" ? result.content : JSON.stringify(result.content);
    renderer.event(resultEvent(call, started, content, result.status === "error" ? "error" : "success"));
    // Inlined as Claude Code does, the output alone: the exit line stays only when it says something.
    const output = content.startsWith(SUCCESS_LINE)
      ? content.slice(SUCCESS_LINE.length).replace(/^\(no output\)$/, "")
      : content;
    outputs.push(boundedOutput(output));
  }
  return fillShellOutputs(expansion.request, outputs);
}

function resultEvent(
  call: { id: string; name: string },
  started: number,
  content: string,
  status: "success" | "error",
) {
  return {
    type: "tool_result" as const,
    step: 0,
    id: call.id,
    name: call.name,
    status,
    content,
    durationMs: Date.now() - started,
  };
}

/** The command a line names (`/name args`), with the arguments as typed, when it names one of `commands`. */
export function findCustomCommand(
  line: string,
  commands: readonly CustomCommand[],
): { command: CustomCommand; args: string } | undefined {
  const text = line.trim();
  const name = text.split(/\s/, 1)[0]!;
  const command = commands.find((c) => c.name === name);
  return command ? { command, args: text.slice(name.length).trim() } : undefined;
}
