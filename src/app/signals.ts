import { REPEATED_SIGNAL_MS } from "../ui/repl.js";
import { EXIT } from "./exit-codes.js";

/** Signals that stop a run: Ctrl-C, a kill, and SIGHUP (the terminal was closed). */
export const STOP_SIGNALS: NodeJS.Signals[] = ["SIGINT", "SIGTERM", "SIGHUP"];

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
  onStopSignals((signal) => {
    const now = Date.now();
    const repeated = now - last < REPEATED_SIGNAL_MS;
    last = now;
    if (process.listenerCount(signal) > 1 || repeated) return;
    process.exit(EXIT.interrupted);
  });
}

