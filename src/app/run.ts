import type { StopReason } from "../agent/events.js";
import { describeModel } from "../models/model.js";
import { isInteractiveTerminal, LAUNCH_COMMAND, type ApprovalMode, type Settings } from "../settings.js";
import { askOnTerminal, askPlanOnTerminal, terminalStreams, watchTerminalKeys } from "../ui/terminal.js";
import { carryOutCommand, hasPlanToReview, reviewPlan, SESSION_PLAN_LATER } from "./plan.js";
import { continueCommand } from "../ui/hints.js";
import { withSavedAlwaysRules } from "../policy/always.js";
import { createTerminalApprover, nonInteractiveApprover } from "../ui/approval-prompt.js";
import { createJsonRenderer, createPrettyRenderer, type Renderer } from "../ui/render.js";
import { pausingKeys, runRepl } from "../ui/repl.js";
import { finishSnapshots } from "../agent/snapshot-step.js";
import type { BackgroundProcess } from "../workspace/processes.js";
import { confirmConfigTrust } from "./config-trust.js";
import { confirmAgentTrust } from "./agent-trust.js";
import { McpConfigError, prepareMcp } from "./mcp.js";
import { EXIT } from "./exit-codes.js";
import { createSession, type Session } from "./session.js";
import { onStopSignals, sessionSignals } from "./process-signals.js";
import { BUILT_IN_NAMES, runSlashCommand, sessionSlashCommands } from "./slash-commands.js";
import { expandCustomCommand, findCustomCommand, loadCustomCommands } from "./custom-commands.js";

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
async function closeSession(session: Session, renderer: Renderer): Promise<BackgroundProcess[]> {
  const timer = setTimeout(
    () => renderer.note("Finishing: stopping background processes and posting pending traces…"),
    session.settings.waitNoticeMs,
  );
  try {
    const stopped = await session.close();
    // Snapshots steps took while the first one ran become whole only when it ends: undo needs them.
    await finishSnapshots(session.settings.workspace, (text) => renderer.note(text), session.settings.waitNoticeMs);
    return stopped;
  } finally {
    clearTimeout(timer);
  }
}

/** Resolves on the first stop signal. */
function nextSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const off = onStopSignals((signal) => {
      off();
      resolve(signal);
    });
  });
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
  await nextSignal();
}

/** `--mcp-list`: on a terminal an untrusted project config is asked about first, as a session does. */
export async function mcpList(settings: Settings, note: (text: string) => void): Promise<string> {
  const interactive = isInteractiveTerminal() && !settings.json;
  await confirmConfigTrust(settings, interactive, createRenderer(settings, interactive));
  const { mcpListReport } = await import("./mcp.js");
  return mcpListReport(settings, settings.json, note);
}

/**
 * A task that names a custom command (`mini-cursor "/review src/a.ts"`) runs its template, as at
 * the prompt; any other task is sent as typed. Undefined: the command was refused (said why).
 */
async function oneShotRequest(
  settings: Settings,
  task: string,
  interactive: boolean,
  renderer: Renderer,
): Promise<string | undefined> {
  if (!task.trimStart().startsWith("/")) return task;
  const found = findCustomCommand(task, loadCustomCommands(settings, BUILT_IN_NAMES).commands);
  if (!found) return task;
  const confirm = interactive
    ? async (question: string) => {
        renderer.pause();
        return /^y(es)?$/i.test((await askOnTerminal(question)).trim());
      }
    : undefined;
  const expanded = await expandCustomCommand(found.command, found.args, {
    trustStore: settings.trustStore,
    renderer,
    confirm,
  });
  return expanded === "refused" ? undefined : expanded.request;
}

export async function runOnce(settings: Settings, task: string, version: string): Promise<number> {
  const interactive = isInteractiveTerminal() && !settings.json;
  const renderer = createRenderer(settings, interactive);
  await confirmConfigTrust(settings, interactive, renderer);
  await confirmAgentTrust(settings, interactive, renderer);
  const request = await oneShotRequest(settings, task, interactive, renderer);
  if (request === undefined) return EXIT.usage;
  task = request;
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
          withSavedAlwaysRules(
            createTerminalApprover(
              () => renderer.pause(),
              () => abort.abort(),
              { editor: settings.editor },
            ),
            settings.workspace,
            (t) => renderer.note(t),
          ),
          keys,
        )
      : nonInteractiveApprover;
    let summary = await session.runTurn(task, abort.signal, approver);
    if (hasPlanToReview(session, summary)) {
      if (interactive) {
        const ask = async (mode: ApprovalMode) => {
          keys?.suspend();
          try {
            return await askPlanOnTerminal(mode);
          } finally {
            keys?.resume();
          }
        };
        const later = `Not carried out. To carry out this plan later: ${carryOutCommand(session)}`;
        summary = await reviewPlan(
          session,
          renderer,
          ask,
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
          `Continue with: ${continueCommand(LAUNCH_COMMAND, settings, session.threadId)}`,
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
  await confirmConfigTrust(settings, interactive, renderer);
  await confirmAgentTrust(settings, interactive, renderer);
  const session = await createSession(settings, { renderer, mcp: await sessionMcp(settings, renderer) });
  showBanner(session, renderer, version);
  try {
    const end = await runRepl(session, renderer, {
      ...terminalStreams(),
      interactive,
      approver: (cancel) =>
        interactive
          ? withSavedAlwaysRules(
              createTerminalApprover(() => renderer.pause(), cancel, { editor: settings.editor }),
              settings.workspace,
              (t) => renderer.note(t),
            )
          : nonInteractiveApprover,
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
      watchSignals: sessionSignals,
    });
    return end === "left" ? EXIT.ok : EXIT.interrupted;
  } finally {
    reportStopped(await closeSession(session, renderer), renderer);
  }
}
