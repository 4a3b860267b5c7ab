import { promises as fs } from "node:fs";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { detectBinary } from "../workspace/files.js";
import { resolvePath } from "../workspace/paths.js";
import { FILE_PATH_ALIASES, renameAliases } from "./aliases.js";
import type { ToolContext } from "./context.js";
import { MAX_EDIT_BYTES, unifiedDiff } from "./edit-file.js";

/**
 * Previews for the approval prompt: what a call would change, computed without changing
 * anything (a unified diff for edit_file and write_file), so a person can judge it.
 */

/** Shows what a call would do; undefined when there is nothing useful to show. */
export type PreviewFn = (args: Record<string, unknown>, threadId?: string) => Promise<string | undefined>;

/** Attaches a preview to a tool (Gemini CLI's "describe before execute"). */
export function withPreview<T extends object>(tool: T, preview: PreviewFn): T & { preview: PreviewFn } {
  return Object.assign(tool, { preview });
}

/** The preview of a call, if its tool has one; never throws. */
export async function previewToolCall(
  tools: readonly StructuredToolInterface[],
  call: { name: string; args: Record<string, unknown> },
  threadId?: string,
): Promise<string | undefined> {
  const found = tools.find((t) => t.name === call.name) as (StructuredToolInterface & { preview?: PreviewFn }) | undefined;
  if (typeof found?.preview !== "function") return undefined;
  try {
    return await found.preview(call.args, threadId);
  } catch {
    return undefined;
  }
}

/** write_file: the diff against the file it replaces, or against nothing for a new file. */
export async function previewWrite(ctx: ToolContext, args: Record<string, unknown>): Promise<string | undefined> {
  const { filePath, content } = renameAliases(args, FILE_PATH_ALIASES) as Record<string, unknown>;
  if (typeof filePath !== "string" || typeof content !== "string") return undefined;
  const ws = await ctx.workspace();
  const target = await resolvePath(ws, filePath);
  if (target.isDirectory) return undefined;
  let before = "";
  if (target.exists) {
    const stat = await fs.stat(target.absolute);
    if (!stat.isFile() || stat.size > MAX_EDIT_BYTES || (await detectBinary(target.absolute))) {
      return `(replaces ${target.display}, which is not a text file that can be compared)`;
    }
    before = await fs.readFile(target.absolute, "utf8");
  }
  return unifiedDiff(target.display, before, content);
}

/** The diff a tool attached to its result (edit_file), for the trace; undefined otherwise. */
export function resultDiff(message: { artifact?: unknown }): string | undefined {
  const diff = (message.artifact as { diff?: unknown } | undefined)?.diff;
  return typeof diff === "string" && diff !== "" ? diff : undefined;
}
