import type { ChalkInstance } from "chalk";
import { block, print, printControl, render, styled } from "./output.js";
import { displayWidth, fitWidth } from "./text-width.js";

const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
/** Columns the frame and the space after it take. */
const FRAME_WIDTH = 2;
/** Redraw interval; slower than a frame per 100 ms looks stuck, faster wastes the terminal. */
const FRAME_MS = 100;

export interface Spinner {
  /** `label` is one line of text (a tool's name, a provider's wait), gated like any other. */
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
    const seconds = ` ${((Date.now() - startedAt) / 1000).toFixed(1)}s`;
    // One line, whatever the label: a line wider than the terminal wraps, and "\r" then
    // redraws only its last part, so every frame would leave a line behind. The label is gated
    // (ui/output.ts) before it is measured: a made-visible escape is wider than its character.
    const columns = (out as { columns?: number }).columns;
    const room = columns ? columns - 1 - FRAME_WIDTH - displayWidth(seconds) : Number.POSITIVE_INFINITY;
    const shown = fitWidth(render(label.replace(/\s+/g, " ")), room);
    printControl(out, "eraseLine");
    print(out, [styled("cyan", FRAMES[frame++ % FRAMES.length]!), " ", styled("dim", block(shown), seconds)], c);
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
      printControl(out, "eraseLine");
    },
  };
}
