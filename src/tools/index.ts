import type { StructuredToolInterface } from "@langchain/core/tools";
import { createProcessRegistry, type ProcessRegistry } from "../workspace/processes.js";
import { createToolContext, type ToolOptions } from "./context.js";
import { createEditFileTool } from "./edit-file.js";
import { createExecuteCommandTool } from "./execute-command.js";
import { createFindFilesTool } from "./find-files.js";
import { createListDirectoryTool } from "./list-directory.js";
import { withPreview, previewWrite } from "./preview.js";
import { createProcessOutputTool } from "./process-output.js";
import { createReadFileTool } from "./read-file.js";
import { withRedaction } from "./redacting.js";
import { createSearchFilesTool } from "./search-files.js";
import { createStopProcessTool } from "./stop-process.js";
import { createWriteFileTool } from "./write-file.js";

export type { ToolOptions, OutputChunk } from "./context.js";

export const TOOL_NAMES = [
  "read_file",
  "write_file",
  "edit_file",
  "list_directory",
  "find_files",
  "search_files",
  "execute_command",
  "process_output",
  "stop_process",
] as const;
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
    write_file: withPreview(createWriteFileTool(ctx), (args) => previewWrite(ctx, args)),
    edit_file: createEditFileTool(ctx),
    list_directory: createListDirectoryTool(ctx),
    find_files: createFindFilesTool(ctx),
    search_files: createSearchFilesTool(ctx),
    execute_command: createExecuteCommandTool(ctx),
    process_output: createProcessOutputTool(ctx),
    stop_process: createStopProcessTool(ctx),
  };
  for (const name of TOOL_NAMES) withRedaction(named[name], options.redact ?? []);
  const list: StructuredToolInterface[] = TOOL_NAMES.map((name) => named[name]);
  return Object.assign(list, named, { processes });
}
