import type { StopReason } from "../contracts/events.js";
import { describeModel } from "../models/model.js";
import type { Settings } from "../settings.js";
import { isInteractiveTerminal } from "../ui/terminal.js";
import {
  askOnTerminal,
  askPlanOnTerminal,
  noticeOnTerminal,
  terminalStreams,
  watchTerminalKeys,
} from "../ui/terminal.js";
import { carryOutCommand, hasPlanToReview, reviewPlan, SESSION_PLAN_LATER } from "./plan.js";
import { continueCommand } from "../ui/hints.js";
import { withSavedAlwaysRules } from "../policy/always.js";
import { createTerminalApprover, nonInteractiveApprover } from "../ui/approval-prompt.js";
import { createJsonRenderer, createPrettyRenderer, type Renderer } from "../ui/render.js";
import { pausingKeys, runRepl } from "../ui/repl.js";
import { finishSnapshots } from "../agent/snapshot-step.js";
import type { BackgroundProcess } from "../workspace/processes.js";
import { askedYes, confirmConfigTrust } from "./config-trust.js";
import { confirmAgentTrust } from "./agent-trust.js";
import { McpConfigError, prepareMcp } from "./mcp.js";
import { EXIT } from "./exit-codes.js";
import { onSkippedFiles } from "../regular-file.js";
import { createSession, type Session } from "./session.js";
import { onStopSignals, sessionSignals } from "./process-signals.js";
import {
  BUILT_IN_NAMES,
  type HintCommand,
  runSlashCommand,
  sessionCommandHint,
  sessionSlashCommands,
  shellEscapeRequest,
} from "./slash-commands.js";
import { shellQuote } from "../shell-quote.js";
import { filePromptHistory } from "./prompt-history.js";
import { gateText } from "../workspace/output-gate.js";
import { fillShellOutputs } from "../context/command-template.js";
import {
  expandCustomCommand,
  findCustomCommand,
  geminiCommandHint,
  loadCustomCommands,
  runShellLines,
} from "./custom-commands.js";

/**
 * Running the agent from the CLI: a one-shot task or an interactive session, with the trace,
 * approvals on the terminal, signals and background processes handled. Loaded by cli.ts only
 * when there is something to run.
 */

const REASON_EXIT: Record<StopReason, number> = {
  done: EXIT.ok,
  max_steps: EXIT.maxSteps,
  interrupted: EXIT.interrupted,
  error: EXIT.failure,
  loop_guard: EXIT.failure,
  hook_stop: EXIT.failure,
  not_run: EXIT.notRun,
};

function createRenderer(settings: Settings, interactive: boolean, echoRequest = true): Renderer {
  return settings.json
    ? createJsonRenderer({ verbose: settings.verbose })
    : createPrettyRenderer({
        color: settings.color && Boolean(process.stdout.isTTY),
        spinner: interactive && Boolean(process.stdout.isTTY),
        verbose: settings.verbose,
        echoRequest,
      });
}

function showBanner(session: Session, renderer: Renderer, version: string): void {
  const { settings } = session;
  renderer.banner({
    version,
    workspace: settings.workspace,
    model: describeModel(settings),
    threadId: session.threadId,
    resumed: session.resumed,
    approval: session.approval,
    engine: settings.engine,
    sandbox: session.parts.sandbox.summary,
  });
}

/** MCP servers for a session; an invalid user config file is said and skipped, not fatal. */
async function sessionMcp(settings: Settings, renderer: Renderer) {
  try {
    // A slow start is a wait like the provider's: spinner text on a terminal, a `notice` in --json.
    return await prepareMcp(
      settings,
      (text) => renderer.note(text),
      false,
      (message) => renderer.event({ type: "notice", step: 0, message, wait: true }),
    );
  } catch (err) {
    if (!(err instanceof McpConfigError)) throw err;
    renderer.note(`${err.message}. Its MCP servers are not started; fix the file to use them.`);
    return undefined;
  }
}

function reportStopped(stopped: BackgroundProcess[], renderer: Renderer): void {
  for (const p of stopped)
    renderer.note(`Stopped background process ${p.id} (${p.command})${p.url ? ` at ${p.url}` : ""}.`);
}

/**
 * Closing may wait: background processes stopping, traces still being posted (at most 5 s).
 * Said when it takes longer than MINI_CURSOR_WAIT_NOTICE_MS, like any other wait (issue 26).
 */
