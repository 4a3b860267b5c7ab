import type { ProcessRegistry, SpawnSpecBuilder } from "../workspace/processes.js";
import { openWorkspace, type Workspace } from "../workspace/paths.js";
import { createReadTracker, type ReadTracker } from "./read-tracker.js";

/** A chunk of live output from a running command, for the terminal trace. */
export interface OutputChunk {
  /** The id of the tool call that started the command, when known. */
  toolCallId?: string;
  /** The sub-agent whose call it is (its task call's id, the run's `configurable.conversation`): call ids repeat across conversations. */
  subagent?: string;
  stream: "stdout" | "stderr";
  text: string;
}

/** What `createTools` needs to know about the place it works in. */
export interface ToolOptions {
  /** Root for every path a tool touches. */
  workspace: string;
  /** Tracks processes left running in the background; one is made when omitted. */
  processes?: ProcessRegistry;
  /** Live output of running commands (the CLI shows it dimmed). */
  onOutput?: (chunk: OutputChunk) => void;
  /** Environment for child processes; defaults to process.env without secrets (childEnvironment). */
  env?: NodeJS.ProcessEnv;
  /** How commands are started; a sandbox wraps them (e.g. in bubblewrap). Default: plain `bash -c`. */
  spawnSpec?: SpawnSpecBuilder;
  /** Values (such as the API key) replaced by [redacted] wherever command output would show them. */
  redact?: readonly string[];
  /** Which file-editing tools are offered: "edit_file" (default), "apply_patch" or "both". */
  editTool?: "edit_file" | "apply_patch" | "both";
}

/** Shared by the tools of one toolset: the workspace is resolved once, lazily. */
export interface ToolContext {
  readonly options: ToolOptions;
  workspace(): Promise<Workspace>;
  readonly processes: ProcessRegistry;
  /** Files the model read or wrote, per thread (edit_file requires a fresh read). */
  readonly reads: ReadTracker;
}

export function createToolContext(options: ToolOptions, processes: ProcessRegistry): ToolContext {
  let ws: Promise<Workspace> | undefined;
  return {
    options,
    processes,
    reads: createReadTracker(),
    workspace() {
      ws ??= openWorkspace(options.workspace);
      return ws;
    },
  };
}
