import type { SlashResult } from "../contracts/slash.js";
import { PLAN_ACCEPTED_TASK } from "../policy/plan-mode.js";
import { acceptMode } from "./plan.js";
import type { Session } from "./session.js";
import { formatTurns, listTurns, rewindTo, sessionUndoContext, undoLastTurn } from "./undo.js";
import { findThreadIn } from "../memory/thread-store.js";
import type { Settings } from "../settings.js";
import { APPROVAL_MODES, type ApprovalMode } from "../contracts/modes.js";
import type { Renderer } from "../ui/render.js";
import { formatProcesses } from "../ui/repl.js";
import { formatThreads } from "../ui/threads-table.js";
import { formatMcpStatus } from "../mcp/status.js";
import { describeModel } from "../models/model.js";
import { withThousands } from "../thousands.js";
import { expandCustomCommand, geminiCommandHint, loadCustomCommands, runShellLines } from "./custom-commands.js";

/**
 * What the prompt does after a command: read the next line, leave the session, or run
 * `request` next as if it had been typed (/plan <request>, /plan accept).
 */
export type { SlashResult };

/** What a command may use: the session (thread, approval mode, tools) and the trace. */
export interface SlashContext {
  session: Session;
  renderer: Renderer;
  /** A yes/no question on the terminal; absent off a terminal (then /undo refuses to overwrite hand-edited files). */
  confirm?: (question: string) => Promise<boolean>;
  /** The commands of this line, custom ones included (runSlashCommand sets it; /help lists it). */
  commands?: readonly SlashCommand[];
  /** Custom command files not used, or not in full, and why (for /help). */
  customNotes?: readonly string[];
}

/** Says `text`, then the prompt reads the next line. */
function said(renderer: Pick<Renderer, "note">, text: string): SlashResult {
  renderer.note(text);
  return "continue";
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
  if ((sub === "accept" || sub === "off") && session.approval !== "plan")
    return said(renderer, `Not in plan mode (approval mode ${session.approval}): /plan [request] plans first.`);
  if (sub === "accept") {
    const chosen = mode ? (mode as ApprovalMode) : acceptMode(session);
    if (!APPROVAL_MODES.includes(chosen) || chosen === "plan")
      return said(renderer, `Usage: /plan accept [${APPROVAL_MODES.filter((m) => m !== "plan").join(" | ")}]`);
    if (!session.planReady)
      return said(
        renderer,
        "There is no plan to accept yet: send a request in plan mode first (/plan <request>). Still in plan mode.",
      );
    session.acceptPlan(chosen);
    renderer.note(`Plan accepted: approval mode ${chosen}.`);
    return { request: PLAN_ACCEPTED_TASK };
  }
  if (sub === "off") {
    session.setApproval(acceptMode(session));
    return said(renderer, `Left plan mode. Approval mode: ${session.approval}.`);
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
  /**
   * What to run instead when this command is given as a one-shot task (`mini-cursor "/undo"`),
   * where it would otherwise reach the model as a request. Absent: open a session and type it.
   */
  outside?(arg: string, command: HintCommand): string;
}

/**
 * A command line for a hint, pasteable from where mini-cursor was started: the launcher and the
 * workspace, then `words`, each quoted for the shell except placeholders such as `<id>`.
 */
export type HintCommand = (...words: string[]) => string;

/** /ps and /kill outside a session: processes belong to the run that started them. */
const processesOutside = (command: HintCommand) =>
  `Background processes live as long as the run that started them: a one-shot run on a terminal lists those still running when it ends and keeps them up until Ctrl-C; in a session (${command()} on a terminal) /ps lists them and /kill stops one.`;

/** How to reach a session on the latest thread, for the commands that only a session has. */
const inSession = (name: string, command: HintCommand) =>
  `Open a session on the thread (${command("--continue")}, on a terminal) and type ${name} there.`;

const HELP_FOOTER =
  "Anything else is a request for the agent. Ctrl-C during a turn cancels that turn; at the prompt it clears the line.";

const CUSTOM_HEADING =
  "Custom commands (your folders, then the project's .mini-cursor/commands/ and .claude/commands/ once trusted; $ARGUMENTS and $1…$9 are filled in, !`cmd` asks as a command does):";

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
    ...(customNotes.length > 0
      ? ["Custom command files not used, or not in full:", ...customNotes.map((n) => `  ${n}`)]
      : []),
    HELP_FOOTER,
  ].join("\n");
}

