import { spawn } from "node:child_process";
import type { Readable } from "node:stream";

/**
 * Longest stdout line read whole unless the caller says otherwise. A helper's line can be as
 * long as what it prints (ripgrep's --json puts a whole matching line, escaped, on one line):
 * read without a bound, one of a few hundred MB grows past what a string can hold and kills
 * the process.
 */
export const MAX_PROGRAM_LINE_BYTES = 16 * 1024 * 1024;
/** Bytes of a cut line kept for the caller (enough for ripgrep's path at the start of a line). */
export const CUT_LINE_HEAD_BYTES = 64 * 1024;
/** stderr lines are only looked at for short reports; longer ones are skipped. */
const MAX_STDERR_LINE_BYTES = 64 * 1024;
const NEWLINE = 0x0a;

/** A line longer than the limit: its first CUT_LINE_HEAD_BYTES; the rest of it is skipped unread. */
export interface CutLine {
  head: string;
}

/** A helper program's stdout, line by line, and how it ended. */
export interface ProgramLines {
  /**
   * stdout, line by line; a line over the limit comes as a CutLine as soon as it passes the
   * limit. A failure to read throws from the iteration (never out of an event handler).
   */
  lines: AsyncIterable<string | CutLine>;
  /** Stops the program early (the caller has read enough). */
  stop(): void;
  /** Its exit code; null when it could not start or a signal ended it. Resolves after its stderr lines were handed over. */
  exited: Promise<number | null>;
}

/**
 * `input` split at newlines, each line at most `maxLineBytes` long: memory stays bounded by the
 * limit whatever the program prints. A longer line is handed over cut (CutLine) and the rest of
 * it skipped.
 */
export async function* boundedLines(input: Readable, maxLineBytes: number): AsyncGenerator<string | CutLine> {
  let parts: Buffer[] = [];
  let size = 0;
  let skipping = false;
  // Only the first `bytes` are copied: concat stops at the length it is given.
  const take = (bytes: number) => {
    const text = Buffer.concat(parts, bytes).toString("utf8");
    parts = [];
    size = 0;
    return text;
  };
  for await (const chunk of input as AsyncIterable<Buffer>) {
    for (let from = 0; from < chunk.length; ) {
      const nl = chunk.indexOf(NEWLINE, from);
      if (skipping) skipping = nl === -1;
      else {
        parts.push(chunk.subarray(from, nl === -1 ? chunk.length : nl));
        size += parts[parts.length - 1]!.length;
        if (size > maxLineBytes) {
          yield { head: take(Math.min(CUT_LINE_HEAD_BYTES, size)) };
          skipping = nl === -1;
        } else if (nl !== -1) yield take(size);
      }
      if (nl === -1) break;
      from = nl + 1;
    }
  }
  if (!skipping && size > 0) yield take(size);
}

/**
 * Runs one of mini-cursor's own helper programs (ripgrep for search_files; never a command of the
 * model's, which goes through runCommand in processes.ts) with stdin closed and stdout read line
 * by line, each line at most `maxLineBytes` (MAX_PROGRAM_LINE_BYTES). stderr is ignored unless
 * `onStderrLine` takes its lines; `env` replaces the environment when given; `extraFds` hands it
 * open files. `signal` stops it; so does leaving the iteration of `lines` early or its failing.
 */
export function programLines(
  file: string,
  args: readonly string[],
  options: {
    cwd: string;
    signal?: AbortSignal;
    env?: NodeJS.ProcessEnv;
    onStderrLine?: (line: string) => void;
    /** Open descriptors the program gets as its fd 3, 4, …  */
    extraFds?: readonly number[];
    maxLineBytes?: number;
  },
): ProgramLines {
  const child = spawn(file, args, {
    cwd: options.cwd,
    stdio: ["ignore", "pipe", options.onStderrLine ? "pipe" : "ignore", ...(options.extraFds ?? [])],
    signal: options.signal,
    ...(options.env ? { env: options.env } : {}),
  });
  const onStderrLine = options.onStderrLine;
  const stderrRead =
    onStderrLine && child.stderr
      ? (async () => {
          try {
            for await (const line of boundedLines(child.stderr!, MAX_STDERR_LINE_BYTES))
              if (typeof line === "string") onStderrLine(line);
          } catch {
            // A report that could not be read is one fewer report; stdout decides the outcome.
          }
        })()
      : Promise.resolve();
  const closed = new Promise<number | null>((resolve) => {
    child.on("close", (code) => resolve(code));
    child.on("error", () => resolve(null));
  });
  const stop = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill();
  };
  const maxLineBytes = options.maxLineBytes ?? MAX_PROGRAM_LINE_BYTES;
  async function* lines(): AsyncGenerator<string | CutLine> {
    let finished = false;
    try {
      yield* boundedLines(child.stdout!, maxLineBytes);
      finished = true;
    } finally {
      if (!finished) stop();
    }
  }
  return { lines: lines(), stop, exited: closed.then(async (code) => (await stderrRead, code)) };
}
