import { promises as fs } from "node:fs";
import { binaryKindFromExtension, detectBinary, sizeOverLimit } from "../workspace/files.js";
import { resolvePath, type Workspace } from "../workspace/paths.js";
import { openVerified, writeInWorkspace } from "../workspace/verified-open.js";
import type { ToolContext } from "./context.js";
import { fingerprintOf } from "./read-tracker.js";

/**
 * The checks every tool that changes part of a file makes before it computes anything
 * (edit_file, apply_patch): inside the workspace, a regular text file of a size we edit in
 * memory, valid UTF-8, read in this conversation and unchanged since.
 */

/** Files larger than this are not edited in memory; write_file or a command can still change them. */
export const MAX_EDIT_BYTES = 10 * 1024 * 1024;

export interface EditTarget {
  absolute: string;
  display: string;
  exists: boolean;
  /** The current text ("" for a missing file). */
  before: string;
}

export type TargetResult = { ok: true; target: EditTarget } | { ok: false; message: string };

const refuse = (message: string): TargetResult => ({ ok: false, message });

/**
 * Opens `userPath` for editing. A missing file is returned as empty (the caller decides whether
 * it may be created); an empty file needs no read first, since there is nothing to overwrite.
 */
export async function loadEditTarget(
  ctx: ToolContext,
  ws: Workspace,
  userPath: string,
  threadId: string | undefined,
  toolName: string,
): Promise<TargetResult> {
  const target = await resolvePath(ws, userPath, { refuseHardLinks: true });
  const display = target.display;
  if (!target.exists) return { ok: true, target: { absolute: target.absolute, display, exists: false, before: "" } };
  if (target.isDirectory) return refuse(`Error: ${display} is a directory; ${toolName} changes files.`);
  // Open first, then verify what was opened: a swapped folder cannot lead the read outside.
  const opened = await openVerified(ws, target.absolute, userPath, { refuseHardLinks: true });
  const { stat } = opened;
  let bytes: Buffer;
  try {
    if (!stat.isFile())
      return refuse(`Error: ${display} is not a regular file (a device, socket or pipe); it cannot be edited.`);
    if (stat.size > MAX_EDIT_BYTES) {
      const sizes = sizeOverLimit(stat.size, MAX_EDIT_BYTES);
      return refuse(
        `Error: ${display} is ${sizes.size}, larger than ${toolName} handles (${sizes.limit}). Use ${toolName === "apply_patch" ? "edit_file (it streams files up to 1 GB) or " : ""}a command (e.g. sed) instead.`,
      );
    }
    const binary = binaryKindFromExtension(target.absolute) ?? (await detectBinary(opened.path));
    if (binary) return refuse(`Error: ${display} is a binary file (${binary}); ${toolName} changes text only.`);
    bytes = await opened.handle.readFile();
  } finally {
    await opened.handle.close();
  }
  if (bytes.length > 0) {
    switch (ctx.reads.check(threadId, target.absolute, fingerprintOf(bytes, stat))) {
      case "unread":
        return refuse(
          `Error: ${display} has not been read in this conversation since mini-cursor started (what was read before a restart is not remembered). Read it with read_file first, then edit it.`,
        );
      case "changed":
        return refuse(
          `Error: ${display} has changed since you last read it (a command, a formatter or the user changed it). Read it again with read_file, then edit it.`,
        );
    }
  }
  const before = bytes.toString("utf8");
  if (!Buffer.from(before, "utf8").equals(bytes)) {
    return refuse(`Error: ${display} is not valid UTF-8 text; ${toolName} would corrupt it.`);
  }
  return { ok: true, target: { absolute: target.absolute, display, exists: true, before } };
}

/** Writes `text` atomically (creating parent folders for a new file) and counts it as read. */
export async function commitText(
  ctx: ToolContext,
  threadId: string | undefined,
  absolute: string,
  text: string,
): Promise<void> {
  const data = Buffer.from(text, "utf8");
  // The folder is opened and verified, and the temp file and rename go through it (no race).
  await writeInWorkspace(await ctx.workspace(), absolute, absolute, data);
  ctx.reads.record(threadId, absolute, fingerprintOf(data, await fs.stat(absolute)));
}
