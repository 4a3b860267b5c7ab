import type { TailRing } from "./output-store.js";
import { unknownExitStatus, type HelperLoss } from "./process-spawner.js";
import { stopSessionProcesses } from "./session-processes.js";
import { KILL_GRACE_MS } from "./process-group.js";

/** The background processes (dev servers) a session started, and stopping them all. */

export interface BackgroundProcess {
  /** "bg-1", "bg-2", ... in the order they were left running. */
  id: string;
  pid: number;
  command: string;
  cwd: string;
  /** The local URL the process announced, if any. */
  url?: string;
  startedAt: number;
  running: boolean;
  /** Exit status once it ended (128 + signal number when killed by a signal); null while running or when `helperLost`. */
  exitCode: number | null;
  /** Set when it ended with its exit status lost with the helper that started it (process-spawner.ts). */
  helperLost?: HelperLoss;
  /** The last `tailChars` characters of its output (ANSI codes stripped). */
  output(tailChars?: number): string;
}

/** What the runner hands over when it leaves a process running. */
export interface AdoptedProcess extends Pick<BackgroundProcess, "pid" | "command" | "cwd" | "url" | "startedAt"> {
  output: TailRing;
  /** Settles when the shell exits; the runner stops the rest of the group then. */
  exited: Promise<{ exitCode: number; helperLost?: undefined } | { exitCode: null; helperLost: HelperLoss }>;
  /** Stops the whole group (SIGTERM, then SIGKILL after the grace period). */
  stop(): Promise<void>;
}

export interface ProcessRegistry {
  /** Every background process, running or ended, oldest first. */
  list(): BackgroundProcess[];
  get(id: string): BackgroundProcess | undefined;
  /** Stops one background process group; false when unknown or already ended. */
  stop(id: string): Promise<boolean>;
  /** Stops every process group the toolset started; returns the background ones it stopped. */
  stopAll(): Promise<BackgroundProcess[]>;
  /** Takes over a process the runner leaves running, giving it an id. */
  adopt(process: AdoptedProcess): BackgroundProcess;
  /** Registers a foreground command so stopAll can stop it too; call the result when it ends. */
  track(stop: () => Promise<void>): () => void;
}

/** How an ended background process ended: "exited with code 0", or its lost status (process-spawner.ts). */
export function endedHow(proc: BackgroundProcess): string {
  if (proc.helperLost) return `ended, ${unknownExitStatus(proc.helperLost)}`;
  return `exited with code ${proc.exitCode ?? "unknown"}`;
}

export function createProcessRegistry(): ProcessRegistry {
  const background = new Map<string, { proc: BackgroundProcess; stop: () => Promise<void> }>();
  const foreground = new Set<() => Promise<void>>();
  let counter = 0;

  async function stopEntry(id: string): Promise<BackgroundProcess | undefined> {
    const entry = background.get(id);
    if (!entry?.proc.running) return undefined;
    await entry.stop();
    return entry.proc;
  }

  return {
    list: () => [...background.values()].map((e) => e.proc),
    get: (id) => background.get(id)?.proc,
    async stop(id) {
      return (await stopEntry(id)) !== undefined;
    },
    async stopAll() {
      // Foreground first: a command that is just being left in the background lands in the
      // background map while we wait, and the second pass stops it too.
      await Promise.all([...foreground].map((stop) => stop()));
      const stopped = await Promise.all([...background.keys()].map(stopEntry));
      // What left its group (setsid, daemons) still carries the session variable.
      await stopSessionProcesses(KILL_GRACE_MS);
      return stopped.filter((p): p is BackgroundProcess => p !== undefined);
    },
    adopt({ output, exited, stop, ...fields }) {
      const id = `bg-${++counter}`;
      const proc: BackgroundProcess = {
        id,
        ...fields,
        running: true,
        exitCode: null,
        output: (tailChars) => output.text(tailChars),
      };
      void exited.then(({ exitCode, helperLost }) => Object.assign(proc, { running: false, exitCode, helperLost }));
      background.set(id, { proc, stop });
      return proc;
    },
    track(stop) {
      foreground.add(stop);
      return () => foreground.delete(stop);
    },
  };
}
