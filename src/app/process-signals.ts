import type { ReplControls } from "../ui/repl.js";
import { closeOpenQuestions } from "../ui/questions.js";
import { EXIT } from "./exit-codes.js";

/** Signals that stop a run: Ctrl-C, a kill, and SIGHUP (the terminal was closed). */
export const STOP_SIGNALS: NodeJS.Signals[] = ["SIGINT", "SIGTERM", "SIGHUP"];
/**
 * A signal repeated within this window is the same one delivered twice: the tsx wrapper process
 * relays SIGINT and SIGTERM to its child after the child already got them from the group.
 */
export const REPEATED_SIGNAL_MS = 500;
/**
 * SIGTERM and SIGHUP end the process within this long whatever the orderly shutdown is waiting
 * for (an MCP server that never finishes starting or stopping, a command ignoring SIGTERM, a
 * checkpoint write that never returns). The exit hook of the process runner still kills every
 * process group we started, so nothing is left behind.
 */
export const FORCED_EXIT_GRACE_MS = 1_000;

export function onStopSignals(handler: (signal: NodeJS.Signals) => void): () => void {
  for (const signal of STOP_SIGNALS) process.on(signal, handler);
  return () => {
    for (const signal of STOP_SIGNALS) process.off(signal, handler);
  };
}

/**
 * Listens for the life of the process, beside the run's and the session's own handlers, so a
 * signal that comes while nobody else listens (while processes are being stopped on the way
 * out) neither kills Node outright nor lets tsx's hidden handler exit early. A repeat within
 * REPEATED_SIGNAL_MS is the same signal delivered twice (tsx relays SIGINT and SIGTERM to its
 * child) and is ignored; a later one is the user insisting, and exits at once: the exit hook of
 * the process runner still kills every process group.
 */
export function installSignalBackstop(): void {
  let last = 0;
  let _forced: NodeJS.Timeout | undefined;
  onStopSignals((signal) => {
    // A kill or a closed terminal ends the run whatever is on screen: an open question (approval,
    // plan, yes/no) would otherwise hold it until someone pressed a key.
    if (signal !== "SIGINT") {
      closeOpenQuestions();
      // unref: an orderly shutdown that finishes in time exits without waiting for it.
      _forced ??= setTimeout(() => process.exit(EXIT.interrupted), FORCED_EXIT_GRACE_MS).unref();
    }
    const now = Date.now();
    const repeated = now - last < REPEATED_SIGNAL_MS;
    last = now;
    if (process.listenerCount(signal) > 1 || repeated) return;
    process.exit(EXIT.interrupted);
  });
}

/**
 * The interactive session's signal policy: SIGINT is Ctrl-C (cancel the turn, or leave); SIGTERM
 * and SIGHUP cancel any turn and leave. The same signal again within REPEATED_SIGNAL_MS is tsx
 * relaying it, not the user: ignored.
 */
export function sessionSignals(controls: ReplControls): () => void {
  let last = { name: "", at: 0 };
  return onStopSignals((signal) => {
    const now = Date.now();
    if (signal === last.name && now - last.at < REPEATED_SIGNAL_MS) return;
    last = { name: signal, at: now };
    if (signal === "SIGINT") controls.interrupt();
    else controls.leave(signal);
  });
}
