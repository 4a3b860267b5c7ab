import { withThousands } from "../thousands.js";

/**
 * Text piped into mini-cursor (`git diff | mini-cursor "review this"`, `mini-cursor < task.md`),
 * read as Claude Code's `-p`, Codex's `exec` and Gemini CLI do: with a task, the text is added to
 * it; without one (or with `-`), the whole text is the task, one request, not one per line.
 */

/** The most that is read from a pipe: more is refused, never cut without a word. */
export const MAX_PIPED_BYTES = 1024 * 1024;
/**
 * With a task, how long a socket on stdin (what Node's spawn leaves open) may stay silent before
 * it counts as nothing piped in. A shell pipe or a file is always read to its end.
 */
export const SILENT_STDIN_MS = 2_000;
/** How the limit is said in messages and docs. */
export const MAX_PIPED_LABEL = "1 MiB";

export type PipedInput =
  | { text: string }
  /** Over MAX_PIPED_BYTES: reading stopped there. */
  | { tooLong: true }
  /** NUL bytes: not text (an image, an archive) for a prompt. */
  | { binary: true };

export interface PipedReadOptions {
  limit?: number;
  /** Said once when the input has not ended after `noticeMs` (a pipe nobody closes). */
  onWait?: () => void;
  noticeMs?: number;
  /**
   * With nothing at all in this long (no byte, no end), read nothing: the stdin a program left
   * open without meaning to pipe anything in (Node's spawn gives a socket) must not hold a task.
   */
  giveUpIfSilentMs?: number;
}

/** Reads `input` to its end, at most `limit` bytes (reading stops and the stream is let go past it). */
export function readPipedInput(input: NodeJS.ReadableStream, options: PipedReadOptions = {}): Promise<PipedInput> {
  const limit = options.limit ?? MAX_PIPED_BYTES;
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onWait = options.onWait;
    // Under giveUpIfSilentMs, nothing heard yet means nothing will be waited for: no notice then.
    const timer =
      onWait && options.noticeMs !== undefined
        ? setTimeout(() => silence === undefined && onWait(), options.noticeMs)
        : undefined;
    let silence: NodeJS.Timeout | undefined =
      options.giveUpIfSilentMs !== undefined
        ? setTimeout(() => finish({ text: "" }), options.giveUpIfSilentMs)
        : undefined;
    const heard = () => {
      clearTimeout(silence);
      silence = undefined;
    };
    const finish = (result: PipedInput) => {
      clearTimeout(timer);
      heard();
      input.off("data", onData);
      input.off("end", onEnd);
      input.off("error", onError);
      input.pause();
      resolve(result);
    };
    const onData = (chunk: Buffer | string) => {
      heard();
      const bytes = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
      size += bytes.length;
      if (size > limit) {
        // The writer gets EPIPE (or SIGPIPE) once we let go: an endless stream does not keep us.
        (input as NodeJS.ReadableStream & { destroy?: () => void }).destroy?.();
        finish({ tooLong: true });
        return;
      }
      chunks.push(bytes);
    };
    const onEnd = () => {
      const all = Buffer.concat(chunks);
      finish(all.includes(0) ? { binary: true } : { text: all.toString("utf8") });
    };
    const onError = (err: Error) => {
      clearTimeout(timer);
      heard();
      reject(err);
    };
    input.on("data", onData);
    input.once("end", onEnd);
    input.once("error", onError);
    input.resume();
  });
}

/**
 * The task with the piped text after it, marked as what came in on stdin (as Codex marks it), so
 * the model can tell the person's words from the log or diff they piped in.
 */
export function withPipedText(task: string, piped: string): string {
  const text = piped.replace(/\s+$/, "");
  if (text.trim() === "") return task;
  return `${task}\n\n<stdin>\n${text}\n</stdin>`;
}

/** Why piped input cannot be used, as one sentence, or undefined when it can. */
export function pipedInputProblem(input: PipedInput): string | undefined {
  if ("tooLong" in input)
    return `the input piped in is larger than ${MAX_PIPED_LABEL} (${withThousands(MAX_PIPED_BYTES)} bytes), the most mini-cursor reads from stdin. Save it to a file in the workspace and name that file in the task instead (the agent reads and searches big files a part at a time).`;
  if ("binary" in input)
    return "the input piped in is not text (it holds NUL bytes). Pipe text in, or save the file in the workspace and name it in the task.";
  return undefined;
}
