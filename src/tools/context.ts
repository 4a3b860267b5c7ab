import type { ProcessRegistry } from "../workspace/processes.js";
import { openWorkspace, type Workspace } from "../workspace/paths.js";

/** A chunk of live output from a running command, for the terminal trace. */
export interface OutputChunk {
  /** The id of the tool call that started the command, when known. */
  toolCallId?: string;
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
  /** Environment for child processes; defaults to process.env. */
  env?: NodeJS.ProcessEnv;
}

/** Shared by the tools of one toolset: the workspace is resolved once, lazily. */
export interface ToolContext {
  readonly options: ToolOptions;
  workspace(): Promise<Workspace>;
  readonly processes: ProcessRegistry;
}

export function createToolContext(options: ToolOptions, processes: ProcessRegistry): ToolContext {
  let ws: Promise<Workspace> | undefined;
  return {
    options,
    processes,
    workspace() {
      ws ??= openWorkspace(options.workspace);
      return ws;
    },
  };
}
