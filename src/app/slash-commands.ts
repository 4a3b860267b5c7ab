import { PLAN_ACCEPTED_TASK } from "../policy/plan-mode.js";
import { acceptMode } from "./plan.js";
import type { Session } from "./session.js";
import { formatTurns, listTurns, rewindTo, sessionUndoContext, undoLastTurn } from "./undo.js";
import { findThreadIn } from "../memory/thread-store.js";
import { APPROVAL_MODES, type ApprovalMode, type Settings } from "../settings.js";
import type { Renderer } from "../ui/render.js";
import { formatProcesses } from "../ui/repl.js";
import { formatThreads } from "../ui/threads-table.js";
import { formatMcpStatus } from "../mcp/status.js";
import { expandCustomCommand, loadCustomCommands } from "./custom-commands.js";

/**
 * What the prompt does after a command: read the next line, leave the session, or run
 * `request` next as if it had been typed (/plan <request>, /plan accept).
 */
export type SlashResult = "continue" | "exit" | { request: string };

/** What a command may use: the session (thread, approval mode, tools) and the trace. */
export interface SlashContext {
  session: Session;
  renderer: Renderer;
  /** A yes/no question on the terminal; absent off a terminal (then /undo refuses to overwrite hand-edited files). */
  confirm?: (question: string) => Promise<boolean>;
  /** The commands of this line, custom ones included (runSlashCommand sets it; /help lists it). */
  commands?: readonly SlashCommand[];
  /** Custom command files not used, and why (for /help). */
  customNotes?: readonly string[];
}

/** /undo and /rewind: `--force` overwrites files changed by hand; otherwise ask (on a terminal) or refuse. */
function undoOptions(command: string, words: readonly string[], confirm: SlashContext["confirm"]) {
  return {
    overwrite: words.includes("--force"),
    confirm:
      confirm &&
      ((paths: string[]) => confirm(`Overwrite ${paths.length} file(s) changed by hand (${paths.join(", ")})? [y/N] `)),
    forceHint: `${command} --force`,
  };
}

/** `/plan`, `/plan <request>`, `/plan accept [mode]`, `/plan off`. */
function planCommand(arg: string, { session, renderer }: SlashContext): SlashResult {
  const [sub, mode] = arg.split(/\s+/);
  if ((sub === "accept" || sub === "off") && session.approval !== "plan") {
    renderer.note(`Not in plan mode (approval mode ${session.approval}): /plan [request] plans first.`);
    return "continue";
  }
  if (sub === "accept") {
    const chosen = mode ? (mode as ApprovalMode) : acceptMode(session);
    if (!APPROVAL_MODES.includes(chosen) || chosen === "plan") {
      renderer.note(`Usage: /plan accept [${APPROVAL_MODES.filter((m) => m !== "plan").join(" | ")}]`);
      return "continue";
    }
    if (!session.planReady) {
      renderer.note(
        "There is no plan to accept yet: send a request in plan mode first (/plan <request>). Still in plan mode.",
      );
      return "continue";
    }
    session.acceptPlan(chosen);
    renderer.note(`Plan accepted: approval mode ${chosen}.`);
    return { request: PLAN_ACCEPTED_TASK };
  }
  if (sub === "off") {
    session.setApproval(acceptMode(session));
    renderer.note(`Left plan mode. Approval mode: ${session.approval}.`);
    return "continue";
  }
  session.setApproval("plan");
  renderer.note(
    "Plan mode: only read-only tools run; the model ends with a plan (/plan accept to carry it out, /plan off to leave).",
  );
  return arg ? { request: arg } : "continue";
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
  /** Further /help rows for forms of the command with their own meaning (e.g. "/plan accept [mode]"). */
  more?: readonly { usage: string; summary: string }[];
  /** `arg` is the rest of the line as typed, trimmed (may be empty). */
  run(arg: string, ctx: SlashContext): SlashResult | Promise<SlashResult>;
  /** For a custom command (app/custom-commands.ts): whose folder it comes from. */
  source?: "user" | "project";
}

const HELP_FOOTER =
  "Anything else is a request for the agent. Ctrl-C during a turn cancels that turn; at the prompt it clears the line.";

const CUSTOM_HEADING =
  "Custom commands (your folder, then the project's .mini-cursor/commands/ once trusted; $ARGUMENTS and $1…$9 are filled in):";

/** The /help text, from the table: built-in commands, then custom ones, then custom files not used. */
export function helpText(commands: readonly SlashCommand[], customNotes: readonly string[] = []): string {
  const entries = commands.flatMap((c) => [c, ...(c.more ?? [])]);
  // The usage column is as wide as its longest entry, so every summary starts in one column.
  const width = Math.max(...entries.map((c) => c.usage.length));
  const row = (c: { usage: string; summary: string }) => `  ${c.usage.padEnd(width)}  ${c.summary}`;
  const builtIn = entries.filter((c) => !("source" in c && c.source));
  const custom = commands.filter((c) => c.source);
  return [
    "Commands:",
    ...builtIn.map(row),
    ...(custom.length > 0 ? [CUSTOM_HEADING, ...custom.map(row)] : []),
    ...(customNotes.length > 0 ? ["Custom command files not used:", ...customNotes.map((n) => `  ${n}`)] : []),
    HELP_FOOTER,
  ].join("\n");
}

