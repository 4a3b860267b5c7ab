/**
 * An abort signal that follows other signals, without `AbortSignal.any` (issue 30). Node 20
 * keeps a signal made by `AbortSignal.any` alive for as long as it has an abort listener, and
 * the OpenAI SDK adds one to every request's signal and never removes it: each model call left
 * its signal, the SDK's controller and what they reached in memory until the process ended
 * (about 1.4 signals a step, the main part of peak RSS growing over a long session). A plain
 * controller's signal is collected with its request; `dispose` unhooks it from long-lived
 * sources (the run's signal), so those do not collect a listener per call either.
 */
export interface LinkedAbort {
  signal: AbortSignal;
  /** Aborts the linked signal (with `reason`), as a source's abort does, and stops following the sources. */
  abort(reason?: unknown): void;
  /** Stops following the sources; the signal keeps whatever state it has. */
  dispose(): void;
}

export function linkedAbort(sources: ReadonlyArray<AbortSignal | undefined>): LinkedAbort {
  const controller = new AbortController();
  const unhooks: (() => void)[] = [];
  const dispose = () => {
    for (const unhook of unhooks.splice(0)) unhook();
  };
  for (const source of sources) {
    if (!source) continue;
    if (source.aborted) {
      controller.abort(source.reason);
      break;
    }
    const follow = () => {
      controller.abort(source.reason);
      dispose();
    };
    source.addEventListener("abort", follow, { once: true });
    unhooks.push(() => source.removeEventListener("abort", follow));
  }
  if (controller.signal.aborted) dispose();
  const abort = (reason?: unknown) => {
    controller.abort(reason);
    dispose();
  };
  return { signal: controller.signal, abort, dispose };
}