export const SLASH_COMMANDS: readonly SlashCommand[] = [
  {
    name: "/help",
    usage: "/help",
    summary: "this list",
    outside: (_arg, command) =>
      `For the options: ${command("--help")}. In a session (${command()} on a terminal), /help lists its commands.`,
    run: (_arg, { renderer, commands, customNotes }) =>
      said(renderer, helpText(commands ?? SLASH_COMMANDS, customNotes)),
  },
  {
    name: "/new",
    aliases: ["/clear"],
    usage: "/new",
    summary: "start a fresh thread (also /clear)",
    outside: (_arg, command) =>
      `A task given without --thread or --continue starts a new thread: ${command("<task>")}.`,
    run: (_arg, { session, renderer }) => said(renderer, `New thread ${session.newThread()}.`),
  },
  {
    name: "/compact",
    usage: "/compact [focus]",
    summary: "summarise the conversation so far into one note now, to save context (focus: what the summary must keep)",
    run: (arg, { session, renderer }): SlashResult => ({
      work: async (signal) => {
        renderer.event({ type: "notice", step: 0, message: "summarising the conversation…", wait: true });
        try {
          const done = await session.compact(arg, signal);
          renderer.pause();
          renderer.note(
            done
              ? `Compacted: ${done.summarised} messages (about ${withThousands(done.tokensBefore)} tokens) are one summary now (about ${withThousands(done.tokensAfter)} tokens), saved to thread ${session.threadId}; the conversation goes on from it, and /undo and /rewind reach back to it only.\nSummary:\n${done.summary}`
              : "Nothing to compact: this thread has no conversation yet, or is one summary already.",
          );
        } catch (err) {
          renderer.pause();
          renderer.note(
            signal.aborted
              ? "Compaction cancelled; the conversation is as it was."
              : `Not compacted (the conversation is as it was): ${(err as Error).message}`,
          );
        }
      },
    }),
  },
  {
    name: "/model",
    usage: "/model",
    summary: "the model this session uses, and how to choose another",
    run: (_arg, { session, renderer }) =>
      said(
        renderer,
        `This session uses ${describeModel(session.settings)}. The model is chosen when mini-cursor starts: --model <name> (or MINI_CURSOR_MODEL in the environment or .env). To go on with this thread with another model: /exit, then start again with --thread ${session.threadId} --model <name>.`,
      ),
    outside: (arg, command) =>
      `The model is chosen when mini-cursor starts: ${command("--model", arg || "<name>", "<task>")}.`,
  },
  {
    name: "/threads",
    usage: "/threads",
    summary: "saved threads: id, first request, last update, steps",
    outside: (_arg, command) => `To list them: ${command("--threads")}.`,
    run: async (_arg, { session, renderer }): Promise<SlashResult> =>
      said(renderer, formatThreads(await session.threads.list(), session.threadId)),
  },
  {
    name: "/resume",
    usage: "/resume <id>",
    summary: "continue a saved thread",
    outside: (arg, command) =>
      `To go on with a thread: ${command("--thread", arg || "<id>", "<task>")} (--continue instead of --thread takes the latest; ${command("--threads")} lists them).`,
    run: async (arg, { session, renderer }): Promise<SlashResult> => {
      if (!arg) return said(renderer, "Usage: /resume <id> (see /threads for ids).");
      const found = await findThreadIn(session.threads, arg);
      if (!found) return said(renderer, `No saved thread "${arg}" in this workspace; /threads lists them.`);
      if (found.engine !== session.parts.engine.name)
        return said(
          renderer,
          `Thread ${found.id} was made with --engine ${found.engine}, and this session runs ${session.parts.engine.name}: to continue it, start mini-cursor --engine ${found.engine} --thread ${found.id}.`,
        );
      try {
        await session.useThread(found.id);
      } catch (err) {
        return said(renderer, `Not resumed: ${(err as Error).message}`);
      }
      return said(renderer, `Resumed thread ${found.id}: ${found.firstRequest}`);
    },
  },
  {
    name: "/approval",
    usage: "/approval <mode>",
    summary: APPROVAL_MODES.join(" | "),
    outside: (arg, command) => `To run a task in a mode: ${command("--approval", arg || "<mode>", "<task>")}.`,
    run: (arg, { session, renderer }) => {
      if (!APPROVAL_MODES.includes(arg as ApprovalMode))
        return said(renderer, `Approval mode is ${session.approval}. Usage: /approval ${APPROVAL_MODES.join(" | ")}`);
      session.setApproval(arg as ApprovalMode);
      return said(renderer, `Approval mode: ${session.approval}.`);
    },
  },
  {
    name: "/plan",
    usage: "/plan [request]",
    summary: "plan mode: only read-only tools run and the model ends with a plan (and runs the request)",
    outside: (arg, command) =>
      /^(accept|off)\b/.test(arg)
        ? inSession(`/plan ${arg}`, command)
        : `To plan: ${command("--approval", "plan", arg || "<request>")}; the run ends with the command that carries the plan out.`,
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
    outside: (_arg, command) => processesOutside(command),
    run: (_arg, { session, renderer }) => said(renderer, formatProcesses(session.parts.tools.processes.list())),
  },
  {
    name: "/kill",
    usage: "/kill <id>",
    summary: "stop a background process",
    outside: (_arg, command) => processesOutside(command),
    run: async (arg, { session, renderer }): Promise<SlashResult> => {
      if (!arg) return said(renderer, "Usage: /kill <id> (see /ps for ids).");
      const stopped = await session.parts.tools.processes.stop(arg);
      return said(renderer, stopped ? `Stopped ${arg}.` : `No running background process "${arg}"; /ps lists them.`);
    },
  },
  {
    name: "/mcp",
    usage: "/mcp",
    summary: "MCP servers: state and tools",
    outside: (_arg, command) => `To see the MCP servers: ${command("--mcp-list")}.`,
    run: (_arg, { session, renderer }) => said(renderer, formatMcpStatus(session.parts.mcp?.status() ?? [])),
  },
  {
    name: "/undo",
    usage: "/undo [--force]",
    summary: "put back the files the last turn changed and drop it from the thread",
    outside: (arg, command) => {
      const force = /(^|\s)--force\b/.test(arg) ? ["--force"] : [];
      return `To undo the latest thread's last turn: ${command("--continue", "--undo", ...force)} (another thread's: --thread <id> instead of --continue; ${command("--threads")} lists them).`;
    },
    run: async (arg, { session, renderer, confirm }): Promise<SlashResult> => {
      const words = arg.split(/\s+/).filter(Boolean);
      return said(
        renderer,
        (await undoLastTurn(sessionUndoContext(session), undoOptions("/undo", words, confirm))).text,
      );
    },
  },
  {
    name: "/rewind",
    usage: "/rewind [<n>]",
    summary: "list the turns; with n, go back to before turn n (--force as for /undo)",
    outside: (arg, command) =>
      `${inSession(arg ? `/rewind ${arg}` : "/rewind", command)} To take back only the last turn: ${command("--continue", "--undo")}.`,
    run: async (arg, { session, renderer, confirm }): Promise<SlashResult> => {
      const words = arg.split(/\s+/).filter(Boolean);
      const target = words.find((w) => w !== "--force");
      if (target === undefined) {
        const { messages, snapshots } = await session.parts.history.read(session.threadId);
        return said(renderer, formatTurns(listTurns(messages, snapshots)));
      }
      return said(
        renderer,
        (await rewindTo(sessionUndoContext(session), Number(target), undoOptions("/rewind", words, confirm))).text,
      );
    },
  },
  {
    name: "/exit",
    aliases: ["/quit"],
    usage: "/exit",
    summary: "stop background processes and leave (also Ctrl-D, or Ctrl-C twice at an empty prompt)",
    outside: () => "A task given as an argument runs once and exits: there is no session to leave.",
    run: () => "exit",
  },
];

