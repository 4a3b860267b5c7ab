import type { Session } from "./session.js";
import { findThread, listThreads } from "../memory/threads.js";
import { APPROVAL_MODES, type ApprovalMode } from "../settings.js";
import type { Renderer } from "../ui/render.js";
import { formatProcesses } from "../ui/repl.js";
import { formatThreads } from "../ui/threads-table.js";

/** What the prompt does after a command: read the next line, or leave the session. */
export type SlashResult = "continue" | "exit";

/** What a command may use: the session (thread, approval mode, tools) and the trace. */
export interface SlashContext {
  session: Session;
  renderer: Renderer;
}

/**
 * One slash command of the interactive session. To add one, add an entry to SLASH_COMMANDS:
 * /help lists the table in its order.
 */
export interface SlashCommand {
  /** With the slash, e.g. "/resume". */
  name: string;
  /** Other spellings that run it (not listed by /help). */
  aliases?: readonly string[];
  /** How /help shows the call, e.g. "/resume <id>". */
  usage: string;
  /** One line for /help. */
  summary: string;
  /** `arg` is the rest of the line, trimmed (may be empty). */
  run(arg: string, ctx: SlashContext): SlashResult | Promise<SlashResult>;
}

const HELP_USAGE_WIDTH = 18;
const HELP_FOOTER =
  "Anything else is a request for the agent. Ctrl-C during a turn cancels that turn; at the prompt it clears the line.";

/** The /help text, from the table. */
export function helpText(commands: readonly SlashCommand[]): string {
  const rows = commands.map((c) => `  ${c.usage.padEnd(HELP_USAGE_WIDTH)} ${c.summary}`);
  return ["Commands:", ...rows, HELP_FOOTER].join("\n");
}

export const SLASH_COMMANDS: readonly SlashCommand[] = [
  {
    name: "/help",
    usage: "/help",
    summary: "this list",
    run: (_arg, { renderer }) => {
      renderer.note(helpText(SLASH_COMMANDS));
      return "continue";
    },
  },
  {
    name: "/new",
    usage: "/new",
    summary: "start a fresh thread",
    run: (_arg, { session, renderer }) => {
      renderer.note(`New thread ${session.newThread()}.`);
      return "continue";
    },
  },
  {
    name: "/threads",
    usage: "/threads",
    summary: "saved threads: id, first request, last update, steps",
    run: (_arg, { session, renderer }) => {
      renderer.note(formatThreads(listThreads(session.settings.workspace), session.threadId));
      return "continue";
    },
  },
  {
    name: "/resume",
    usage: "/resume <id>",
    summary: "continue a saved thread",
    run: (arg, { session, renderer }) => {
      if (!arg) {
        renderer.note("Usage: /resume <id> (see /threads for ids).");
        return "continue";
      }
      const found = findThread(session.settings.workspace, arg);
      if (!found) {
        renderer.note(`No saved thread "${arg}" in this workspace; /threads lists them.`);
        return "continue";
      }
      session.threadId = found.id;
      session.resumed = true;
      renderer.note(`Resumed thread ${found.id}: ${found.firstRequest}`);
      return "continue";
    },
  },
  {
    name: "/approval",
    usage: "/approval <mode>",
    summary: APPROVAL_MODES.join(" | "),
    run: (arg, { session, renderer }) => {
      if (!APPROVAL_MODES.includes(arg as ApprovalMode)) {
        renderer.note(`Approval mode is ${session.approval}. Usage: /approval ${APPROVAL_MODES.join(" | ")}`);
        return "continue";
      }
      session.approval = arg as ApprovalMode;
      renderer.note(`Approval mode: ${session.approval}.`);
      return "continue";
    },
  },
  {
    name: "/ps",
    usage: "/ps",
    summary: "background processes (dev servers) with their URLs",
    run: (_arg, { session, renderer }) => {
      renderer.note(formatProcesses(session.parts.tools.processes.list()));
      return "continue";
    },
  },
  {
    name: "/kill",
    usage: "/kill <id>",
    summary: "stop a background process",
    run: async (arg, { session, renderer }): Promise<SlashResult> => {
      if (!arg) {
        renderer.note("Usage: /kill <id> (see /ps for ids).");
        return "continue";
      }
      const stopped = await session.parts.tools.processes.stop(arg);
      renderer.note(stopped ? `Stopped ${arg}.` : `No running background process "${arg}"; /ps lists them.`);
      return "continue";
    },
  },
  {
    name: "/exit",
    aliases: ["/quit"],
    usage: "/exit",
    summary: "stop background processes and leave (also Ctrl-D, or Ctrl-C twice at an empty prompt)",
    run: () => "exit",
  },
];

/** Runs one slash command line; exported so tests can call it without a terminal. */
export async function runSlashCommand(
  line: string,
  ctx: SlashContext,
  commands: readonly SlashCommand[] = SLASH_COMMANDS,
): Promise<SlashResult> {
  const [name, ...rest] = line.trim().split(/\s+/);
  const command = commands.find((c) => c.name === name || c.aliases?.includes(name!));
  if (!command) {
    ctx.renderer.note(`Unknown command ${name}. /help lists the commands.`);
    return "continue";
  }
  return command.run(rest.join(" "), ctx);
}
