import type { ChalkInstance } from "chalk";

const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
/** Redraw interval; slower than a frame per 100 ms looks stuck, faster wastes the terminal. */
const FRAME_MS = 100;

export interface Spinner {
  start(label: string): void;
  stop(): void;
}

/**
 * A one-line spinner with elapsed time, drawn only on a terminal. It erases itself before
 * anything else is written, so it never mixes with the trace.
 */
export function createSpinner(out: NodeJS.WritableStream, enabled: boolean, c: ChalkInstance): Spinner {
  let timer: NodeJS.Timeout | undefined;
  let startedAt = 0;
  let frame = 0;
  let label = "";
  const draw = () => {
    const seconds = ((Date.now() - startedAt) / 1000).toFixed(1);
    out.write(`\r\x1b[2K${c.cyan(FRAMES[frame++ % FRAMES.length]!)} ${c.dim(`${label} ${seconds}s`)}`);
  };
  return {
    start(text) {
      if (!enabled) return;
      label = text;
      if (timer) return;
      startedAt = Date.now();
      timer = setInterval(draw, FRAME_MS);
      timer.unref();
    },
    stop() {
      if (!timer) return;
      clearInterval(timer);
      timer = undefined;
      out.write("\r\x1b[2K");
    },
  };
}
