import { FILE_PATH_ALIASES, renameAliases } from "../tools/aliases.js";
import { patchPaths } from "../workspace/patch-parse.js";

/**
 * The files a file-changing call names, as the tool itself will read its arguments: filePath or
 * one of its aliases (file_path, path, ...), or every path of an apply_patch patch.
 */
export function editedPaths(call: { name: string; args: Record<string, unknown> }): string[] {
  if (call.name === "apply_patch") {
    const patch = call.args.input ?? call.args.patch ?? call.args.diff;
    return typeof patch === "string" ? patchPaths(patch) : [];
  }
  const { filePath } = renameAliases(call.args, FILE_PATH_ALIASES) as Record<string, unknown>;
  return typeof filePath === "string" && filePath !== "" ? [filePath] : [];
}
