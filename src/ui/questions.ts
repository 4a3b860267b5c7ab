/**
 * The questions open on the terminal right now (approval, plan, yes/no). A SIGTERM or SIGHUP
 * must end the run whatever is on screen (issue 26): the app's signal policy closes them, and a
 * closed question answers as "no" / "not now", so the run winds up instead of waiting for a key.
 */

interface Closable {
  close(): void;
  once(event: "close", listener: () => void): unknown;
}

const open = new Set<Closable>();

/** Registers a readline interface until it closes. */
export function trackQuestion<T extends Closable>(rl: T): T {
  open.add(rl);
  rl.once("close", () => open.delete(rl));
  return rl;
}

/** Closes every open question; each resolves as if the input had ended. */
export function closeOpenQuestions(): void {
  for (const rl of [...open]) rl.close();
}
