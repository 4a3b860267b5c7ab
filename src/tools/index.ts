import type { StructuredToolInterface } from "@langchain/core/tools";
import { createProcessRegistry, type ProcessRegistry } from "../workspace/processes.js";
import { applyPatchTool } from "./apply-patch.js";
import { createToolContext, type ToolContext, type ToolOptions } from "./context.js";
import { createTool, type AgentTool, type ToolDefinition } from "./define.js";
import { editFileTool } from "./edit-file.js";
import { executeCommandTool } from "./execute-command.js";
import { findFilesTool } from "./find-files.js";
import { listDirectoryTool } from "./list-directory.js";
import { processOutputTool } from "./process-output.js";
import { readFileTool } from "./read-file.js";
import { searchFilesTool } from "./search-files.js";
import { stopProcessTool } from "./stop-process.js";
import { writeFileTool } from "./write-file.js";
import { writeTodosTool } from "./write-todos.js";

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
 * The toolset for one workspace: an array (what bindTools and both engines take) that
 * also names each tool and carries the registry of processes it left running.
 */
export type Toolset = StructuredToolInterface[] &
  Record<BuiltInToolName, AgentTool> & { readonly processes: ProcessRegistry };

type BuiltInToolName = ToolName | "apply_patch";

/**
 * Every built-in tool's definition: the one place a tool is added (then name it in TOOL_NAMES,
 * or in offeredToolNames when it is offered only on request).
 */
function builtInTools(ctx: ToolContext): Record<BuiltInToolName, ToolDefinition> {
  return {
    read_file: readFileTool(ctx),
    write_file: writeFileTool(ctx),
    edit_file: editFileTool(ctx),
    apply_patch: applyPatchTool(ctx),
    list_directory: listDirectoryTool(ctx),
    find_files: findFilesTool(ctx),
    search_files: searchFilesTool(ctx),
    execute_command: executeCommandTool(ctx),
    process_output: processOutputTool(ctx),
    stop_process: stopProcessTool(ctx),
    write_todos: writeTodosTool(),
  } as Record<BuiltInToolName, ToolDefinition>;
}

/** The built-in tools made once with a context they never use, for what they declare (kind, paths). */
let declared: Record<string, AgentTool> | undefined;

/**
 * A built-in tool by name, for its declaration only (never run): policy code judges calls with
 * it when it is given no toolset (a front end checking a saved answer, tests).
 */
export function builtInTool(name: string): AgentTool | undefined {
  declared ??= Object.fromEntries(
    Object.entries(builtInTools(createToolContext({ workspace: "" }, createProcessRegistry()))).map(([n, d]) => [
      n,
      createTool(d),
    ]),
  );
  return Object.hasOwn(declared, name) ? declared[name] : undefined;
}

/** Built-in tools that only read (kind "read"): no question, no snapshot, and they run in plan mode. */
export function readOnlyToolNames(): string[] {
  return offeredToolNames("both").filter((name) => builtInTool(name)?.definition.kind === "read");
}

export function createTools(options: ToolOptions): Toolset {
  const processes = options.processes ?? createProcessRegistry();
  const ctx = createToolContext(options, processes);
  const definitions = builtInTools(ctx);
  // One wrapper (tools/define.ts) owns every tool's errors, secrets, size limit and artifacts.
  const named = Object.fromEntries(
    Object.entries(definitions).map(([name, definition]) => [
      name,
      createTool(definition, { redact: options.redact ?? [] }),
    ]),
  ) as Record<BuiltInToolName, AgentTool>;
  // Every tool is built (tests and previews reach them by name); the list the model is bound to has the offered ones.
  const list: StructuredToolInterface[] = offeredToolNames(options.editTool).map(
    (name) => named[name as BuiltInToolName],
  );
  return Object.assign(list, named, { processes });
}
