import type { StructuredToolInterface } from "@langchain/core/tools";
import { createProcessRegistry, type ProcessRegistry } from "../workspace/processes.js";
import { createApplyPatchTool } from "./apply-patch.js";
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
import { createWriteTodosTool } from "./write-todos.js";
import { withToolErrors } from "./errors.js";

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
  "write_todos",
] as const;
export type ToolName = (typeof TOOL_NAMES)[number];

/** Which file-editing tools the model is offered (issue 17): edit_file, apply_patch (V4A patches), or both. */
export const EDIT_TOOL_CHOICES = ["edit_file", "apply_patch", "both"] as const;
export type EditToolChoice = (typeof EDIT_TOOL_CHOICES)[number];

/** The names a toolset offers for an edit-tool choice, in the order the model sees them. */
export function offeredToolNames(editTool: EditToolChoice = "edit_file"): string[] {
  if (editTool === "edit_file") return [...TOOL_NAMES];
  const names: string[] = TOOL_NAMES.filter((n) => editTool === "both" || n !== "edit_file");
  names.splice(names.indexOf("write_file") + 1, 0, "apply_patch");
  return names;
}

/**
 * The toolset for one workspace: an array (what bindTools, ToolNode and the loop take) that
 * also names each tool and carries the registry of processes it left running.
 */
export type Toolset = StructuredToolInterface[] &
  Record<ToolName | "apply_patch", StructuredToolInterface> & { readonly processes: ProcessRegistry };

export function createTools(options: ToolOptions): Toolset {
  const processes = options.processes ?? createProcessRegistry();
  const ctx = createToolContext(options, processes);
  const named: Record<ToolName | "apply_patch", StructuredToolInterface> = {
    read_file: createReadFileTool(ctx),
    write_file: withPreview(createWriteFileTool(ctx), (args) => previewWrite(ctx, args)),
    edit_file: createEditFileTool(ctx),
    apply_patch: createApplyPatchTool(ctx),
    list_directory: createListDirectoryTool(ctx),
    find_files: createFindFilesTool(ctx),
    search_files: createSearchFilesTool(ctx),
    execute_command: createExecuteCommandTool(ctx),
    process_output: createProcessOutputTool(ctx),
    stop_process: createStopProcessTool(ctx),
    write_todos: createWriteTodosTool(),
  };
  // Every tool's failures become results with status "error" in one place (tools/errors.ts).
  for (const name of Object.keys(named) as (keyof typeof named)[]) withToolErrors(named[name]);
  for (const name of Object.keys(named) as (keyof typeof named)[]) withRedaction(named[name], options.redact ?? []);
  // Every tool is built (tests and previews reach them by name); the list the model is bound to has the offered ones.
  const list: StructuredToolInterface[] = offeredToolNames(options.editTool).map((name) => named[name as ToolName]);
  return Object.assign(list, named, { processes });
}