/**
 * Session commands of Claude Code, Codex and Gemini CLI that mini-cursor does not have under that
 * name, with what does the same here (issue 44 item 6): an unknown command names its equivalent.
 */
const PEER_COMMANDS: Record<string, string> = {
  "/status":
    "the banner at the session's start shows the workspace, model, thread, approval mode, engine and sandbox; /model, /approval and /threads show them one at a time.",
  "/init":
    "mini-cursor reads AGENTS.md in the workspace into every request (project instructions): ask the agent to write one.",
  "/memory": "project instructions are AGENTS.md in the workspace: edit it, or ask the agent to.",
  "/cost": "each turn's closing line shows its tokens, and the cost for models with a known price.",
  "/stats": "each turn's closing line shows its tokens, and the cost for models with a known price.",
  "/usage": "each turn's closing line shows its tokens, and the cost for models with a known price.",
  "/permissions":
    "/approval <mode> sets what runs without asking; project rules allow, ask or deny commands (docs/safety.md).",
  "/approvals": "/approval <mode> sets what runs without asking.",
  "/chat": "/threads lists the saved threads, /resume <id> goes back to one, /new starts one.",
  "/restore": "/undo puts back the files the last turn changed; /rewind <n> goes back further.",
  "/tools": "/mcp lists the MCP servers and their tools; the built-in tools are in docs/tools-and-mcp.md.",
  "/agents":
    "sub-agent types are Markdown files in ~/.config/mini-cursor/agents/ or ~/.claude/agents/, and the project's .mini-cursor/agents/ or .claude/agents/ once trusted (docs/sub-agents.md).",
  "/config":
    "settings are environment variables or .env lines (docs/configuration.md); /approval changes the mode here.",
  "/settings":
    "settings are environment variables or .env lines (docs/configuration.md); /approval changes the mode here.",
  "/login":
    "set OPENAI_API_KEY (and OPENAI_BASE_URL for another provider) in the environment or .env, then start again.",
  "/logout": "remove OPENAI_API_KEY from the environment or .env; with no key the offline model runs.",
  "/auth":
    "set OPENAI_API_KEY (and OPENAI_BASE_URL for another provider) in the environment or .env, then start again.",
  "/add-dir": "a session works in one folder, its workspace: start mini-cursor with --workspace <dir>.",
  "/directory": "a session works in one folder, its workspace: start mini-cursor with --workspace <dir>.",
  "/bashes": "/ps lists the background processes, /kill <id> stops one.",
  "/shell": "!<command> asks the agent to run a command; /ps lists the background processes.",
  "/review":
    "ask for a review in words, or make /review your own: a Markdown file in ~/.config/mini-cursor/commands/ (custom commands).",
  "/export": "the thread is saved as you go (/threads lists them); --record <file> saves a run's model responses.",
  "/diff": "/rewind lists the turns; ask the agent to show git diff.",
  "/hooks": "hooks are set in your config file (docs/configuration.md#hooks).",
};

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
    const peer = PEER_COMMANDS[name];
    // Tests drive commands with a session of only the parts they need.
    const workspace = ctx.session.settings?.workspace;
    const gemini = workspace ? geminiCommandHint(workspace, name) : undefined;
    return said(
      ctx.renderer,
      gemini
        ? `Unknown command ${name}: ${gemini}`
        : peer
          ? `Unknown command ${name}: mini-cursor has no ${name} (other agents do). Here, ${peer} /help lists the commands.`
          : `Unknown command ${name}. /help lists the commands.`,
    );
  }
  // The rest of the line as typed: a custom command's $ARGUMENTS keeps its spacing and lines.
  return command.run(text.slice(name.length).trim(), { ...ctx, commands });
}

