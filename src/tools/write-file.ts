import { promises as fs } from "node:fs";
import { readRegularFile } from "../regular-file.js";
import { z } from "zod";
import { countTextLines, detectBinary } from "../workspace/files.js";
import { resolvePath, type Workspace } from "../workspace/paths.js";
import { writeInWorkspace } from "../workspace/verified-open.js";
import type { ToolContext } from "./context.js";
import { tool } from "@langchain/core/tools";
import { declared } from "../contracts/tools.js";
import { conversationOf, fingerprintFile, fingerprintOf } from "./read-tracker.js";
import { withPathLocks } from "./path-lock.js";
import { ToolFailure } from "../guard/failure.js";
import { WRITE_FILE_PEERS, withPeerArguments } from "./aliases.js";
import { unifiedDiff } from "./edit-file.js";
import { MAX_EDIT_BYTES } from "./edit-target.js";

/** The edit tool a refusal and the description point to: the one the toolset offers. */
function editToolOf(ctx: ToolContext): string {
  return ctx.options.editTool === "apply_patch" ? "apply_patch" : "edit_file";
}

const description = (
  editTool: string,
) => `Write a text file in the workspace, replacing the whole file. Paths are relative to the workspace root.
- Use it to create a file or to rewrite one completely. To change part of a file, use ${editTool} (it sends only the change).
- content is the complete new file: anything left out is gone.
- An existing file can only be replaced after you read it with read_file (or wrote it) in this conversation, and only if it has not changed since; otherwise the call is refused. New and empty files need no read.
- Missing parent directories are created.
- The write is atomic (a temporary file in the same directory, then a rename): a failed write never leaves a half-written file.
- A replaced file keeps its permissions.
- Directories and files with several hard links are refused.
Returns e.g. "Created src/App.tsx (42 lines, 1234 bytes)." or "Replaced ...".`;

const schemaObject = z.strictObject({
  filePath: z.string().describe("Path of the file to write, relative to the workspace root."),
  content: z.string().describe("The complete content of the file."),
});

/** Other agents' names (file_path, contents, ...) are accepted: aliases.ts. */
const schema = withPeerArguments(schemaObject, WRITE_FILE_PEERS);

type WriteFileInput = z.infer<typeof schemaObject>;

/**
 * Why replacing an existing file would overwrite content the model has not seen in this thread
 * (never read, or changed since it was read or written), or undefined. An empty file holds nothing to lose.
 */
async function unseenContent(ctx: ToolContext, threadId: string | undefined, absolute: string, display: string) {
  const current = await fingerprintFile(absolute);
  if (current.size === 0) return undefined;
  const editTool = editToolOf(ctx);
  switch (ctx.reads.check(threadId, absolute, current)) {
    case "unread":
      return `Error: ${display} already exists and has not been read in this conversation since mini-cursor started (what was read before a restart is not remembered), so write_file would replace content you have not seen. Read it with read_file first; to change part of it, use ${editTool}.`;
    case "changed":
      return `Error: ${display} has changed since you last read or wrote it (a command, a formatter or the user changed it), so write_file would overwrite those changes. Read it again with read_file first; to change part of it, use ${editTool}.`;
    default:
      return undefined;
  }
}

async function writeFile(ctx: ToolContext, input: WriteFileInput, threadId?: string): Promise<string> {
  const ws = await ctx.workspace();
  // Checked and written under the file's lock, so an edit of it in the same turn is either all before or all after.
  return withPathLocks(ws, [input.filePath], () => writeUnlocked(ctx, ws, input, threadId));
}

async function writeUnlocked(ctx: ToolContext, ws: Workspace, input: WriteFileInput, threadId?: string) {
  // resolvePath follows symlinks (also dangling ones in parents), so `absolute` and every
  // directory created above it are inside the workspace.
  const target = await resolvePath(ws, input.filePath, { refuseHardLinks: true });
  if (target.isDirectory) {
    throw new ToolFailure(`"${target.display}" is a directory; write_file writes files. Choose a file path inside it.`);
  }
  if (target.exists && !(await fs.stat(target.absolute)).isFile()) {
    throw new ToolFailure(
      `"${target.display}" is not a regular file (a device, socket or pipe); it cannot be written.`,
    );
  }
  const unseen = target.exists ? await unseenContent(ctx, threadId, target.absolute, target.display) : undefined;
  if (unseen) throw new ToolFailure(unseen);
  // The folder is opened and verified, and the temp file and rename go through it (no race).
  const result = await writeInWorkspace(ws, target.absolute, input.filePath, input.content);
  // The model knows what it just wrote, so edit_file may change it without reading it first.
  ctx.reads.record(threadId, target.absolute, fingerprintOf(input.content, await fs.stat(target.absolute)));
  const lines = countTextLines(input.content);
  return `${result.created ? "Created" : "Replaced"} ${target.display} (${lines} ${lines === 1 ? "line" : "lines"}, ${result.bytes} ${result.bytes === 1 ? "byte" : "bytes"}).`;
}

/** For the approval question: the diff against the file it replaces, or against nothing for a new file. */
export async function previewWrite(ctx: ToolContext, input: WriteFileInput): Promise<string | undefined> {
  const ws = await ctx.workspace();
  const target = await resolvePath(ws, input.filePath);
  if (target.isDirectory) return undefined;
  let before = "";
  if (target.exists) {
    const stat = await fs.stat(target.absolute);
    if (!stat.isFile() || stat.size > MAX_EDIT_BYTES || (await detectBinary(target.absolute))) {
      return `(replaces ${target.display}, which is not a text file that can be compared)`;
    }
    before = (await readRegularFile(target.absolute, { follow: true, maxBytes: MAX_EDIT_BYTES })).toString("utf8");
  }
  return unifiedDiff(target.display, before, input.content);
}

export function writeFileTool(ctx: ToolContext) {
  return declared(
    tool((input, config) => writeFile(ctx, input, conversationOf(config)), {
      name: "write_file",
      description: description(editToolOf(ctx)),
      schema,
    }),
    { kind: "edit", paths: { filePath: "path" } },
  );
}