export const SLASH_COMMANDS: readonly SlashCommand[] = [
  {
    name: "/help",
    usage: "/help",
    summary: "this list",
    run: (_arg, { renderer, commands, customNotes }) => {
      renderer.note(helpText(commands ?? SLASH_COMMANDS, customNotes));
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
    run: async (_arg, { session, renderer }): Promise<SlashResult> => {
      renderer.note(formatThreads(await session.threads.list(), session.threadId));
      return "continue";
    },
  },
  {
    name: "/resume",
    usage: "/resume <id>",
    summary: "continue a saved thread",
    run: async (arg, { session, renderer }): Promise<SlashResult> => {
      if (!arg) {
        renderer.note("Usage: /resume <id> (see /threads for ids).");
        return "continue";
      }
      const found = await findThreadIn(session.threads, arg);
      if (!found) {
        renderer.note(`No saved thread "${arg}" in this workspace; /threads lists them.`);
        return "continue";
      }
      if (found.engine !== session.parts.engine.name) {
        renderer.note(
          `Thread ${found.id} was made with --engine ${found.engine}, and this session runs ${session.parts.engine.name}: to continue it, start mini-cursor --engine ${found.engine} --thread ${found.id}.`,
        );
        return "continue";
      }
      try {
        await session.useThread(found.id);
      } catch (err) {
        renderer.note(`Not resumed: ${(err as Error).message}`);
        return "continue";
      }
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
      session.setApproval(arg as ApprovalMode);
      renderer.note(`Approval mode: ${session.approval}.`);
      return "continue";
    },
  },
  {
    name: "/plan",
    usage: "/plan [request]",
    summary: "plan mode: only read-only tools run and the model ends with a plan (and runs the request)",
    run: planCommand,
    more: [
      {
        usage: "/plan accept [mode]",
        summary: "carry out the plan on this thread (mode: the one before plan mode, else auto-edit)",
      },
      { usage: "/plan off", summary: "leave plan mode without carrying anything out" },
    ],
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
    name: "/mcp",
    usage: "/mcp",
    summary: "MCP servers: state and tools",
    run: (_arg, { session, renderer }) => {
      renderer.note(formatMcpStatus(session.parts.mcp?.status() ?? []));
      return "continue";
    },
  },
  {
    name: "/undo",
    usage: "/undo [--force]",
    summary: "put back the files the last turn changed and drop it from the thread",
    run: async (arg, { session, renderer, confirm }): Promise<SlashResult> => {
      const words = arg.split(/\s+/).filter(Boolean);
      renderer.note((await undoLastTurn(sessionUndoContext(session), undoOptions("/undo", words, confirm))).text);
      return "continue";
    },
  },
  {
    name: "/rewind",
    usage: "/rewind [<n>]",
    summary: "list the turns; with n, go back to before turn n (--force as for /undo)",
    run: async (arg, { session, renderer, confirm }): Promise<SlashResult> => {
      const words = arg.split(/\s+/).filter(Boolean);
      const target = words.find((w) => w !== "--force");
      if (target === undefined) {
        const { messages, snapshots } = await session.parts.history.read(session.threadId);
        renderer.note(formatTurns(listTurns(messages, snapshots)));
        return "continue";
      }
      renderer.note(
        (await rewindTo(sessionUndoContext(session), Number(target), undoOptions("/rewind", words, confirm))).text,
      );
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
  const text = line.trim();
  const name = text.split(/\s/, 1)[0]!;
  const command = commands.find((c) => c.name === name || c.aliases?.includes(name));
  if (!command) {
    ctx.renderer.note(`Unknown command ${name}. /help lists the commands.`);
    return "continue";
  }
  // The rest of the line as typed: a custom command's $ARGUMENTS keeps its spacing and lines.
  return command.run(text.slice(name.length).trim(), { ...ctx, commands });
}

/** Every name a built-in command answers to: a custom command file cannot take one. */
export const BUILT_IN_NAMES: readonly string[] = SLASH_COMMANDS.flatMap((c) => [c.name, ...(c.aliases ?? [])]);

/**
 * The session's commands for one line: the built-in table, then the custom commands read now
 * (app/custom-commands.ts), each sending its template as the request.
 */
export function sessionSlashCommands(settings: Pick<Settings, "workspace" | "userCommands" | "trustStore">): {
  commands: SlashCommand[];
  customNotes: string[];
} {
  const custom = loadCustomCommands(settings, BUILT_IN_NAMES);
  const entries: SlashCommand[] = custom.commands.map((c) => ({
    name: c.name,
    usage: c.template.argumentHint ? `${c.name} ${c.template.argumentHint}` : c.name,
    summary: `${c.template.description ?? "(no description)"}${c.source === "project" ? " [project]" : ""}`,
    source: c.source,
    run: async (arg, { renderer, confirm }): Promise<SlashResult> => {
      const expanded = await expandCustomCommand(c, arg, { trustStore: settings.trustStore, renderer, confirm });
      return expanded === "refused" ? "continue" : expanded;
    },
  }));
  return { commands: [...SLASH_COMMANDS, ...entries], customNotes: custom.problems };
}
