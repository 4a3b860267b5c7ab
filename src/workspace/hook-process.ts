import { spawn } from "node:child_process";
import { StringDecoder } from "node:string_decoder";
import { bashSpawnSpec, buildEnv, exitStatus, type SpawnSpecBuilder } from "./processes.js";
import { rememberGroup, stopGroup } from "./process-group.js";
import { redactorFor } from "./redact.js";

/**
 * Runs one hook (security/hooks-config.ts): `bash -c` in its own process group, started the way
 * execute_command starts a command (the same spawn spec, so the same sandbox, and the same
 * scrubbed environment), with the call as JSON on stdin. Unlike a command, its stdout and stderr
 * are kept apart: stderr is the reason a blocking hook gives. Both are bounded and redacted.
 */

/** Characters kept of each of a hook's stdout and stderr; the rest is dropped and said to be. */
export const MAX_HOOK_OUTPUT_CHARS = 4_000;

/** After the hook exits, how long its pipes may take to deliver what it wrote. */
const HOOK_DRAIN_MS = 500;

export interface HookRunOptions {
  command: string;
  /** The workspace root: hooks run there. */
  cwd: string;
  /** Written to the hook's stdin, then closed. */
  input: string;
  timeoutMs: number;
  /** The scrubbed environment commands get (the non-interactive hints are added to it); required, so no hook gets the secrets by default. */
  env: NodeJS.ProcessEnv;
  spawnSpec?: SpawnSpecBuilder;
  /** Secret values replaced in what the hook printed. */
  redact?: readonly string[];
  signal?: AbortSignal;
}

export interface HookRunResult {
  status: "exited" | "timed_out" | "cancelled" | "failed_to_start";
  /** The exit status; 128 + the signal's number when killed, null when it never started or was stopped. */
  exitCode: number | null;
  stdout: string;
  stderr: string;
  durationMs: number;
  /** For failed_to_start: why. */
  error?: string;
}

/** Collects one pipe's text up to MAX_HOOK_OUTPUT_CHARS. */
function collector() {
  const decoder = new StringDecoder("utf8");
  let text = "";
  let dropped = 0;
  const add = (chunk: string) => {
    const room = MAX_HOOK_OUTPUT_CHARS - text.length;
    if (room > 0) text += chunk.slice(0, room);
    dropped += Math.max(0, chunk.length - Math.max(room, 0));
  };
  return {
    data: (buf: Buffer) => add(decoder.write(buf)),
    text: () => {
      add(decoder.end());
      return dropped > 0 ? `${text}\n[… ${dropped} more characters not kept]` : text;
    },
  };
}

export async function runHookProcess(options: HookRunOptions): Promise<HookRunResult> {
  const startedAt = Date.now();
  const redactor = redactorFor(options.redact ?? []);
  const done = (
    fields: Omit<HookRunResult, "durationMs" | "stdout" | "stderr"> & { stdout?: string; stderr?: string },
  ) => ({
    ...fields,
    stdout: redactor.redact(fields.stdout ?? ""),
    stderr: redactor.redact(fields.stderr ?? ""),
    durationMs: Date.now() - startedAt,
  });
  if (options.signal?.aborted) return done({ status: "cancelled", exitCode: null });
  const spec = (options.spawnSpec ?? bashSpawnSpec)(options.command, options.cwd);
  let child;
  try {
    child = spawn(spec.file, spec.args, {
      cwd: options.cwd,
      env: buildEnv(options.env),
      detached: true, // its own process group: a timeout stops everything it started
      stdio: ["pipe", "pipe", "pipe"],
    });
  } catch (err) {
    return done({ status: "failed_to_start", exitCode: null, error: (err as Error).message });
  }
  const pid = child.pid;
  if (pid === undefined) {
    const error = await new Promise<Error>((resolve) => child.once("error", resolve));
    return done({ status: "failed_to_start", exitCode: null, error: error.message });
  }
  rememberGroup(pid);
  const out = collector();
  const err = collector();
  child.stdout.on("data", out.data);
  child.stderr.on("data", err.data);
  // A hook that never reads its stdin closes the pipe early: that is not a failure.
  child.stdin.on("error", () => undefined);
  child.stdin.end(options.input);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  const closed = new Promise<void>((resolve) => child.once("close", () => resolve()));
  let timer: NodeJS.Timeout | undefined;
  let onAbort!: () => void;
  const stopped = new Promise<"timed_out" | "cancelled">((resolve) => {
    timer = setTimeout(() => resolve("timed_out"), options.timeoutMs);
    onAbort = () => resolve("cancelled");
    options.signal?.addEventListener("abort", onAbort, { once: true });
  });
  try {
    const first = await Promise.race([exited, stopped]);
    // What is still in the pipes, briefly; then anything the hook left running is stopped, as after a command.
    if (typeof first !== "string")
      await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, HOOK_DRAIN_MS))]);
    await stopGroup(pid);
    child.stdout.destroy();
    child.stderr.destroy();
    const output = { stdout: out.text(), stderr: err.text() };
    if (typeof first === "string") return done({ status: first, exitCode: null, ...output });
    return done({ status: "exited", exitCode: exitStatus(first.code, first.signal), ...output });
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", onAbort);
  }
}