async function closeSession(session: Session, renderer: Renderer, reason?: string): Promise<BackgroundProcess[]> {
  const timer = setTimeout(
    () => renderer.note("Finishing: stopping background processes and posting pending traces…"),
    session.settings.waitNoticeMs,
  );
  try {
    const stopped = await session.close(reason);
    // Snapshots steps took while the first one ran become whole only when it ends: undo needs them.
    await finishSnapshots(session.settings.workspace, (text) => renderer.note(text), session.settings.waitNoticeMs);
    return stopped;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * On a terminal, dev servers the task started stay up until Ctrl-C, so "open
 * http://localhost:5173" is true; without one they are stopped before exiting.
 */
async function keepServersUp(session: Session, renderer: Renderer): Promise<void> {
  const running = session.running();
  if (running.length === 0) return;
  renderer.note("Still running in the background:");
  for (const p of running) renderer.note(`  ${p.id}  ${p.url ?? "(no URL)"}  ${p.command}`);
  renderer.note("Press Ctrl-C to stop them and exit.");
  // Until the first stop signal.
  await new Promise<void>((resolve) => {
    const off = onStopSignals(() => {
      off();
      resolve();
    });
  });
}

/** Questions on the terminal, "always for this project" answers saved; `cancel` ends the turn (Ctrl-C at a question). */
function terminalApprover(settings: Settings, renderer: Renderer, cancel: () => void) {
  return withSavedAlwaysRules(
    createTerminalApprover(() => renderer.pause(), cancel, { editor: settings.editor }),
    settings.workspace,
    (t) => renderer.note(t),
  );
}

/** `--mcp-list`: on a terminal an untrusted project config is asked about first, as a session does. */
export async function mcpList(settings: Settings, note: (text: string) => void): Promise<string> {
  const interactive = isInteractiveTerminal() && !settings.json;
  await confirmConfigTrust(settings, interactive, createRenderer(settings, interactive));
  const { mcpListReport } = await import("./mcp.js");
  return mcpListReport(settings, settings.json, note);
}

/** Hint commands as this run was started: the launcher and the workspace, placeholders kept as typed. */
function hintCommand(settings: Pick<Settings, "workspace" | "launchCommand">): HintCommand {
  return (...words) =>
    [settings.launchCommand, "--workspace", settings.workspace, ...words]
      .map((word, i) => (i === 0 || /^<[\w-]+>$/.test(word) ? word : shellQuote(word)))
      .join(" ");
}

/**
 * A task that names a custom command (`mini-cursor "/review src/a.ts"`) runs its template, as at
 * the prompt; any other task is sent as typed. Undefined: the command was refused (said why).
 * With `shell`, its `` !`cmd` `` lines run once the session's approver is there (runShellLines).
 */
async function oneShotRequest(
  settings: Settings,
  task: string,
  interactive: boolean,
  renderer: Renderer,
): Promise<{ request: string; shell?: string[]; name?: string } | undefined> {
  if (!task.trimStart().startsWith("/")) return { request: task };
  const found = findCustomCommand(task, loadCustomCommands(settings, BUILT_IN_NAMES).commands);
  if (!found) {
    // Gemini CLI's command of that name is not read: say how to bring it over rather than send "/name" as a request.
    const gemini = geminiCommandHint(settings.workspace, task.trim().split(/\s/, 1)[0]!);
    if (gemini) renderer.note(gemini);
    return gemini ? undefined : { request: task };
  }
  const confirm = interactive ? (question: string) => askedYes(askOnTerminal, renderer, question) : undefined;
  const expanded = await expandCustomCommand(found.command, found.args, {
    trustStore: settings.trustStore,
    renderer,
    confirm,
  });
  return expanded === "refused" ? undefined : { ...expanded, name: found.command.name };
}

export async function runOnce(settings: Settings, task: string, version: string): Promise<number> {
  // A built-in session command (`mini-cursor "/undo"`) is not sent to the model: the hint says what to run.
  const hint = task.trimStart().startsWith("/")
    ? sessionCommandHint(task, hintCommand(settings), sessionSlashCommands(settings).commands)
    : undefined;
  if (hint !== undefined) {
    noticeOnTerminal(gateText(`mini-cursor: ${hint}\n`));
    return EXIT.usage;
  }
  // `!command`: the agent runs that command, as at the session's prompt.
  if (/^\s*!\S/.test(task)) task = shellEscapeRequest(task.trim().slice(1).trim());
  const interactive = isInteractiveTerminal() && !settings.json;
  const renderer = createRenderer(settings, interactive);
  // A file of its own mini-cursor did not read (a FIFO named AGENTS.md) is said in the trace.
  onSkippedFiles((text) => renderer.note(text));
  await confirmConfigTrust(settings, interactive, renderer);
  await confirmAgentTrust(settings, interactive, renderer);
  const oneShot = await oneShotRequest(settings, task, interactive, renderer);
  if (oneShot === undefined) return EXIT.usage;
  // The thread's title shows a command file's `!`cmd`` lines as written, not their output.
  task = fillShellOutputs(
    oneShot.request,
    (oneShot.shell ?? []).map((c) => `!\`${c}\``),
  );
  const session = await createSession(settings, {
    renderer,
    mcp: await sessionMcp(settings, renderer),
    firstRequest: task,
  });
  showBanner(session, renderer, version);
  const abort = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => {
    if (abort.signal.aborted) return;
    renderer.pause();
    renderer.note(`\n${signal === "SIGINT" ? "Ctrl-C" : signal}: stopping the run…`);
    abort.abort();
  };
  const offSignals = onStopSignals(onSignal);
  // On a terminal Ctrl-C is read as a key and raised to this process alone: as a signal to the
  // whole group, the tsx wrapper (`npm run dev`) would relay it again, or SIGKILL us if we were
  // slow to acknowledge it.
  const keys = interactive ? watchTerminalKeys(() => process.kill(process.pid, "SIGINT")) : undefined;
  try {
    const approver = interactive
      ? pausingKeys(
          terminalApprover(settings, renderer, () => abort.abort()),
          keys,
        )
      : nonInteractiveApprover;
    if (oneShot.shell) {
      const prepared = await runShellLines(oneShot, {
        session,
        approver,
        signal: abort.signal,
        renderer,
        name: oneShot.name ?? "The command",
      });
      if (prepared === undefined) return abort.signal.aborted ? EXIT.interrupted : EXIT.notRun;
      task = prepared;
    }
    let summary = await session.runTurn(task, abort.signal, approver);
    if (hasPlanToReview(session, summary)) {
      if (interactive) {
        const later = `Not carried out. To carry out this plan later: ${carryOutCommand(session)}`;
        summary = await reviewPlan(
          session,
          renderer,
          pausingKeys(askPlanOnTerminal, keys),
          (next) => session.runTurn(next, abort.signal, approver),
          summary,
          later,
        );
      } else {
        // Off a terminal the plan is the run's output; carrying it out is another run on the same thread.
        renderer.note(`Plan mode: nothing was changed or run. To carry out this plan: ${carryOutCommand(session)}`);
      }
    }
    if (summary.reason === "max_steps") {
      renderer.note(
        `Reached the step limit (--max-steps ${settings.maxSteps}) before the task was finished. ` +
          `Continue with: ${continueCommand(settings.launchCommand, settings, session.threadId)}`,
      );
    }
    const reason: StopReason = abort.signal.aborted ? "interrupted" : summary.reason;
    offSignals();
    if (reason !== "interrupted" && interactive) await keepServersUp(session, renderer);
    return REASON_EXIT[reason];
  } finally {
    keys?.stop();
    offSignals();
    reportStopped(await closeSession(session, renderer), renderer);
  }
}

export async function runInteractive(settings: Settings, version: string): Promise<number> {
  const interactive = isInteractiveTerminal() && !settings.json;
  // On a terminal the prompt line already shows the request; piped requests are not echoed, so the trace shows them.
  const renderer = createRenderer(settings, interactive, !interactive);
  onSkippedFiles((text) => renderer.note(text));
  await confirmConfigTrust(settings, interactive, renderer);
  await confirmAgentTrust(settings, interactive, renderer);
  const session = await createSession(settings, { renderer, mcp: await sessionMcp(settings, renderer) });
  showBanner(session, renderer, version);
  // SessionEnd's reason for the person's hooks: they left at the prompt (/exit, Ctrl-D), or something else ended it.
  let endReason = "other";
  try {
    const end = await runRepl(session, renderer, {
      ...terminalStreams(),
      interactive,
      approver: (cancel) => (interactive ? terminalApprover(settings, renderer, cancel) : nonInteractiveApprover),
      runCommand: (line, confirm) => {
        // Custom command files are read for each line, so a file added during the session works at once.
        const { commands, customNotes } = sessionSlashCommands(settings);
        return runSlashCommand(line, { session, renderer, confirm, customNotes }, commands);
      },
      // A plan made on a terminal: accept it (the same thread carries it out), refine it, or not now.
      afterTurn: async (summary, runTurn) => {
        if (!interactive || !hasPlanToReview(session, summary)) return;
        await reviewPlan(session, renderer, (mode) => askPlanOnTerminal(mode), runTurn, summary, SESSION_PLAN_LATER);
      },
      shellEscape: shellEscapeRequest,
      // Tab completes command names, built-in and custom, read at each Tab as each line reads them.
      completions: () => sessionSlashCommands(settings).commands,
      history: interactive ? filePromptHistory() : undefined,
      watchSignals: sessionSignals,
    });
    if (end === "left") endReason = "prompt_input_exit";
    return end === "left" ? EXIT.ok : EXIT.interrupted;
  } finally {
    reportStopped(await closeSession(session, renderer, endReason), renderer);
  }
}
