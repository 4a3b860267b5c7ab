import path from "node:path";
import { expandTemplate, parseCommandTemplate, type CommandTemplate } from "../context/command-template.js";
import { STATE_DIR_NAME } from "../memory/state-dir.js";
import { readCommandFolder } from "../security/command-files.js";
import { isTrusted, trustFile } from "../security/trust.js";
import type { Settings } from "../settings.js";
import type { Renderer } from "../ui/render.js";
import { sanitizeForTerminal } from "../ui/sanitize.js";

/**
 * Custom slash commands: Markdown prompt templates (context/command-template.ts) in the person's
 * folder (`<user config>/commands/`, Settings.userCommands) and the project's
 * (`.mini-cursor/commands/`). `/name args` sends the template with the arguments put in as the
 * request. The files are read again for each command line, so a new file works at once.
 * - A built-in command wins over a file of the same name; the person's own file wins over the
 *   project's. /help says when a file is not used and why.
 * - A project's command is the repository's words sent as the person's request: it runs only
 *   once the person trusted that file's current content, in the trust store the rules files
 *   use (security/trust.ts), asked on a terminal at first use; off a terminal it is refused.
 */

/** The project's commands folder, relative to the workspace. */
export const PROJECT_COMMANDS_DIR = `${STATE_DIR_NAME}/commands`;
/** Lines of a project command shown when asking whether to trust it. */
const PREVIEW_LINES = 12;

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
  /** Files not used, one sentence each (for /help). */
  problems: string[];
}

/** The custom commands of this workspace; `builtIn` are the names (with the slash) files may not take. */
export function loadCustomCommands(
  settings: Pick<Settings, "workspace" | "userCommands">,
  builtIn: readonly string[],
): CustomCommands {
  const problems: string[] = [];
  const commands: CustomCommand[] = [];
  const projectDir = path.join(settings.workspace, PROJECT_COMMANDS_DIR);
  const sources = [
    { source: "user" as const, ...readCommandFolder(settings.userCommands, settings.userCommands) },
    {
      source: "project" as const,
      ...readCommandFolder(projectDir, PROJECT_COMMANDS_DIR, [
        path.join(settings.workspace, STATE_DIR_NAME),
        projectDir,
      ]),
    },
  ];
  for (const { source, files, problems: found } of sources) {
    problems.push(...found);
    for (const f of files) {
      const name = `/${f.name}`;
      const shown = source === "project" ? `${PROJECT_COMMANDS_DIR}/${path.basename(f.file)}` : f.file;
      if (builtIn.includes(name)) {
        problems.push(`${shown} is not used: ${name} is a built-in command, which wins.`);
        continue;
      }
      const taken = commands.find((c) => c.name === name);
      if (taken) {
        problems.push(`${shown} is not used: your own ${name} (${taken.shown}) wins.`);
        continue;
      }
      commands.push({ name, source, file: f.file, shown, hash: f.hash, template: parseCommandTemplate(f.text) });
    }
  }
  return { commands, problems };
}

/** What a custom command line came to: the request to send, or nothing (refused, said why). */
export type Expansion = { request: string } | "refused";

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
  renderer.note(`${command.name}: the prompt of ${command.shown}${args ? ", with your arguments" : ""}.`);
  return { request: expandTemplate(command.template.body, args) };
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
