/**
 * How the scale bench's CLI rows (first tool call, long session) launch the CLI: one headless,
 * full-auto, sandbox-off run against the bench's scripted server with snapshots off, so that the
 * rows differ only in what they measure.
 */
import path from "node:path";
import { cleanEnv, ROOT } from "./bench-system.js";

export interface BenchCliRun {
  /** The script node runs: scripts/start.mjs (as installed) or dist/cli.bundle.cjs. */
  entry: string;
  workspace: string;
  maxSteps: number;
  task: string;
  engine?: string;
}

/** Node's arguments for one headless session of `run`. */
export function benchCliArgs(run: BenchCliRun): string[] {
  return [
    path.join(ROOT, run.entry),
    "--workspace",
    run.workspace,
    ...(run.engine === undefined ? [] : ["--engine", run.engine]),
    "--json",
    "--approval",
    "full-auto",
    "--sandbox",
    "off",
    "--max-steps",
    String(run.maxSteps),
    run.task,
  ];
}

/** The session's environment: the scripted server at `serverUrl`, snapshots off, plus `extra`. */
export function benchCliEnv(serverUrl: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return cleanEnv({ OPENAI_BASE_URL: serverUrl, OPENAI_API_KEY: "bench", MINI_CURSOR_SNAPSHOTS: "off", ...extra });
}
