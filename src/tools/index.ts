import type { StructuredToolInterface } from "@langchain/core/tools";
import { createProcessRegistry, type ProcessRegistry } from "../workspace/processes.js";
import { createToolContext, type ToolOptions } from "./context.js";
import { createExecuteCommandTool } from "./execute-command.js";
import { createListDirectoryTool } from "./list-directory.js";
import { createReadFileTool } from "./read-file.js";
import { createWriteFileTool } from "./write-file.js";

export type { ToolOptions, OutputChunk } from "./context.js";

export const TOOL_NAMES = ["read_file", "write_file", "list_directory", "execute_command"] as const;
export type ToolName = (typeof TOOL_NAMES)[number];

/**
 * The toolset for one workspace: an array (what bindTools, ToolNode and the loop take) that
 * also names each tool and carries the registry of processes it left running.
 */
export type Toolset = StructuredToolInterface[] &
  Record<ToolName, StructuredToolInterface> & { readonly processes: ProcessRegistry };

export function createTools(options: ToolOptions): Toolset {
  const processes = options.processes ?? createProcessRegistry();
  const ctx = createToolContext(options, processes);
  const named: Record<ToolName, StructuredToolInterface> = {
    read_file: createReadFileTool(ctx),
    write_file: createWriteFileTool(ctx),
    list_directory: createListDirectoryTool(ctx),
    execute_command: createExecuteCommandTool(ctx),
  };
  const list: StructuredToolInterface[] = TOOL_NAMES.map((name) => named[name]);
  return Object.assign(list, named, { processes });
}
