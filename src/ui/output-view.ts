/**
 * What the terminal trace shows of one call's live output: its first lines as they come, then
 * nothing more until the call ends, when the last lines follow with a count of what was left
 * out. A command printing 200 MB costs the terminal a few kilobytes, as it costs the model's
 * result only its head and tail (workspace/output-store.ts); the whole is in the saved file the
 * result names, and in --json's tool_output events.
 */

/** Lines of a call's output shown as they come, at most. */
export const TRACE_HEAD_LINES = 40;
/** Characters of a call's output shown as they come, at most (a long line counts for its length). */
export const TRACE_HEAD_CHARS = 8_000;
/** Last lines shown when a call whose output was cut ends. */
export const TRACE_TAIL_LINES = 10;
/** Characters those last lines may take. */
const TRACE_TAIL_CHARS = 2_000;

/** What was left out of the live view, and its last lines. */
export interface HiddenOutput {
  lines: number;
  chars: number;
  /** The last lines (the last one may be a line without its end), each whole or cut at its start. */
  tail: string[];
}

export interface OutputView {
  /** The part of `text` to show now: all of it, its head ("filled" then), or "" once the view is full. */
  take(text: string): { show: string; filled: boolean };
  /** At the call's end: what was not shown, or undefined when nothing was left out. */
  hidden(): HiddenOutput | undefined;
}

function countLines(text: string): number {
  let n = 0;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) n++;
  return n;
}

export function createOutputView(): OutputView {
  let lines = 0;
  let chars = 0;
  let full = false;
  let hiddenLines = 0;
  let hiddenChars = 0;
  let endsLine = true;
  let tail = "";
  const hide = (text: string) => {
    hiddenChars += text.length;
    hiddenLines += countLines(text);
    endsLine = text.endsWith("\n");
    tail = (tail + text).slice(-TRACE_TAIL_CHARS);
  };
  return {
    take(text) {
      if (full) {
        hide(text);
        return { show: "", filled: false };
      }
      // The head ends at the line budget or the character budget, whichever comes first.
      let cut = Math.min(text.length, TRACE_HEAD_CHARS - chars);
      for (let i = text.indexOf("\n"), n = lines; i !== -1 && i < cut; i = text.indexOf("\n", i + 1)) {
        if (++n === TRACE_HEAD_LINES) {
          cut = i + 1;
          break;
        }
      }
      const show = text.slice(0, cut);
      lines += countLines(show);
      chars += show.length;
      full = lines >= TRACE_HEAD_LINES || chars >= TRACE_HEAD_CHARS;
      if (cut < text.length) hide(text.slice(cut));
      return { show, filled: full };
    },
    hidden() {
      if (hiddenChars === 0) return undefined;
      const all = tail.split("\n");
      if (endsLine) all.pop();
      // The first piece may be the end of a line cut by the tail's size: still its last part.
      return { lines: hiddenLines + (endsLine ? 0 : 1), chars: hiddenChars, tail: all.slice(-TRACE_TAIL_LINES) };
    },
  };
}