/**
 * A one-shot task that is a built-in session command (`mini-cursor "/undo"`): what to run
 * instead, said in full; undefined for any other task, which is sent as typed.
 */
export function sessionCommandHint(
  task: string,
  command: HintCommand,
  commands: readonly SlashCommand[] = SLASH_COMMANDS,
): string | undefined {
  const text = task.trim();
  const typed = text.split(/\s/, 1)[0]!;
  // A custom command (`found.source`) runs as typed; a built-in one or another agent's is named in any case (`/Undo`).
  const name = typed.toLowerCase();
  const found =
    commands.find((c) => c.name === typed || c.aliases?.includes(typed)) ??
    commands.find((c) => !c.source && (c.name === name || c.aliases?.includes(name)));
  const notSent =
    "sent as a task, the model would read it as a request and might act on it its own way, so it was not sent.";
  if (!found && PEER_COMMANDS[name] && !commands.some((c) => c.source && c.name === name))
    return `${typed} is another agent's session command, not a task: ${notSent} In mini-cursor, ${PEER_COMMANDS[name]}`;
  if (!found || found.source) return undefined;
  const arg = text.slice(typed.length).trim();
  const instead = found.outside ? found.outside(arg, command) : inSession(found.name, command);
  return `${typed} is a command of the interactive session, not a task: ${notSent} ${instead}`;
}

/**
 * `!command`, Claude Code's and Gemini CLI's shell escape, as a request: the agent is asked to
 * run exactly that command, through the same approval, rules and sandbox as any command (there is
 * no way around them), and the conversation keeps what it printed.
 */
export function shellEscapeRequest(command: string): string {
  return command.includes("`") ? `Run exactly this command:\n\n${command}` : `Run \`${command}\`.`;
}

/** Every name a built-in command answers to: a custom command file cannot take one. */
export const BUILT_IN_NAMES: readonly string[] = SLASH_COMMANDS.flatMap((c) => [c.name, ...(c.aliases ?? [])]);

/**
 * The session's commands for one line: the built-in table, then the custom commands read now
 * (app/custom-commands.ts), each sending its template as the request.
 */
export function sessionSlashCommands(
  settings: Pick<Settings, "workspace" | "userCommands" | "claudeHome" | "trustStore">,
): {
  commands: SlashCommand[];
  customNotes: string[];
} {
  const custom = loadCustomCommands(settings, BUILT_IN_NAMES);
  const entries: SlashCommand[] = custom.commands.map((c) => ({
    name: c.name,
    usage: c.template.argumentHint ? `${c.name} ${c.template.argumentHint}` : c.name,
    summary: `${c.template.description ?? "(no description)"}${c.source === "project" ? " [project]" : ""}`,
    source: c.source,
    run: async (arg, { session, renderer, confirm }): Promise<SlashResult> => {
      const expanded = await expandCustomCommand(c, arg, { trustStore: settings.trustStore, renderer, confirm });
      if (expanded === "refused") return "continue";
      if (!expanded.shell) return { request: expanded.request };
      return {
        prepare: (signal, approver) => runShellLines(expanded, { session, approver, signal, renderer, name: c.name }),
      };
    },
  }));
  return { commands: [...SLASH_COMMANDS, ...entries], customNotes: custom.problems };
}
