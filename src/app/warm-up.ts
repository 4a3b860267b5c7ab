import diagnostics from "node:diagnostics_channel";

/**
 * Warm-ups: work a session does ahead of need while the first model request waits for its answer
 * (a hosted model takes hundreds of ms to its first token, and the process is idle meanwhile):
 * the shell parser's loading (app/tools.ts) and the first step's rehearsal (agent/rehearsal.ts).
 * They start once the first request's body has been handed to the socket (undici's
 * `undici:request:bodySent`), so they never hold up sending it; a session whose model sends
 * no HTTP request (offline, replay) starts them after FALLBACK_MS. One at a time, in the order
 * given, each in its own macrotask; one that fails is skipped (the real step runs the same code
 * and reports its own errors), and the next still runs. Once a response has come in, no further
 * one starts (the idle time is over; the rest happens on demand).
 *
 * Only the CLI's own process turns them on (`enableWarmUps`, cli.ts): a library user, a test file or
 * an in-process eval builds the same agent and tools, and a warm-up there would run into whatever
 * comes after it (under Jest, a `require` after the test file's environment is gone).
 */

/** Undici's channel for a request whose body was written in full (Node's fetch). */
const BODY_SENT_CHANNEL = "undici:request:bodySent";
/** Undici's channel for a response whose headers arrived: the model answers, the real step is near. */
const HEADERS_CHANNEL = "undici:request:headers";
/** When no request was sent this long after the first warm-up was asked for, they start anyway. */
export const FALLBACK_MS = 2_000;

/**
 * A warm-up job. `answered()` says whether a response has come in since the warm-ups started:
 * a job of several parts stops at the next one then, so it does not take the real step's time.
 */
export type WarmUp = (answered: () => boolean) => Promise<unknown>;

const queue: Array<() => Promise<unknown>> = [];
let enabled = false;
let armed = false;
let started = false;
let running = false;
let responded = false;
const answered = () => responded;

function onHeaders(): void {
  responded = true;
  diagnostics.unsubscribe(HEADERS_CHANNEL, onHeaders);
}

function start(): void {
  if (started) return;
  started = true;
  diagnostics.unsubscribe(BODY_SENT_CHANNEL, onBodySent);
  diagnostics.subscribe(HEADERS_CHANNEL, onHeaders);
  void drain();
}

function onBodySent(): void {
  // The request's last bytes are in the socket: the rest of this tick is the request's own.
  setImmediate(start);
}

async function drain(): Promise<void> {
  if (running) return;
  running = true;
  try {
    for (let job = queue.shift(); job; job = queue.shift()) {
      await new Promise((resolve) => setImmediate(resolve));
      // Idle time is over: what is left is done on demand, where needed (the parser by the first command).
      if (responded) {
        queue.length = 0;
        break;
      }
      await job().catch(() => undefined);
    }
  } finally {
    running = false;
  }
}

/** Lets this process's sessions warm up: called by the CLI's entry point, and nowhere else. */
export function enableWarmUps(): void {
  enabled = true;
}

/**
 * Runs `job` once the first model request is out (at once when that already happened), after the
 * jobs given before it, or before them when `first`. Does nothing unless `enableWarmUps` was called.
 */
export function warmUpWhileModelThinks(job: WarmUp, first = false): void {
  if (!enabled) return;
  const guarded = () => Promise.resolve().then(() => job(answered));
  if (first) queue.unshift(guarded);
  else queue.push(guarded);
  if (started) {
    void drain();
    return;
  }
  if (armed) return;
  armed = true;
  diagnostics.subscribe(BODY_SENT_CHANNEL, onBodySent);
  setTimeout(start, FALLBACK_MS).unref();
}
