import type { StructuredToolInterface } from "@langchain/core/tools";
import { guardTool } from "../guard/guard.js";
import { resultsGuard } from "../guard/results.js";
import { createProcessRegistry, type ProcessRegistry } from "../workspace/processes.js";
import { applyPatchTool, previewPatch } from "./apply-patch.js";
import { argumentsGuard } from "./arguments.js";
import { createToolContext, type ToolContext, type ToolOptions } from "./context.js";
import { editFileTool, previewEdit } from "./edit-file.js";
import { executeCommandTool } from "./execute-command.js";
import { findFilesTool } from "./find-files.js";
import { listDirectoryTool } from "./list-directory.js";
import { processOutputTool } from "./process-output.js";
import { readFileTool } from "./read-file.js";
import { searchFilesTool } from "./search-files.js";
import { stopProcessTool } from "./stop-process.js";
import { previewWrite, writeFileTool } from "./write-file.js";
import { writeTodosTool } from "./write-todos.js";

export type { ToolOptions, OutputChunk } from "./context.js";

/** Which file-editing tools the model is offered (issue 17): edit_file, apply_patch (V4A patches), or both. */
export const EDIT_TOOL_CHOICES = ["edit_file", "apply_patch", "both"] as const;
export type EditToolChoice = (typeof EDIT_TOOL_CHOICES)[number];

/**
 * Every built-in tool, in the order the model sees them: the one place a tool is added. Each is
 * made with LangChain's `tool()` and a zod schema in a file of its own, with its declaration
 * beside it (contracts/tools.ts); a refusal throws ToolFailure (guard/failure.ts), which the
 * results guard makes an error result.
 */
function builtInTools(ctx: ToolContext) {
  return {
    read_file: readFileTool(ctx),
    write_file: writeFileTool(ctx),
    apply_patch: applyPatchTool(ctx),
    edit_file: editFileTool(ctx),
    list_directory: listDirectoryTool(ctx),
    find_files: findFilesTool(ctx),
    search_files: searchFilesTool(ctx),
    execute_command: executeCommandTool(ctx),
    process_output: processOutputTool(ctx),
    stop_process: stopProcessTool(ctx),
    write_todos: writeTodosTool(),
  };
}

type BuiltInToolName = keyof ReturnType<typeof builtInTools>;

/** Every built-in tool's name, in the order the model sees them. */
const ALL_NAMES = Object.keys(builtInTools(createToolContext({ workspace: "" }, createProcessRegistry())));

/** The names a toolset offers for an edit-tool choice, in the order the model sees them. */
export function offeredToolNames(editTool: EditToolChoice = "edit_file"): string[] {
  const left = editTool === "edit_file" ? "apply_patch" : editTool === "apply_patch" ? "edit_file" : undefined;
  return ALL_NAMES.filter((n) => n !== left);
}

/** The tools offered by default (edit_file, not apply_patch). */
export const TOOL_NAMES: readonly string[] = offeredToolNames();

/** What a call would change, for the approval question (a diff), without changing anything. */
export type Preview = (args: Record<string, unknown>, conversation?: string) => Promise<string | undefined>;

/**
 * The toolset for one workspace: an array (what bindTools and both engines take) that also names
 * each tool, carries the previews of the tools that have one and the registry of processes it
 * left running.
 */
export type Toolset = StructuredToolInterface[] &
  Record<BuiltInToolName, StructuredToolInterface> & {
    readonly processes: ProcessRegistry;
    readonly previews: Readonly<Record<string, Preview>>;
  };

/** A preview that never throws and never shows arguments that do not fit. */
function previewOf<T>(
  tool: StructuredToolInterface,
  preview: (input: T, conversation?: string) => Promise<string | undefined>,
): Preview {
  return async (args, conversation) => {
    const parsed = (tool.schema as { safeParse(v: unknown): { success: boolean; data?: unknown } }).safeParse(args);
    if (!parsed.success) return undefined;
    return preview(parsed.data as T, conversation).catch(() => undefined);
  };
}

/**
 * A tool as a toolset holds it: every call's arguments checked (arguments.ts), every result shaped
 * the same way, refusals, secrets and size (guard/results.ts, `results`).
 */
export function inToolset(tool: StructuredToolInterface, results = resultsGuard()): StructuredToolInterface {
  return guardTool(tool, [argumentsGuard(tool), results]);
}

export function createTools(options: ToolOptions): Toolset {
  const processes = options.processes ?? createProcessRegistry();
  const ctx = createToolContext(options, processes);
  const results = resultsGuard(options.redact ?? []);
  const named = Object.fromEntries(
    Object.entries(builtInTools(ctx)).map(([name, tool]) => [
      name,
      inToolset(tool as StructuredToolInterface, results),
    ]),
  ) as Record<BuiltInToolName, StructuredToolInterface>;
  const previews: Record<string, Preview> = {
    write_file: previewOf(named.write_file, previewWrite.bind(null, ctx)),
    edit_file: previewOf(named.edit_file, previewEdit.bind(null, ctx)),
    apply_patch: previewOf(named.apply_patch, previewPatch.bind(null, ctx)),
  };
  // Every tool is built (tests and previews reach them by name); the list the model is bound to has the offered ones.
  const list = offeredToolNames(options.editTool).map((name) => named[name as BuiltInToolName]);
  return Object.assign(list, named, { processes, previews });
}
