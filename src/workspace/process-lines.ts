import { spawn } from "node:child_process";
import { createInterface } from "node:readline";

/** A helper program's stdout, line by line, and how it ended. */
export interface ProgramLines {
  lines: AsyncIterable<string>;
  /** Stops the program early (the caller has read enough). */
  stop(): void;
  /** Its exit code; null when it could not start or a signal ended it. */
  exited: Promise<number | null>;
}

/**
 * Runs one of mini-cursor's own helper programs (ripgrep for search_files; never a command of the
 * model's, which goes through runCommand in processes.ts) with stdin closed and stdout read line
 * by line. stderr is ignored unless `onStderrLine` takes its lines; `env` replaces the
 * environment when given; `extraFds` hands it open files. `signal` stops it.
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
  },
): ProgramLines {
  const child = spawn(file, args, {
    cwd: options.cwd,
    stdio: ["ignore", "pipe", options.onStderrLine ? "pipe" : "ignore", ...(options.extraFds ?? [])],
    signal: options.signal,
    ...(options.env ? { env: options.env } : {}),
  });
  if (options.onStderrLine && child.stderr) createInterface({ input: child.stderr }).on("line", options.onStderrLine);
  const exited = new Promise<number | null>((resolve) => {
    child.on("close", (code) => resolve(code));
    child.on("error", () => resolve(null));
  });
  return { lines: createInterface({ input: child.stdout! }), stop: () => child.kill(), exited };
}
